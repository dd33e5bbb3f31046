package backend

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/winnow-search/winnow/backend/client"
	"github.com/winnow-search/winnow/similarity"
)

// synthSig is a random signature as similarity's decision tests make them:
// random simhash and min-hashes, supershingles over them, a length vector.
func synthSig(r *rand.Rand) *similarity.Signature {
	s := &similarity.Signature{Tokens: 1000, Bytes: 6000, Simhash: r.Uint64(), MinHash: make([]uint16, 84)}
	for i := range s.MinHash {
		s.MinHash[i] = uint16(r.Uint32())
	}
	n := 300 + r.IntN(3000)
	s.Tokens = n
	s.Lengths = []uint32{uint32(n / 3), uint32(n / 3), uint32(n - 2*(n/3))}
	s.Supershingles = make([]uint64, 6)
	for i := range s.Supershingles {
		s.Supershingles[i] = r.Uint64()
	}
	return s
}

// synthCopy is a near-copy: a few simhash bits and min-hashes changed.
func synthCopy(r *rand.Rand, s *similarity.Signature) *similarity.Signature {
	c := *s
	c.Simhash ^= 1 << r.IntN(64)
	c.MinHash = slices.Clone(s.MinHash)
	for range 4 {
		c.MinHash[r.IntN(84)] = uint16(r.Uint32())
	}
	return &c
}

// synthPages returns n pages, a quarter of them near-copies of earlier
// ones.
func synthPages(b testing.TB, n int, seed uint64) []client.Page {
	r := rand.New(rand.NewPCG(seed, 1))
	var sigs []*similarity.Signature
	pages := make([]client.Page, n)
	for i := range pages {
		var s *similarity.Signature
		if len(sigs) > 0 && r.IntN(4) == 0 {
			s = synthCopy(r, sigs[r.IntN(len(sigs))])
		} else {
			s = synthSig(r)
			sigs = append(sigs, s)
		}
		enc, err := s.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		pages[i] = client.Page{URL: fmt.Sprintf("https://s%d.example/page/%d", seed, i), Signature: enc, Popularity: r.Float64()}
	}
	return pages
}

func ingestAll(b testing.TB, s *Service, pages []client.Page) {
	for start := 0; start < len(pages); start += 1000 {
		if _, err := s.Ingest(pages[start:min(start+1000, len(pages))]); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkIngest(b *testing.B, held int) {
	s := newTestService(b, Options{})
	ingestAll(b, s, synthPages(b, held, 1))
	fresh := synthPages(b, 1000, 2)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		// 1000 new pages a batch: every one goes through tier 2.
		for i := range fresh {
			fresh[i].URL = fmt.Sprintf("https://new.example/%d", n)
			n++
		}
		if _, err := s.Ingest(fresh); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "pages/s")
}

func BenchmarkIngest100k(b *testing.B) { benchmarkIngest(b, 100_000) }
func BenchmarkIngest1M(b *testing.B)   { benchmarkIngest(b, 1_000_000) }

func BenchmarkLookup50(b *testing.B) {
	s := newTestService(b, Options{})
	pages := synthPages(b, 100_000, 1)
	ingestAll(b, s, pages)
	urls := make([]string, 50)
	for i := range urls {
		urls[i] = pages[i*1000].URL
	}
	var lat []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := s.Lookup(urls); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// TestStoreBytesPerPage measures the bbolt store's size per page and the
// heap of a service holding the pages (synthetic signatures, no Seq).
func TestStoreBytesPerPage(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 20,000 pages")
	}
	const n = 20_000
	st, err := OpenBolt(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ingestAll(t, s, synthPages(t, n, 1))
	size, _ := st.Size()
	per := float64(size) / n
	t.Logf("bbolt store: %d bytes for %d pages, %.0f bytes a page", size, n, per)
	if per > 1024 {
		t.Errorf("store bytes per page = %.0f, want <= 1024", per)
	}
	runtime.GC()
}
