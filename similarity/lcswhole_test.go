package similarity

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWholePages checks the whole-page estimate of the LCS ratio for
// pages longer than their sequences, and that the search's cut-off on the
// sequences is the estimate's.
func TestWholePages(t *testing.T) {
	seq := func(n int) []uint32 {
		s := make([]uint32, n)
		for i := range s {
			s[i] = uint32(i + 1)
		}
		return s
	}
	// Same first 8,192 words, 8,969 and 11,059 words in all (the copycat pair).
	a := &Signature{Seq: seq(8192), Tokens: 8969}
	b := &Signature{Seq: seq(8192), Tokens: 11059}
	s := Compare(a, b, CompareOptions{LCS: true})
	if want := 8969.0 / 11059; math.Abs(s.LCS-want) > 1e-9 {
		t.Errorf("shared beginning, lengths 8969 and 11059: LCS %v, want %v", s.LCS, want)
	}
	// Equal lengths keep the beginnings' ratio.
	c := &Signature{Seq: seq(8192), Tokens: 20000}
	d := &Signature{Seq: append(seq(8000), make([]uint32, 192)...), Tokens: 20000}
	s = Compare(c, d, CompareOptions{LCS: true})
	if want := Ratio(8000, 8192, 8192); math.Abs(s.LCS-want) > 1e-3 {
		t.Errorf("equal lengths: LCS %v, want the sequences' %v", s.LCS, want)
	}
	// Sequences that hold their whole pages are unchanged.
	e := &Signature{Seq: seq(500), Tokens: 500}
	f := &Signature{Seq: append(seq(400), make([]uint32, 50)...), Tokens: 450}
	if s = Compare(e, f, CompareOptions{LCS: true}); s.LCS != Ratio(400, 500, 450) {
		t.Errorf("uncut: LCS %v, want %v", s.LCS, Ratio(400, 500, 450))
	}
	// The cut-off: a MinRatio just under the estimate is reached, one just
	// over it is not, and the cut pair's ratio stays below MinRatio.
	full := Compare(a, b, CompareOptions{LCS: true}).LCS
	for _, tc := range []struct {
		min float64
		cut bool
	}{{full - 0.01, false}, {full + 0.01, true}} {
		s := Compare(a, b, CompareOptions{LCS: true, MinRatio: tc.min})
		if s.LCSCut != tc.cut || tc.cut && s.LCS >= tc.min || !tc.cut && math.Abs(s.LCS-full) > 1e-9 {
			t.Errorf("MinRatio %.4f: LCS %v cut %v, want cut %v (uncut %v)", tc.min, s.LCS, s.LCSCut, tc.cut, full)
		}
	}
}

// TestWholePagesCutNeverLosesAPair checks the translated cut-off on
// random pairs of pages longer than their sequences: a pair is cut at a
// whole-page MinRatio t only when its uncut estimate is under t, and an
// uncut pair gets the estimate it gets without MinRatio.
func TestWholePagesCutNeverLosesAPair(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	cuts, truncated := 0, 0
	for trial := range 2000 {
		n, m := 20+r.IntN(200), 20+r.IntN(200)
		a, b := make([]uint32, n), make([]uint32, m)
		alphabet := 2 + r.IntN(50)
		for i := range a {
			a[i] = uint32(r.IntN(alphabet))
		}
		for i := range b {
			if i < n && r.IntN(4) > 0 {
				b[i] = a[i] // mostly a copy
			} else {
				b[i] = uint32(r.IntN(alphabet))
			}
		}
		sa := &Signature{Seq: a, Tokens: n + r.IntN(3)*r.IntN(300)}
		sb := &Signature{Seq: b, Tokens: m + r.IntN(3)*r.IntN(300)}
		if sa.Tokens > n || sb.Tokens > m {
			truncated++
		}
		free := Compare(sa, sb, CompareOptions{LCS: true, LengthOnly: trial%2 == 0})
		for _, th := range []float64{0.2, 0.5, free.LCS - 1e-9, free.LCS + 1e-9, 0.8, 0.95} {
			if th <= 0 || th > 1 {
				continue
			}
			s := Compare(sa, sb, CompareOptions{LCS: true, MinRatio: th, LengthOnly: trial%2 == 0})
			if s.LCSCut {
				cuts++
			}
			switch {
			case s.LCSCut && free.LCS >= th:
				t.Fatalf("trial %d (n %d/%d, m %d/%d): cut at %v, but the uncut estimate %v reaches it", trial, n, sa.Tokens, m, sb.Tokens, th, free.LCS)
			case s.LCSCut && s.LCS >= th:
				t.Fatalf("trial %d: cut at %v with a reported ratio %v at or above it", trial, th, s.LCS)
			case !s.LCSCut && math.Abs(s.LCS-free.LCS) > 1e-9:
				t.Fatalf("trial %d: uncut at %v: ratio %v, without MinRatio %v", trial, th, s.LCS, free.LCS)
			}
		}
	}
	if cuts < 100 || truncated < 500 {
		t.Errorf("%d cuts over %d truncated pairs: the test does not exercise the cut-off", cuts, truncated)
	}
}
