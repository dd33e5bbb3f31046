package similarity

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	udifflcs "github.com/aymanbagabas/go-udiff/lcs"
)

// exactMyers returns the LCS length of a and b by Myers' algorithm alone,
// unbounded: the reference the bit-parallel length must agree with.
func exactMyers(a, b []uint32) int {
	pre, suf := commonAffixes(a, b)
	a2, b2 := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(a2) == 0 || len(b2) == 0 {
		return pre + suf
	}
	s := lcsPool.Get().(*lcsScratch)
	defer lcsPool.Put(s)
	d, ok := s.myers(a2, b2, len(a2)+len(b2), false)
	if !ok {
		panic("unbounded Myers did not finish")
	}
	return pre + suf + (len(a2)+len(b2)-d)/2
}

func TestLCSLengthAgainstDP(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 300 {
		// Lengths across word boundaries (64, 128, ...) and alphabets from
		// binary (long common subsequences) to nearly distinct tokens.
		n, m := r.IntN(300), r.IntN(300)
		k := []int{2, 4, 16, 1000}[i%4]
		a := lcsRandSeq(r, n, k)
		b := lcsRandSeq(r, m, k)
		if i%3 == 1 {
			b = lcsMutate(r, a, 0.3, k)
		}
		want := lcsDP(a, b)
		if got := LCSLength(a, b); got != want {
			t.Fatalf("LCSLength(%d tokens, %d tokens, alphabet %d) = %d, want %d", n, len(b), k, got, want)
		}
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		s := new(lcsScratch)
		if got := s.bitLength(a, b); got != want {
			t.Fatalf("bitLength without affixes stripped = %d, want %d", got, want)
		}
		checkRuns(t, a, b, s.bitRuns(nil, a, b, 0), want)
	}
}

func TestLCSLengthAgainstMyersRealText(t *testing.T) {
	gpl := lcsReadWords(t, "gpl-3.txt", 5000)
	apache := lcsReadWords(t, "apache-2.0.txt", 1500)
	r := rand.New(rand.NewPCG(13, 14))
	for _, rate := range []float64{0, 0.01, 0.05, 0.2, 0.5, 1} {
		for _, n := range []int{70, 1300, 5000} {
			a := lcsHash(gpl[:n])
			b := lcsHash(lcsEditWords(r, gpl[:n], rate, apache))
			want := exactMyers(a, b)
			if got := LCSLength(a, b); got != want {
				t.Errorf("LCSLength(%d words, edit rate %.2f) = %d, exact Myers %d", n, rate, got, want)
			}
			if got, ok := LCS(a, b, -1); !ok || got != want {
				t.Errorf("LCS(%d words, edit rate %.2f, -1) = %d, %v, want %d, true", n, rate, got, ok, want)
			}
			runs, ok := AppendRuns(nil, a, b, -1)
			if !ok {
				t.Fatalf("AppendRuns(%d words, edit rate %.2f, -1) not ok", n, rate)
			}
			checkRuns(t, a, b, runs, want)
			// The bounded search: exact within the bound, an upper bound
			// beyond it.
			d := len(a) + len(b) - 2*want
			for _, maxD := range []int{0, d / 3, d - 1, d, d + 1} {
				if maxD < 0 {
					continue // no bound
				}
				got, ok := LCS(a, b, maxD)
				if ok != (d <= maxD) || (ok && got != want) || got < want {
					t.Errorf("LCS(%d words, edit rate %.2f, maxD %d) = %d, %v; exact %d (D = %d)", n, rate, maxD, got, ok, want, d)
				}
			}
		}
	}
	// Unrelated texts of different lengths.
	a, b := lcsHash(gpl[:3000]), lcsHash(apache[:1400])
	if got, want := LCSLength(a, b), exactMyers(a, b); got != want {
		t.Errorf("LCSLength(gpl, apache) = %d, exact Myers %d", got, want)
	}
}

