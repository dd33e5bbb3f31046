package similarity

import (
	"math"
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
