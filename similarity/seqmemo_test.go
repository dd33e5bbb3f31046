package similarity

import (
	"math"
	"testing"
)

// TestSeqAlignments checks that a pair of other signatures with the same
// word sequences and token counts as a pair decided before gets Decide's
// verdict, bit for bit, in either order; that it takes the kept alignment
// exactly when that ran to its end (a kept alignment with its divergence
// altered shows in the verdict then, and only then); and that a
// signature with the same sequence but another token count (a page cut
// at the sequence cap, whose whole-page ratio differs) takes nothing.
func TestSeqAlignments(t *testing.T) {
	d := Decision{Purpose: PurposeGroup}
	// other returns a signature with s's texts and another simhash, as
	// a page under another URL or title has: the pair's simhash distance
	// differs when one side changes.
	other := func(s *Signature, flip uint64) *Signature {
		o := *s
		o.Simhash ^= flip
		return &o
	}
	var reused, refused int
	for i, p := range decideAfterPairs(t) {
		for _, ab := range [][2]*Signature{p, {p[1], p[0]}} {
			a, b := ab[0], ab[1]
			a2, b2 := other(a, 0b1011), other(b, 0)
			longer := *a2
			longer.Tokens += 100 // the same sequence, cut from a longer page
			sigs := []*Signature{a, b, a2, b2, &longer}
			m := matcher{d: &d, sigs: sigs, seqs: newSeqAlignments(sigs)}
			first := m.decide(0, 1)
			if got, want := verdictText(first), verdictText(d.Decide(a, b)); got != want {
				t.Fatalf("pair %d: first verdict\ngot  %s\nwant %s", i, got, want)
			}
			want := d.Decide(a2, b2)
			if got := m.decide(2, 3); verdictText(got) != verdictText(want) {
				t.Fatalf("pair %d: same texts\ngot  %s\nwant %s", i, verdictText(got), verdictText(want))
			}
			// Alter the kept alignment: only a verdict that takes it shows it.
			k, _ := m.seqs.key(0, 1)
			e, kept := m.seqs.kept[k]
			if !kept {
				if first.Aligned.Done {
					t.Fatalf("pair %d: a finished alignment was not kept", i)
				}
				continue
			}
			e.scores.Divergence = 0.123456
			m.seqs.kept[k] = e
			m.verdicts = nil
			got := m.decide(2, 3)
			if took := got.Scores.Divergence == 0.123456; took != (want.Step == StepVerify && want.Aligned.Done) {
				t.Fatalf("pair %d: took the kept alignment %v, verdict's alignment finished %v", i, took, want.Aligned.Done)
			} else if took {
				reused++
			}
			if got := m.decide(4, 3); got.Scores.Divergence == 0.123456 {
				t.Fatalf("pair %d: a signature with another token count took the kept alignment", i)
			} else if !math.IsNaN(got.Scores.Divergence) {
				refused++
			}
		}
	}
	if reused == 0 || refused == 0 {
		t.Fatalf("no pair took a kept alignment (%d) or refused one (%d): the test checks nothing", reused, refused)
	}
	t.Logf("%d verdicts took a kept alignment, %d of another token count did not", reused, refused)
}

// TestSeqAlignmentsUnshared: alignments are kept only for pairs with a
// side whose texts another signature has; with no text shared there is
// no memory at all.
func TestSeqAlignmentsUnshared(t *testing.T) {
	p := decideAfterPairs(t)[0]
	a, b := p[0], p[1]
	if newSeqAlignments([]*Signature{a, b, nil}) != nil {
		t.Fatal("a memory for signatures of distinct texts")
	}
	a2 := *a
	a2.Simhash ^= 1
	longer := *b
	longer.Tokens += 100 // b's sequence, another token count: another text
	sa := newSeqAlignments([]*Signature{a, b, &a2, &longer})
	if sa == nil {
		t.Fatal("no memory for two signatures of one text")
	}
	for _, c := range []struct {
		i, j   int
		shared bool
	}{{0, 1, true}, {1, 2, true}, {1, 3, false}, {3, 1, false}} {
		if _, shared := sa.key(c.i, c.j); shared != c.shared {
			t.Errorf("pair (%d, %d): shared %v, want %v", c.i, c.j, shared, c.shared)
		}
	}
	v := Verdict{Aligned: Alignment{Done: true}}
	sa.keep(1, 3, &v)
	if len(sa.kept) != 0 {
		t.Errorf("an alignment of two unshared texts was kept")
	}
	sa.keep(0, 1, &v)
	if len(sa.kept) != 1 {
		t.Errorf("%d alignments kept of a pair with a shared text, want 1", len(sa.kept))
	}
}
