package cluster

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/similarity"
)

// BenchmarkGrowth1M is Zhu et al.'s Fig. 7 at scale: the collection grows
// in ten steps to 1 M synthetic pages (synthPages: a quarter of them
// near-copies), and at each step it compares the time to ingest the new
// tenth into the service (bbolt store, 1,000-page batches) with the time
// of the batch clustering the offline job uses (similarity.BatchCluster,
// winner-verified, keyed by URL) from scratch over every page seen so
// far. It logs a table; run it with -benchtime=1x (-short: 100 k pages).
func BenchmarkGrowth1M(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	pages := synthPages(b, n, 1)
	sigs := make([]*similarity.Signature, n)
	keys := make([]string, n)
	for i, p := range pages {
		sigs[i] = new(similarity.Signature)
		if err := sigs[i].UnmarshalBinary(p.Signature); err != nil {
			b.Fatal(err)
		}
		keys[i] = p.URL
	}
	type step struct {
		held            int
		ingest, scratch time.Duration
		groups, batch   int // groups of the service and of the batch clustering
	}
	var steps []step
	b.ReportAllocs()
	for b.Loop() {
		st, err := OpenBolt(filepath.Join(b.TempDir(), "growth.db"))
		if err != nil {
			b.Fatal(err)
		}
		s, err := New(st, Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		steps = steps[:0]
		for k := 1; k <= 10; k++ {
			lo, hi := (k-1)*n/10, k*n/10
			t0 := time.Now()
			ingestAll(b, s, pages[lo:hi])
			ingest := time.Since(t0)
			t0 = time.Now()
			cs := similarity.BatchCluster(sigs[:hi], similarity.Decision{}, similarity.BatchOptions{Keys: keys[:hi], WinnerVerified: true})
			scratch := time.Since(t0)
			groups := hi // the batch's groups, singletons included
			for _, c := range cs {
				groups -= len(c.Members) - 1
			}
			steps = append(steps, step{hi, ingest, scratch, s.Stats().Groups, groups})
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
	}
	var sumIngest, sumScratch time.Duration
	var tbl strings.Builder
	tbl.WriteString("\n| pages held | ingest of the new tenth | pages/s | batch clustering from scratch | from scratch / incremental | groups: service | groups: batch |\n|---|---|---|---|---|---|---|\n")
	for _, st := range steps {
		sumIngest += st.ingest
		sumScratch += st.scratch
		fmt.Fprintf(&tbl, "| %d | %.2f s | %.0f | %.2f s | %.1f× | %d | %d |\n", st.held, st.ingest.Seconds(),
			float64(n/10)/st.ingest.Seconds(), st.scratch.Seconds(), st.scratch.Seconds()/st.ingest.Seconds(), st.groups, st.batch)
	}
	fmt.Fprintf(&tbl, "| total | %.1f s | | %.1f s | %.1f× | | |\n", sumIngest.Seconds(), sumScratch.Seconds(), sumScratch.Seconds()/sumIngest.Seconds())
	b.Log(tbl.String())
	b.ReportMetric(sumIngest.Seconds(), "ingest-s")
	b.ReportMetric(sumScratch.Seconds(), "scratch-s")
}
