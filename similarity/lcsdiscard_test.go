package similarity

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// lcsWithAbsent returns a pair of sequences over an alphabet of k
// symbols, the second a mutation of the first, where each sequence also
// has about rate of its positions taken by tokens of its own (above k,
// absent from the other), so that the LCS length search drops them.
func lcsWithAbsent(r *rand.Rand, n, k int, rate float64) (a, b []uint32) {
	a = lcsRandSeq(r, n, k)
	b = lcsMutate(r, a, 0.1, k)
	own := func(s []uint32, base uint32) []uint32 {
		out := make([]uint32, 0, len(s)+len(s)/4)
		for _, x := range s {
			if r.Float64() < rate {
				out = append(out, base+uint32(r.IntN(1000)))
			}
			out = append(out, x)
		}
		return out
	}
	return own(a, 1<<20), own(b, 1<<21)
}

func TestLCSDropsAbsentTokens(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	dropped := 0
	for i := range 400 {
		k := []int{2, 4, 16, 1000}[i%4]
		a, b := lcsWithAbsent(r, 20+r.IntN(400), k, []float64{0.02, 0.1, 0.4}[i%3])
		want := lcsDP(a, b)
		d := len(a) + len(b) - 2*want
		for _, maxD := range []int{-1, d, d - 1, d / 2} {
			s := new(lcsScratch)
			got, ok := s.bounded(a, b, maxD)
			lim := maxD
			if lim < 0 {
				lim = len(a) + len(b)
			}
			if ok != (d <= lim) || (ok && got != want) || got < want {
				t.Fatalf("pair %d (alphabet %d): LCS(%d, %d tokens, %d) = %d, %v; exact %d (D = %d)", i, k, len(a), len(b), maxD, got, ok, want, d)
			}
			if len(s.keptA)+len(s.keptB) > 0 {
				dropped++
			}
		}
	}
	// Each pair has absent tokens, most enough to be dropped: the test
	// covers the dropping search, not only the one it falls back on.
	if dropped < 400 {
		t.Errorf("absent tokens dropped in %d of 1600 searches, want most", dropped)
	}
}

func TestLCSNoCommonToken(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{1, 5, 300, 3000} {
		a := lcsRandSeq(r, n, 50)
		b := lcsRandSeq(r, n+7, 50)
		for i := range b {
			b[i] += 1000
		}
		s := new(lcsScratch)
		if got, ok := s.bounded(a, b, -1); got != 0 || !ok {
			t.Errorf("LCS of %d and %d tokens without a common one = %d, %v; want 0, true", len(a), len(b), got, ok)
		}
		if got, ok := s.bounded(a, b, len(a)); got > (len(a)+len(b)-len(a)-1)/2 || ok {
			t.Errorf("LCS bounded by D <= %d of %d and %d tokens without a common one = %d, %v; want a bound, false", len(a), len(a), len(b), got, ok)
		}
	}
}

func TestLCSDropEmptiesOneSide(t *testing.T) {
	// a is common token 7 among tokens absent from b; b is 7 three times:
	// without the absent tokens a is [7], which the common prefix takes,
	// leaving b's two other 7s.
	a := []uint32{100, 101, 102, 103, 104, 105, 7, 106, 107, 108, 109, 110}
	b := []uint32{7, 7, 7}
	for _, x := range [][2][]uint32{{a, b}, {b, a}} {
		s := new(lcsScratch)
		got, ok := s.bounded(x[0], x[1], -1)
		if got != 1 || !ok {
			t.Errorf("LCS(%v, %v) = %d, %v; want 1, true", x[0], x[1], got, ok)
		}
		if len(s.keptA)+len(s.keptB) == 0 {
			t.Errorf("LCS(%v, %v) dropped no absent token", x[0], x[1])
		}
	}
}

func TestDropAbsentKeepsPresent(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	absent, dropped := 0, 0
	for i := range 300 {
		k := []int{2, 16, 1000, 100000}[i%4]
		a, b := lcsWithAbsent(r, 1+r.IntN(3000), k, 0.05)
		if i%5 == 0 {
			a, b = b, a
		}
		s := new(lcsScratch)
		s.bucketBound(a, b)
		for _, side := range []struct {
			x, other []uint32
			first    bool
		}{{a, b, true}, {b, a, false}} {
			kept := s.dropAbsent(nil, side.x, side.first)
			j := 0
			for _, x := range side.x {
				in := slices.Contains(side.other, x)
				if !in {
					absent++
				}
				if j < len(kept) && kept[j] == x {
					j++
					continue
				}
				if in {
					t.Fatalf("pair %d: dropped token %d, which the other sequence has", i, x)
				}
				dropped++
			}
			if j != len(kept) {
				t.Fatalf("pair %d: kept tokens are not a subsequence in order", i)
			}
		}
	}
	// A few absent tokens share their bucket with a present one and stay.
	if dropped < absent*8/10 {
		t.Errorf("dropped %d of %d absent tokens, want at least 80 %%", dropped, absent)
	}
}

func TestLCSDropsAbsentWide(t *testing.T) {
	// Over 2^16 tokens the bucket counts are 32-bit.
	r := rand.New(rand.NewPCG(27, 28))
	a, b := lcsWithAbsent(r, 70000, 5000, 0.002)
	s := new(lcsScratch)
	got, ok := s.bounded(a, b, -1)
	if want := exactMyers(a, b); got != want || !ok {
		t.Fatalf("LCS of %d and %d tokens = %d, %v; Myers %d", len(a), len(b), got, ok, want)
	}
	if !s.bucketWide || len(s.keptA)+len(s.keptB) == 0 {
		t.Errorf("wide counts %v, kept %d and %d tokens: want the wide counts and a drop", s.bucketWide, len(s.keptA), len(s.keptB))
	}
}
