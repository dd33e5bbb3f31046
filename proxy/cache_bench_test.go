package proxy

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// BenchmarkCacheFull fills a 32 MiB signature cache with four times as
// many signatures as fit (decoded copies of the 53 sample pages'
// signatures, each under its own URL, as a cache serving many sites holds
// them) and reports the Go heap the full cache holds (live, and in use:
// live plus the freed slots of partly used spans) against its configured
// size: the cost model must bound memory, or "cache size + 150 MB" means
// nothing.
func BenchmarkCacheFull(b *testing.B) {
	var encoded [][]byte
	for d, err := range sample.Docs() {
		if err != nil {
			b.Fatal(err)
		}
		res, err := page.Signer{}.Sign(d.Body, "text/html")
		if err != nil {
			b.Fatal(err)
		}
		e, err := res.Sig.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		encoded = append(encoded, e)
	}
	const size = 32 << 20
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		c, err := newSigCache(size, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		var inserted int64
		for i := 0; inserted < 4*size; i++ {
			var s similarity.Signature
			if err := s.UnmarshalBinary(encoded[i%len(encoded)]); err != nil {
				b.Fatal(err)
			}
			c.set("https://site"+strconv.Itoa(i)+".example/page", &entry{sig: &s, fetchedAt: time.Now()})
			inserted += cost(&s)
			if i%1000 == 0 {
				c.c.Wait() // let the admission policy keep up, as a live cache's does
			}
		}
		c.c.Wait()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		held := int64(after.HeapInuse) - int64(before.HeapInuse)
		b.ReportMetric(float64(live)/(1<<20), "live-MiB")
		b.ReportMetric(float64(held)/(1<<20), "heap-inuse-MiB")
		b.ReportMetric(float64(c.c.MaxCost()-c.c.RemainingCost())/(1<<20), "cost-MiB")
		b.ReportMetric(float64(size)/(1<<20), "size-MiB")
		c.close()
	}
}
