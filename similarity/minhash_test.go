package similarity

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

func BenchmarkMinHash(b *testing.B) {
	in := sigCorpus(b)
	h := make([]uint64, len(in.Tokens))
	mins := make([]uint64, DefaultMinHashes)
	ss := make([]uint64, DefaultSupershingles)
	b.SetBytes(int64(len(in.Text)))
	b.ReportAllocs()
	for b.Loop() {
		for i, t := range in.Tokens {
			h[i] = xxh3.HashString(t)
		}
		minhash(h, DefaultMinHashShingle, mins)
		supershingles(mins, DefaultSupershingleSize, ss)
	}
}

// trueJaccard is the Jaccard similarity of the wrapped w-word shingle
// sets of a and b.
func trueJaccard(a, b []string, w int) float64 {
	set := func(t []string) map[string]bool {
		m := map[string]bool{}
		for i := range t {
			var sb strings.Builder
			for j := range w {
				sb.WriteString(t[(i+j)%len(t)])
				sb.WriteByte(' ')
			}
			m[sb.String()] = true
		}
		return m
	}
	sa, sb := set(a), set(b)
	inter := 0
	for s := range sa {
		if sb[s] {
			inter++
		}
	}
	return float64(inter) / float64(len(sa)+len(sb)-inter)
}

// The min-hash estimate tracks the true shingle Jaccard: over seeded pairs
// spanning Jaccard 0.05..0.95 the mean absolute error is under 0.05 and no
// error exceeds 0.25 (84 bins: standard deviation at most 0.055).
func TestMinHashJaccard(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var sumErr, maxErr float64
	pairs := 0
	for _, rate := range []float64{0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2, 0.3} {
		for range 25 {
			n := 100 + r.IntN(900)
			a := sigRandWords(r, n, 100000)
			b := sigEdit(r, a, rate)
			want := trueJaccard(a, b, DefaultMinHashShingle)
			sa, sb := Sign(sigInputFromTokens(a, 12), Options{}), Sign(sigInputFromTokens(b, 12), Options{})
			got := EstimateJaccard(sa.MinHash, sb.MinHash)
			e := math.Abs(got - want)
			sumErr += e
			maxErr = max(maxErr, e)
			pairs++
		}
	}
	mean := sumErr / float64(pairs)
	t.Logf("%d pairs: mean abs error %.4f, max %.4f", pairs, mean, maxErr)
	if mean >= 0.05 || maxErr > 0.25 {
		t.Errorf("min-hash Jaccard error: mean %.4f, max %.4f, want < 0.05 and <= 0.25", mean, maxErr)
	}
}

func TestMinHashSmall(t *testing.T) {
	// Texts shorter than the shingle width and than the bin count still
	// fill every bin, and equal texts estimate 1.
	for _, n := range []int{5, 6, 20, 83, 84, 85} {
		r := rand.New(rand.NewPCG(uint64(n), 9))
		a := sigRandWords(r, n, 1000)
		mins := make([]uint64, DefaultMinHashes)
		minhash(sigHashes(a), DefaultMinHashShingle, mins)
		for i, v := range mins {
			if v == ^uint64(0) {
				t.Errorf("%d words: bin %d empty after densification", n, i)
			}
		}
		s := Sign(sigInputFromTokens(a, 5), Options{})
		if got := EstimateJaccard(s.MinHash, s.MinHash); got != 1 {
			t.Errorf("%d words: EstimateJaccard(self) = %v, want 1", n, got)
		}
	}
}

func TestEstimateJaccard(t *testing.T) {
	tests := []struct {
		name string
		a, b []uint16
		want float64
	}{
		{"empty", nil, nil, 0},
		{"length differs", []uint16{1}, []uint16{1, 2}, 0},
		{"equal", []uint16{1, 2, 3, 4}, []uint16{1, 2, 3, 4}, 1},
		{"disjoint", []uint16{1, 2, 3, 4}, []uint16{5, 6, 7, 8}, 0},
		{"half", []uint16{1, 2, 3, 4}, []uint16{1, 2, 7, 8}, (0.5 - 1.0/65536) / (1 - 1.0/65536)},
	}
	for _, tt := range tests {
		if got := EstimateJaccard(tt.a, tt.b); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("EstimateJaccard(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// Supershingles match with probability J^14 each (Fetterly §2); near
// copies share at least 2, unrelated texts none; megashingles follow.
func TestSupershingles(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	a := sigRandWords(r, 2000, 100000)
	sa := Sign(sigInputFromTokens(a, 12), Options{})
	tests := []struct {
		name     string
		rate     float64
		min, max int
	}{
		{"identical", 0, 6, 6},
		{"0.2% edited", 0.002, 2, 6},
		{"unrelated", 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := Sign(sigInputFromTokens(sigEdit(r, a, tt.rate), 12), Options{})
			got := SupershingleMatches(sa.Supershingles, sb.Supershingles)
			if got < tt.min || got > tt.max {
				t.Errorf("SupershingleMatches = %d, want %d..%d", got, tt.min, tt.max)
			}
			ma, mb := sa.Megashingles(), sb.Megashingles()
			if len(ma) != 15 || len(mb) != 15 {
				t.Fatalf("len(Megashingles) = %d, %d, want 15", len(ma), len(mb))
			}
			shared := 0
			for i := range ma {
				if ma[i] == mb[i] {
					shared++
				}
			}
			if want := got * (got - 1) / 2; shared != want {
				t.Errorf("shared megashingles = %d, want C(%d,2) = %d", shared, got, want)
			}
		})
	}
	var none Signature
	if m := none.Megashingles(); m != nil {
		t.Errorf("Megashingles of empty = %v, want nil", m)
	}
}

func TestEqualLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{0, 1, 3, 4, 5, 84, 85, 87, 40000} {
		a := make([]uint16, n)
		b := make([]uint16, n)
		for i := range a {
			a[i] = uint16(r.Uint32())
			switch r.IntN(4) {
			case 0:
				b[i] = a[i]
			case 1:
				b[i] = a[i] ^ 0x8000 // differs in the top bit only
			case 2:
				b[i] = a[i] ^ 1
			default:
				b[i] = uint16(r.Uint32())
			}
		}
		for _, off := range []int{0, 1} { // unaligned starts too
			if off > n {
				continue
			}
			want := 0
			for i := off; i < n; i++ {
				if a[i] == b[i] {
					want++
				}
			}
			if got := equalLanes(a[off:], b[off:]); got != want {
				t.Errorf("equalLanes(n=%d, off=%d) = %d, want %d", n, off, got, want)
			}
		}
	}
	same := make([]uint16, 200000)
	if got := equalLanes(same, same); got != len(same) {
		t.Errorf("equalLanes(equal, n=%d) = %d, want %d", len(same), got, len(same))
	}
}
