package similarity

import (
	"encoding/binary"
	"github.com/winnow-search/winnow/internal/hashmix"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bits-and-blooms/bloom/v3"
)

// sigFilter adds keys to a default-size filter as chunkFilter adds chunks.
func sigFilter(keys []uint64) *bloom.BloomFilter {
	f := bloom.New(DefaultBloomBits, 6)
	var b [8]byte
	for _, k := range keys {
		binary.LittleEndian.PutUint64(b[:], hashmix.Mix64(k))
		f.Add(b[:])
	}
	return f
}

// The measured match ratio of filters of n chunks sharing c follows
// ExpectedBloomMatch within 0.02 on average over 100 seeds, and
// BloomContainment estimates c/n within 0.05 on average.
func TestBloomMatchStatistics(t *testing.T) {
	const seeds = 100
	for _, n := range []int{32, 128, 256} {
		for _, frac := range []float64{0, 0.25, 0.5, 0.75, 1} {
			c := int(frac * float64(n))
			var match, contain float64
			r := rand.New(rand.NewPCG(uint64(n), uint64(c)))
			for range seeds {
				a := make([]uint64, n)
				b := make([]uint64, n)
				for i := range a {
					a[i] = r.Uint64()
					b[i] = r.Uint64()
				}
				copy(b, a[:c])
				fa, fb := sigFilter(a), sigFilter(b)
				match += BloomMatch(fa, fb) / seeds
				contain += BloomContainment(fa, fb) / seeds
			}
			want := ExpectedBloomMatch(DefaultBloomBits, 6, n, c)
			jain := JainExpectedMatch(DefaultBloomBits, 6, n, c)
			t.Logf("n=%3d c=%3d: match %.4f expected %.4f (Jain %.4f); containment %.3f want %.3f", n, c, match, want, jain, contain, frac)
			if math.Abs(match-want) > 0.02 {
				t.Errorf("n=%d c=%d: mean BloomMatch = %.4f, want %.4f ± 0.02", n, c, match, want)
			}
			if math.Abs(contain-float64(c)/float64(n)) > 0.05 {
				t.Errorf("n=%d c=%d: mean BloomContainment = %.4f, want %.4f ± 0.05", n, c, contain, float64(c)/float64(n))
			}
		}
	}
}

func TestJainExpectedMatch(t *testing.T) {
	// The values printed in Jain §2.3.1 for c = 0 and m = 8n, 10n, 11n
	// with optimal k.
	tests := []struct {
		ratio int
		want  float64
	}{{8, 0.0295}, {10, 0.0113}, {11, 0.0070}}
	for _, tt := range tests {
		n := 100
		m := uint(tt.ratio * n)
		k := float64(m) / float64(n) * math.Ln2
		// JainExpectedMatch takes an integer k; evaluate the formula at
		// the real optimum through its closed form 2(1 − 0.5^(0.6185^(m/n))).
		got := 2 * (1 - math.Pow(0.5, math.Pow(0.6185, float64(tt.ratio))))
		if math.Abs(got-tt.want) > 0.0005 {
			t.Errorf("closed form at m=%dn = %.4f, want %.4f", tt.ratio, got, tt.want)
		}
		if j := JainExpectedMatch(m, uint(math.Round(k)), n, 0); math.Abs(j-tt.want) > 0.01 {
			t.Errorf("JainExpectedMatch(m=%d, k=%.0f, n=%d, 0) = %.4f, want %.4f ± 0.01", m, k, n, j, tt.want)
		}
	}
	if got := JainExpectedMatch(2048, 6, 256, 256); math.Abs(got-1) > 1e-9 {
		t.Errorf("JainExpectedMatch(c = n) = %v, want 1", got)
	}
}

func TestBloomHelpers(t *testing.T) {
	in := sigCorpus(t)
	half := in.Text[:len(in.Text)/4]
	full := Sign(Input{Text: in.Text[:len(in.Text)/2], Tokens: in.Tokens}, Options{})
	part := Sign(Input{Text: half, Tokens: in.Tokens}, Options{})
	other := Sign(sigInput(sigTexts(t)[0].text), Options{})

	if !BloomContained(part.Bloom, full.Bloom, 0.05) {
		t.Errorf("BloomContained(first quarter, first half) = false, want true (missing %d of %d bits)",
			BloomMissing(part.Bloom, full.Bloom), part.Bloom.BitSet().Count())
	}
	if BloomContained(full.Bloom, part.Bloom, 0.05) {
		t.Errorf("BloomContained(first half, first quarter) = true, want false")
	}
	if got := BloomContainment(part.Bloom, full.Bloom); got < 0.9 {
		t.Errorf("BloomContainment(first quarter, first half) = %.3f, want >= 0.9", got)
	}
	if got := BloomJaccard(part.Bloom, full.Bloom); got < 0.35 || got > 0.65 {
		t.Errorf("BloomJaccard(first quarter, first half) = %.3f, want 0.5 ± 0.15", got)
	}
	if got := BloomMatch(full.Bloom, part.Bloom); got > 0.75 {
		t.Errorf("BloomMatch(first half, first quarter) = %.3f, want <= 0.75", got)
	}
	if got := BloomJaccard(other.Bloom, full.Bloom); got > 0.2 {
		t.Errorf("BloomJaccard(unrelated) = %.3f, want <= 0.2", got)
	}
	small := bloom.New(1024, 6)
	for name, f := range map[string]func() float64{
		"BloomMatch nil":          func() float64 { return BloomMatch(nil, full.Bloom) },
		"BloomMatch m differs":    func() float64 { return BloomMatch(small, full.Bloom) },
		"BloomContainment nil":    func() float64 { return BloomContainment(full.Bloom, nil) },
		"BloomJaccard m differs":  func() float64 { return BloomJaccard(full.Bloom, small) },
		"BloomMatch empty filter": func() float64 { return BloomMatch(bloom.New(2048, 6), full.Bloom) },
	} {
		if got := f(); got != 0 {
			t.Errorf("%s = %v, want 0", name, got)
		}
	}
	if got := BloomMissing(nil, full.Bloom); got != -1 {
		t.Errorf("BloomMissing(nil, b) = %d, want -1", got)
	}
}

func TestOptimalBloomHashes(t *testing.T) {
	o := Options{}.WithDefaults()
	if o.BloomHashes != 6 {
		t.Errorf("default BloomHashes = %d, want 6", o.BloomHashes)
	}
}
