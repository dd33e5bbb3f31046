package similarity

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestExtendBlocksMatchGo runs every round of the forward and reverse
// searches of random pairs (alphabets of 2 to 1,000 tokens, lengths 0 to
// 300, unrelated or near-duplicates) with the AVX2 blocks and with the Go
// loop alone on copies of the same V row, and requires the rows to be
// identical after each round: the whole round, then a random part of it,
// so that blocks start and end anywhere, band ends included.
func TestExtendBlocksMatchGo(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 round on this build or CPU: the Go round is the only one")
	}
	defer func(chosen bool) { stepAVX2 = chosen }(stepAVX2)
	stepAVX2 = true
	goRound := func(round func(a, b []uint32, v []int32, off, lo, hi int)) func(a, b []uint32, v []int32, off, lo, hi int) {
		return func(a, b []uint32, v []int32, off, lo, hi int) {
			stepAVX2 = false
			round(a, b, v, off, lo, hi)
			stepAVX2 = true
		}
	}
	r := rand.New(rand.NewPCG(12, 13))
	cases := 3000
	if testing.Short() {
		cases = 300
	}
	blocks := 0
	for c := range cases {
		k := 2 + int(1000*r.Float64()*r.Float64())
		a := lcsRandSeq(r, r.IntN(301), k)
		b := lcsRandSeq(r, r.IntN(301), k)
		if c%2 == 0 {
			b = lcsMutate(r, a, 0.4*r.Float64(), k)
		}
		blocks += checkRounds(t, a, b, r, extendForward, goRound(extendForward), "forward")
		blocks += checkRounds(t, a, b, r, extendReverse, goRound(extendReverse), "reverse")
	}
	if blocks == 0 {
		t.Fatal("no round was long enough for a block of eight diagonals")
	}
}

// checkRounds runs the rounds of one search of a and b with round (the
// AVX2 blocks) and with want (the Go loop) until its path reaches the end
// of both, comparing their V rows, and returns how many rounds had eight
// diagonals or more.
func checkRounds(t *testing.T, a, b []uint32, r *rand.Rand, round, want func(a, b []uint32, v []int32, off, lo, hi int), dir string) int {
	t.Helper()
	n, m := len(a), len(b)
	lim := n + m
	off := lim + 1
	v := make([]int32, 2*lim+3)
	for i := range v {
		v[i] = -1
	}
	v[off+1] = 0
	w := make([]int32, len(v))
	long := 0
	for d := 0; d <= lim; d++ {
		lo, hi := diagonals(d, n, m)
		if hi-lo >= 14 {
			long++
		}
		// A random part of the round first, on a copy: its diagonals
		// are those of the round, so the row stays a valid one.
		if lo < hi {
			plo := lo + 2*r.IntN((hi-lo)/2+1)
			phi := plo + 2*r.IntN((hi-plo)/2+1)
			part := slices.Clone(v)
			copy(w, v)
			round(a, b, part, off, plo, phi)
			want(a, b, w, off, plo, phi)
			if !slices.Equal(part, w) {
				t.Fatalf("%s round %d, diagonals %d..%d of %v and %v: V %v, want %v", dir, d, plo, phi, a, b, part, w)
			}
		}
		copy(w, v)
		round(a, b, v, off, lo, hi)
		want(a, b, w, off, lo, hi)
		if !slices.Equal(v, w) {
			t.Fatalf("%s round %d, diagonals %d..%d of %v and %v: V %v, want %v", dir, d, lo, hi, a, b, v, w)
		}
		if delta := n - m; lo <= delta && delta <= hi && (delta-lo)&1 == 0 && int(v[off+delta]) >= n {
			break // the path reached the end: D = d
		}
	}
	return long
}

// TestRowsMeetBlocksMatchGo compares the meeting test with the AVX2
// blocks and with the Go loop alone on random rows of odd lengths 1 to
// 301 (those of a round), entries -1..n, where at most one pair reaches
// n, anywhere, and entries off the pairs (odd positions) reach it too.
func TestRowsMeetBlocksMatchGo(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 meeting test on this build or CPU: the Go loop is the only one")
	}
	defer func(chosen bool) { stepAVX2 = chosen }(stepAVX2)
	stepAVX2 = true
	r := rand.New(rand.NewPCG(14, 15))
	met := 0
	for range 20000 {
		l := 1 + 2*r.IntN(151)
		n := 1 + r.IntN(1000)
		vs, ws := make([]int32, l), make([]int32, l)
		for i := range vs { // no pair reaches n
			vs[i] = int32(r.IntN(n+1) - 1)
			ws[l-1-i] = int32(r.IntN(n-int(vs[i])) - 1)
		}
		if r.IntN(2) == 0 { // one pair does
			i := 2 * r.IntN(l/2+1)
			ws[l-1-i] = int32(n - int(vs[i]) + r.IntN(2))
		}
		if r.IntN(2) == 0 && l > 1 { // an entry off the pairs does
			i := 1 + 2*r.IntN(l/2)
			vs[i] = int32(n)
			ws[l-1-i] = int32(n)
		}
		stepAVX2 = false
		want := rowsMeet(vs, ws, n)
		stepAVX2 = true
		if got := rowsMeet(vs, ws, n); got != want {
			t.Fatalf("rowsMeet(%v, %v, %d) = %v with AVX2, %v without", vs, ws, n, got, want)
		}
		if want {
			met++
		}
	}
	if met < 5000 || met > 15000 {
		t.Fatalf("%d of 20,000 row pairs meet: the cases do not test both answers", met)
	}
}
