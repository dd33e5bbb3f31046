package indextag_test

import (
	"context"
	"testing"

	"github.com/winnow-search/winnow/indextag"
	"github.com/winnow-search/winnow/internal/realengine"
)

// BenchmarkDryRun reads, signs and clusters the sample's 53 pages from
// each real engine (a dry run). The bytes are the pages' HTML, so MB/s
// and pages/s compare with BenchmarkDedup's in cmd/winnow on the same
// pages; docs/index.md has the figures on 676 LLVM pages.
func BenchmarkDryRun(b *testing.B) {
	for _, kind := range realengine.Kinds {
		b.Run(kind, func(b *testing.B) {
			base := realengine.Start(b, kind)
			docs, err := realengine.Sample("http://127.0.0.1:8081")
			if err != nil {
				b.Fatal(err)
			}
			index := "bench-dry-" + kind
			realengine.Load(b, kind, base, index, docs)
			var bytes int64
			for _, d := range docs {
				bytes += int64(len(d.HTML))
			}
			e := &engine{kind: kind, base: base, index: index, docs: docs}
			o := benchOptions(b, e)
			b.SetBytes(bytes)
			b.ReportAllocs()
			for b.Loop() {
				rep, err := indextag.Run(context.Background(), o)
				if err != nil || rep.Docs != len(docs) {
					b.Fatalf("Run: %v, %d docs", err, rep.Docs)
				}
			}
			b.ReportMetric(float64(len(docs)*b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}