// TestAlignmentPathsAgree checks that the alignment from the bit-parallel
// rows and the one from Myers' trace give the same central part and
// divergence on real near-duplicates: both take matches as early as
// possible.
func TestAlignmentPathsAgree(t *testing.T) {
	gpl := lcsReadWords(t, "gpl-3.txt", 3000)
	apache := lcsReadWords(t, "apache-2.0.txt", 1500)
	r := rand.New(rand.NewPCG(15, 16))
	for _, rate := range []float64{0.02, 0.1, 0.3} {
		a := lcsHash(gpl)
		b := lcsHash(lcsEditWords(r, gpl, rate, apache))
		pre, suf := commonAffixes(a, b)
		a2, b2 := a[pre:len(a)-suf], b[pre:len(b)-suf]
		s := new(lcsScratch)
		d, _ := s.myers(a2, b2, len(a2)+len(b2), true)
		myersRuns := s.backtrack(nil, len(a2), len(b2), d, 0)
		bitRuns := s.bitRuns(nil, a2, b2, 0)
		cm := new(lcsScratch).central(myersRuns, len(a2), len(b2), CentralOptions{})
		cb := new(lcsScratch).central(bitRuns, len(a2), len(b2), CentralOptions{})
		if cm.LCS != cb.LCS || math.Abs(cm.CentralRatio-cb.CentralRatio) > 0.01 || math.Abs(cm.Divergence-cb.Divergence) > 0.05 {
			t.Errorf("edit rate %.2f: Myers alignment %+v, bit-parallel alignment %+v", rate, cm, cb)
		}
	}
}

func TestCompareLengthOnly(t *testing.T) {
	gpl := lcsReadWords(t, "gpl-3.txt", 1500)
	apache := lcsReadWords(t, "apache-2.0.txt", 1500)
	r := rand.New(rand.NewPCG(17, 18))
	near := &Signature{Seq: lcsHash(gpl)}
	edited := &Signature{Seq: lcsHash(lcsEditWords(r, gpl, 0.1, apache))}
	other := &Signature{Seq: lcsHash(apache)}

	full := Compare(near, edited, CompareOptions{LCS: true})
	short := Compare(near, edited, CompareOptions{LCS: true, LengthOnly: true})
	if !short.HasLCS || short.LCSCut || short.LCS != full.LCS {
		t.Errorf("LengthOnly near-duplicate: LCS %v cut %v, want %v uncut", short.LCS, short.LCSCut, full.LCS)
	}
	for name, v := range map[string]float64{"Central": short.Central, "CoverageA": short.CoverageA, "CoverageB": short.CoverageB, "Divergence": short.Divergence} {
		if !math.IsNaN(v) {
			t.Errorf("LengthOnly: %s = %v, want NaN", name, v)
		}
	}
	if math.IsNaN(full.Central) || math.IsNaN(full.Divergence) {
		t.Errorf("without LengthOnly: Central %v, Divergence %v, want numbers", full.Central, full.Divergence)
	}

	exact := Ratio(LCSLength(near.Seq, other.Seq), len(near.Seq), len(other.Seq))
	cut := Compare(near, other, CompareOptions{LCS: true, LengthOnly: true, MinRatio: 0.7})
	if !cut.LCSCut || cut.LCS < exact {
		t.Errorf("LengthOnly unrelated, MinRatio 0.7: LCS %v cut %v, want cut with an upper bound of %v", cut.LCS, cut.LCSCut, exact)
	}
	all := Compare(near, other, CompareOptions{LCS: true, LengthOnly: true})
	if all.LCSCut || all.LCS != exact {
		t.Errorf("LengthOnly unrelated, no MinRatio: LCS %v cut %v, want %v uncut", all.LCS, all.LCSCut, exact)
	}
}

// wordsUpTo returns how many of words' first words make size bytes of
// text (each word and a space), and those bytes.
func wordsUpTo(words []string, size int) (n, bytes int) {
	for _, w := range words {
		if bytes >= size {
			break
		}
		bytes += len(w) + 1
		n++
	}
	return n, bytes
}

// lcsAllWords returns every word of the named testdata files, in order.
func lcsAllWords(tb testing.TB, names ...string) []string {
	var ws []string
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			tb.Fatal(err)
		}
		ws = append(ws, lcsWords(string(data))...)
	}
	return ws
}

