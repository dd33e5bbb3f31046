package similarity

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// decideAfterPairs returns pairs of real text that reach every way a
// verdict's alignment ends: short near-duplicates (Myers' alignment),
// long copies with a tenth of the words edited (an edit distance over
// [myersCap]: the bit-parallel alignment), looser copies whose group
// alignment exits early, and unrelated texts that fail the candidate
// test.
func decideAfterPairs(tb testing.TB) [][2]*Signature {
	words := lcsAllWords(tb, "gpl-3.txt", "gpl-2.txt", "lgpl-2.1.txt", "gfdl-1.3.txt", "mpl-2.0.txt", "apache-2.0.txt")
	r := rand.New(rand.NewPCG(41, 42))
	sign := func(ws []string) *Signature {
		s := Sign(Input{Text: []byte(strings.Join(ws, " ")), Tokens: ws}, Options{})
		return &s
	}
	var pairs [][2]*Signature
	for _, size := range []int{300, 3000} {
		for w := 0; w+size <= len(words); w += 3 * size {
			base := words[w : w+size]
			a := sign(base)
			for _, rate := range []float64{0.02, 0.1, 0.3} {
				pairs = append(pairs, [2]*Signature{a, sign(lcsEditWords(r, base, rate, words))})
			}
			// Two thirds of the page, then other text: a candidate whose
			// group alignment stops at its bound, which the exact
			// alignment of the remove decision passes.
			half := append(slices.Clip(base[:2*size/3]), words[(w+size+len(words)/3)%(len(words)-size):][:size/3]...)
			pairs = append(pairs, [2]*Signature{a, sign(half)})
			o := (w + len(words)/2) % (len(words) - size) // another text
			pairs = append(pairs, [2]*Signature{a, sign(words[o : o+size])})
		}
	}
	return pairs
}

// verdictText is every field of v, NaNs included, for comparison.
func verdictText(v Verdict) string { return fmt.Sprintf("%+v", v) }

// TestDecideAfter checks that the remove decision given the group
// verdict of the same pair decides as it does alone, bit for bit, in
// either order of the pair, and so does the group decision given the
// remove verdict (whose exact alignment may run past the group's bound),
// and that the remove decision takes the group's finished alignments: a
// prior whose LCS scores are altered shows in the verdict exactly when
// its alignment ran to its end under the same options.
func TestDecideAfter(t *testing.T) {
	group := Decision{Purpose: PurposeGroup}
	remove := Decision{Purpose: PurposeRemove, Exact: true}
	var reused, bitParallel, bounded int
	for i, p := range decideAfterPairs(t) {
		for _, ab := range [][2]*Signature{p, {p[1], p[0]}} {
			a, b := ab[0], ab[1]
			g := group.Decide(a, b)
			want := remove.Decide(a, b)
			if got := remove.DecideAfter(a, b, &g); verdictText(got) != verdictText(want) {
				t.Fatalf("pair %d: after the group verdict %s\ngot  %s\nwant %s", i, verdictText(g), verdictText(got), verdictText(want))
			}
			if got := remove.DecideAfter(a, b, &want); verdictText(got) != verdictText(want) {
				t.Fatalf("pair %d: after its own verdict\ngot  %s\nwant %s", i, verdictText(got), verdictText(want))
			}
			if rev := group.Decide(b, a); verdictText(remove.DecideAfter(a, b, &rev)) != verdictText(want) {
				t.Fatalf("pair %d: after the reversed pair's verdict, the verdict changed", i)
			}
			if g2 := group.DecideAfter(a, b, &want); verdictText(g2) != verdictText(g) {
				t.Fatalf("pair %d: group after the remove verdict\ngot  %s\nwant %s", i, verdictText(g2), verdictText(g))
			}
			if want.Aligned.Done && g.Scores.LCSCut {
				bounded++ // the remove alignment finished where the group's bound stops
			}
			if want.Step != StepVerify || !want.Aligned.Done {
				continue
			}
			// An altered prior shows exactly when its alignment is taken.
			altered := g
			altered.Scores.Divergence = 0.5
			got := remove.DecideAfter(a, b, &altered)
			taken := got.Scores.Divergence == 0.5
			if taken != g.Aligned.Done {
				t.Fatalf("pair %d: prior alignment done %v, taken %v", i, g.Aligned.Done, taken)
			}
			if taken {
				reused++
				if min(len(a.Seq), len(b.Seq)) > 2000 && len(a.Seq)+len(b.Seq)-2*lcsLen(a.Seq, b.Seq) > myersCap(len(a.Seq), len(b.Seq)) {
					bitParallel++
				}
			}
			other := altered
			other.Aligned.Central.Window = DefaultWindow + 1
			if got := remove.DecideAfter(a, b, &other); verdictText(got) != verdictText(want) {
				t.Fatalf("pair %d: a prior aligned under other options was taken", i)
			}
		}
	}
	if reused == 0 || bitParallel == 0 || bounded == 0 {
		t.Fatalf("%d alignments reused, %d of them bit-parallel, %d finished past the group's bound: want each", reused, bitParallel, bounded)
	}
}

// lcsLen is the LCS length of a and b.
func lcsLen(a, b []uint32) int {
	l, _ := LCS(a, b, -1)
	return l
}
