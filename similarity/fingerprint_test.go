package similarity

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func sigSentences(r *rand.Rand, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("sentence %d of the text", r.Uint64())
	}
	return s
}

// Two pages sharing a fraction j of their sentences share about that
// fraction of a bottom-8 sketch: over 200 seeds the mean shared count is
// within 1 of the expected overlap of the sketches, and identical or
// disjoint pages share 8 or 0.
func TestFingerprintOverlap(t *testing.T) {
	const seeds = 200
	for _, shared := range []int{0, 10, 20, 30, 40} {
		var got float64
		for seed := range seeds {
			r := rand.New(rand.NewPCG(uint64(seed), uint64(shared)))
			a := sigSentences(r, 40)
			b := append(slices.Clone(a[:shared]), sigSentences(r, 40-shared)...)
			fa := appendFingerprints(nil, a, 8, 1)
			fb := appendFingerprints(nil, b, 8, 1)
			got += float64(SharedFingerprints(fa, fb)) / seeds
		}
		// Of the 8 smallest of A, each is shared with probability
		// shared/40, and a shared value is in B's bottom 8 when it is;
		// the expected count is 8·J' with J' between J and shared/40.
		j := float64(shared) / float64(80-shared)
		lo, hi := 8*j-1, 8*float64(shared)/40+1
		t.Logf("%d of 40 sentences shared: mean %.2f fingerprints shared (Jaccard %.2f)", shared, got, j)
		if got < lo || got > hi {
			t.Errorf("%d of 40 shared: mean SharedFingerprints = %.2f, want %.2f..%.2f", shared, got, lo, hi)
		}
	}
}

func TestFingerprints(t *testing.T) {
	s := []string{"b", "a", "c", "a", "", "d", "e", "f", "g", "h", "i", "j"}
	fp := appendFingerprints(nil, s, 8, 1)
	if len(fp) != 8 || !slices.IsSorted(fp) {
		t.Errorf("appendFingerprints(nil, %q) = %v, want 8 sorted values", s, fp)
	}
	for i := 1; i < len(fp); i++ {
		if fp[i] == fp[i-1] {
			t.Errorf("appendFingerprints(nil, %q) = %v, want distinct", s, fp)
		}
	}
	// With m buckets, each bucket holds up to n values.
	fp = appendFingerprints(nil, s, 2, 3)
	per := map[uint32]int{}
	for _, v := range fp {
		per[v%3]++
	}
	for b, n := range per {
		if n > 2 {
			t.Errorf("bucket %d holds %d fingerprints, want <= 2", b, n)
		}
	}
	if got := BucketFingerprints(fp, 3); len(got) != len(per) {
		t.Errorf("BucketFingerprints = %d values, want %d", len(got), len(per))
	}
	if fp := appendFingerprints(nil, nil, 8, 1); fp != nil {
		t.Errorf("appendFingerprints(nil, nil) = %v, want nil", fp)
	}
	if got := SharedFingerprints([]uint32{1, 3, 5, 7}, []uint32{2, 3, 4, 7, 9}); got != 2 {
		t.Errorf("SharedFingerprints = %d, want 2", got)
	}
}

func BenchmarkFingerprints(b *testing.B) {
	in := sigCorpus(b)
	n := 0
	for _, s := range in.Sentences {
		n += len(s)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	var buf []uint32
	for b.Loop() {
		buf = appendFingerprints(buf[:0], in.Sentences, DefaultFingerprints, DefaultFingerprintBuckets)
	}
}