// lcsBenchPair returns the words of two pages of about size bytes of real
// text: the second a near-duplicate of the first (3 % of the words
// edited) or an unrelated text.
func lcsBenchPair(tb testing.TB, size int, near bool) (a, b []string, bytes int) {
	src := lcsAllWords(tb, "gpl-3.txt", "gpl-2.txt", "lgpl-2.1.txt")
	other := lcsAllWords(tb, "apache-2.0.txt", "gfdl-1.3.txt", "mpl-2.0.txt", "gnupg-help.de.txt", "gnupg-help.fr.txt", "gnupg-help.ru.txt")
	words, bytes := wordsUpTo(src, size)
	if words > len(other) {
		tb.Fatalf("%d words of unrelated text, want %d", len(other), words)
	}
	ws := src[:words]
	if near {
		r := rand.New(rand.NewPCG(9, 10))
		return ws, lcsEditWords(r, ws, 0.03, other), bytes
	}
	return ws, other[:words], bytes
}

// BenchmarkLCS measures one pair of pages of 8 and 64 KB, near-duplicates
// (3 % of the words edited) and unrelated texts, on one core, by each
// way of computing their LCS:
//
//   - bounded: [LCS] with the edit distance bounded by the default
//     verification's ratio (DefaultVerifyLCS), what [Compare] runs first;
//   - reaches: [LCSReaches] with the length of that ratio, the
//     verification's question "does the ratio reach the threshold?"
//     answered with a proof; its ratio metric is the bound that proves
//     it, that of a common subsequence found when reached, else an
//     upper bound;
//   - length: [LCSLength], the exact bit-parallel length;
//   - central: [CentralLCS] with the same bound, the alignment, central
//     part and divergence (the default verification's scores);
//   - myers: the exact unbounded Myers algorithm the verification used
//     before the bit-parallel length (O((N+M)·D));
//   - udiff: go-udiff's LCS of the two word sequences (lcs.DiffLines,
//     its search bounded, so not always a longest one).
//
// Bytes are those of one page. The ratio metric is the LCS ratio of each
// answer: go-udiff's gives up after 100 edits and reports 0.130 for the
// 64 KB near-duplicates whose exact ratio is 0.959.
func BenchmarkLCS(b *testing.B) {
	for _, size := range []int{8 << 10, 64 << 10} {
		for _, near := range []bool{true, false} {
			wa, wb, n := lcsBenchPair(b, size, near)
			x, y := lcsHash(wa), lcsHash(wb)
			maxD := MaxDForRatio(len(x), len(y), DefaultVerifyLCS)
			kind := "dissimilar"
			if near {
				kind = "near"
			}
			name := fmt.Sprintf("%dKB-%s/", size>>10, kind)
			// Each reports the LCS ratio its answer gives (a bound when
			// cut), so that speed is read with the answer it bought.
			run := func(impl string, ratio func() float64, f func()) {
				b.Run(name+impl, func(b *testing.B) {
					b.SetBytes(int64(n))
					b.ReportAllocs()
					for b.Loop() {
						f()
					}
					b.ReportMetric(ratio(), "ratio")
				})
			}
			lr := func(l int) float64 { return Ratio(l, len(x), len(y)) }
			run("bounded", func() float64 { l, _ := LCS(x, y, maxD); return lr(l) }, func() { LCS(x, y, maxD) })
			need := NeedForRatio(len(x), len(y), DefaultVerifyLCS)
			run("reaches", func() float64 {
				lo, hi, ok := LCSReaches(x, y, need)
				if ok {
					return lr(lo)
				}
				return lr(hi)
			}, func() { LCSReaches(x, y, need) })
			run("length", func() float64 { return lr(LCSLength(x, y)) }, func() { LCSLength(x, y) })
			run("central", func() float64 { c, _ := CentralLCS(x, y, maxD, CentralOptions{}); return c.Ratio }, func() { CentralLCS(x, y, maxD, CentralOptions{}) })
			run("myers", func() float64 { return lr(exactMyers(x, y)) }, func() { exactMyers(x, y) })
			run("udiff", func() float64 { return lr(len(x) - udiffDeleted(wa, wb)) }, func() { udifflcs.DiffLines(wa, wb) })
		}
	}
}

