package similarity

import (
	"github.com/winnow-search/winnow/internal/hashmix"
	"math/rand/v2"
	"testing"

	"github.com/zeebo/xxh3"
)

func sigHashes(tokens []string) []uint64 {
	h := make([]uint64, len(tokens))
	for i, t := range tokens {
		h[i] = xxh3.HashString(t)
	}
	return h
}

func TestHamming(t *testing.T) {
	tests := []struct {
		a, b uint64
		want int
	}{{0, 0, 0}, {0, ^uint64(0), 64}, {0b1011, 0b0110, 3}}
	for _, tt := range tests {
		if got := Hamming(tt.a, tt.b); got != tt.want {
			t.Errorf("Hamming(%#x, %#x) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// simhashSlow is the textbook simhash: 64 counters, a branch per bit.
func simhashSlow(h []uint64, w int) uint64 {
	w = min(w, len(h))
	var v [64]int
	for i := 0; i+w <= len(h); i++ {
		var s uint64
		for _, x := range h[i : i+w] {
			s = s*shingleBase + x
		}
		f := hashmix.Mix64(s)
		for b := range 64 {
			if f>>b&1 == 1 {
				v[b]++
			} else {
				v[b]--
			}
		}
	}
	var out uint64
	for b := range 64 {
		if v[b] > 0 {
			out |= 1 << b
		}
	}
	return out
}

func TestSimhashMatchesSlow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 4, 10, 254, 255, 256, 257, 1000, 5000} {
		h := sigHashes(sigRandWords(r, n, 50))
		for _, w := range []int{1, 3, 5} {
			if got, want := simhash(h, w), simhashSlow(h, w); got != want {
				t.Errorf("simhash(%d words, w=%d) = %#x, want %#x", n, w, got, want)
			}
		}
	}
}

// The simhash distance grows with the fraction of words edited, in
// expectation over seeds; unrelated texts sit near 32 bits.
func TestSimhashMonotone(t *testing.T) {
	rates := []float64{0, 0.02, 0.05, 0.1, 0.2, 0.4}
	const seeds = 40
	mean := make([]float64, len(rates))
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 5))
		base := sigRandWords(r, 800, 5000)
		hb := simhash(sigHashes(base), DefaultSimhashShingle)
		for i, rate := range rates {
			he := simhash(sigHashes(sigEdit(r, base, rate)), DefaultSimhashShingle)
			mean[i] += float64(Hamming(hb, he)) / seeds
		}
	}
	t.Logf("mean Hamming by edit rate %v: %.1f", rates, mean)
	if mean[0] != 0 {
		t.Errorf("mean distance of unedited = %.1f, want 0", mean[0])
	}
	for i := 1; i < len(mean); i++ {
		if mean[i] <= mean[i-1] {
			t.Errorf("mean distance at rate %v = %.1f, want > %.1f at rate %v", rates[i], mean[i], mean[i-1], rates[i-1])
		}
	}
	// Unrelated texts: 32 ± 3 on average.
	var unrelated float64
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 6))
		a := simhash(sigHashes(sigRandWords(r, 500, 5000)), DefaultSimhashShingle)
		b := simhash(sigHashes(sigRandWords(r, 500, 5000)), DefaultSimhashShingle)
		unrelated += float64(Hamming(a, b)) / seeds
	}
	if unrelated < 29 || unrelated > 35 {
		t.Errorf("mean distance of unrelated texts = %.1f, want 32 ± 3", unrelated)
	}
}

func BenchmarkSimhash(b *testing.B) {
	in := sigCorpus(b)
	h := make([]uint64, len(in.Tokens))
	b.SetBytes(int64(len(in.Text)))
	b.ReportAllocs()
	for b.Loop() {
		// Token hashing is part of the cost.
		for i, t := range in.Tokens {
			h[i] = xxh3.HashString(t)
		}
		simhash(h, DefaultSimhashShingle)
	}
}
