package cluster

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
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

func benchmarkIngest(b *testing.B, s *Service, held int) {
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

func BenchmarkIngest100k(b *testing.B) {
	benchmarkIngest(b, newTestService(b, Options{}), 100_000)
}

// BenchmarkIngest1M loads 1 M pages into each embedded store, then
// measures the ingest of batches of new pages, and reports the memory
// held (Go heap in use and the process's resident set: anonymous memory,
// and mapped files such as the bbolt map), the store's bytes a page, the
// p99 latency of 50-URL lookups and the time to reopen the store and
// rebuild the service (restart). Run one store at a time (-bench
// 'Ingest1M/pebble'): a process's resident set is the sum of what both
// left behind.
func BenchmarkIngest1M(b *testing.B) {
	for _, d := range diskStores {
		b.Run(d.name, func(b *testing.B) { benchmarkIngest1M(b, d) })
	}
}

func benchmarkIngest1M(b *testing.B, d diskStore) {
	const held = 1_000_000
	path := filepath.Join(b.TempDir(), "store")
	st, err := d.open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { st.Close() }()
	s, err := New(st, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkIngest(b, s, held)
	b.StopTimer()
	total := held + b.N*1000
	debug.FreeOSMemory() // collect, and return the freed heap to the system
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(float64(procStatus(b, "VmRSS"))/(1<<20), "rss-MB")
	b.ReportMetric(float64(procStatus(b, "RssAnon"))/(1<<20), "rss-anon-MB")
	b.ReportMetric(float64(procStatus(b, "RssFile"))/(1<<20), "rss-file-MB")
	size, err := st.(interface{ Size() (int64, error) }).Size()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(size)/float64(total), "store-B/page")
	groups := s.Stats().Groups
	b.ReportMetric(float64(groups), "groups")
	b.ReportMetric(lookupP99(b, s, held), "lookup50-p99-µs")

	// Restart: reopen the store and rebuild the candidate tables.
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	s = nil
	debug.FreeOSMemory()
	t0 := time.Now()
	if st, err = d.open(path); err != nil {
		b.Fatal(err)
	}
	if s, err = New(st, Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(t0).Seconds(), "restart-s")
	if got := s.Stats().Groups; got != groups {
		b.Fatalf("groups after restart = %d, want %d", got, groups)
	}
}

// lookupP99 returns the p99 latency in µs of 2000 lookups of 50 of the
// first held pages of synthPages(seed 1).
func lookupP99(b *testing.B, s *Service, held int) float64 {
	urls := make([]string, 50)
	var lat []time.Duration
	for i := range 2000 {
		for j := range urls {
			urls[j] = fmt.Sprintf("https://s1.example/page/%d", (i*50+j)*7919%held)
		}
		t0 := time.Now()
		res, err := s.Lookup(urls)
		if err != nil {
			b.Fatal(err)
		}
		if !res[0].Known {
			b.Fatalf("lookup of %s: unknown", urls[0])
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	return float64(lat[len(lat)*99/100].Nanoseconds()) / 1e3
}

// procStatus returns a memory field of /proc/self/status in bytes: VmRSS
// (the resident set), RssAnon (its private memory: the Go heap and
// runtime) or RssFile (its mapped files: the bbolt map); 0 where there is
// none.
func procStatus(b *testing.B, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	return 0
}

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