// udiffDeleted returns the number of tokens of a that go-udiff's diff of a
// and b deletes: len(a) minus it is the length of its common subsequence.
func udiffDeleted(a, b []string) int {
	n := 0
	for _, d := range udifflcs.DiffLines(a, b) {
		n += d.End - d.Start
	}
	return n
}

// stepOverEvery is the bit-parallel step of one token over every word of
// the row v: V = (V + (V & PM)) | (V &^ PM), with the old value of each
// word it changes, in order, and the carry out of the top word. The
// steps that skip words must agree with it.
func stepOverEvery(v, pm []uint64) (log []undo, carry uint64) {
	for k, x := range v {
		p := pm[k]
		var sum uint64
		sum, carry = bits.Add64(x, x&p, carry)
		if y := sum | (x &^ p); y != x {
			log = append(log, undo{int32(k), x})
			v[k] = y
		}
	}
	return log, carry
}

// stepCases returns rows and masks of every kind a search meets: rows all
// ones as they start (every third), zeros where matched, mixed; masks
// sparse and full, so that carries run through words of all ones.
func stepCases(seed uint64) (rows, masks [][]uint64) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	word := func(kind int) uint64 {
		switch kind {
		case 0:
			return ^uint64(0)
		case 1:
			return 0
		case 2:
			return ^uint64(0) &^ (1 << r.IntN(64))
		}
		return r.Uint64()
	}
	for i := range 3000 {
		w := 1 + r.IntN(40)
		v, pm := make([]uint64, w), make([]uint64, w)
		for k := range v {
			v[k] = word(r.IntN(4) * (i % 3))
			switch r.IntN(4) {
			case 0:
				pm[k] = 1 << r.IntN(64)
			case 1:
				pm[k] = r.Uint64() & r.Uint64()
			}
		}
		rows, masks = append(rows, v), append(masks, pm)
	}
	return rows, masks
}

// TestDenseStepLogged checks the logged dense step, which skips the words
// it leaves as they are, against the step over every word: the same row,
// carry and log.
func TestDenseStepLogged(t *testing.T) {
	rows, masks := stepCases(61)
	var s lcsScratch
	for i, v := range rows {
		want := slices.Clone(v)
		wantLog, wantCarry := stepOverEvery(want, masks[i])
		s.log = s.log[:0]
		carry := s.denseStep(v, masks[i], true)
		if carry != wantCarry || !slices.Equal(v, want) || !slices.Equal(s.log, wantLog) {
			t.Fatalf("case %d: carry %d, row %x, log %v\nwant carry %d, row %x, log %v", i, carry, v, s.log, wantCarry, want, wantLog)
		}
	}
}

// TestSparseStep checks the sparse step, whose carry skips the words of
// all ones above the mask's words ([lcsScratch.ripple]), against the step
// over every word, logged and not.
func TestSparseStep(t *testing.T) {
	rows, masks := stepCases(63)
	var s lcsScratch
	for i, v := range rows {
		var ks []int32
		var ps []uint64
		for k, p := range masks[i] {
			if p != 0 {
				ks, ps = append(ks, int32(k)), append(ps, p)
			}
		}
		want := slices.Clone(v)
		wantLog, wantCarry := stepOverEvery(want, masks[i])
		for _, log := range []bool{false, true} {
			got := slices.Clone(v)
			s.log = s.log[:0]
			carry := s.step(got, ks, ps, log)
			logOK := slices.Equal(s.log, wantLog) || !log && len(s.log) == 0
			if carry != wantCarry || !slices.Equal(got, want) || !logOK {
				t.Fatalf("case %d (log %v): carry %d, row %x, log %v\nwant carry %d, row %x, log %v", i, log, carry, got, s.log, wantCarry, want, wantLog)
			}
		}
	}
}
