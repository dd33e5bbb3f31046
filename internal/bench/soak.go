package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/winnow-search/winnow/internal/loadgen"
)

// runSoak loads winnow alone for d in 30s slices, printing RSS after
// each, and compares the mean RSS of the last window with that of the
// second (window: one minute, or a quarter of d if shorter).
func runSoak(ctx context.Context, out io.Writer, be *env, mem *rssSampler, urls []string, conns int, d time.Duration) (*SoakReport, error) {
	before := be.win.Stats().Signatures
	start := time.Now()
	mem.sample()
	fmt.Fprintf(out, "soak: winnow alone for %v, %d connections; RSS every 30s\n", d, conns)
	var total loadgen.Measured
	rep := &SoakReport{}
	c0 := loadgen.ProcessCPU()
	for el := time.Duration(0); el < d && ctx.Err() == nil; el = time.Since(start) {
		res, err := loadgen.Run(ctx, loadgen.Options{URLs: urls, Conns: conns, Duration: min(30*time.Second, d-el)})
		if err != nil {
			return nil, err
		}
		total.Merge(res)
		rss := mib(readRSS())
		rep.RSSMiB = append(rep.RSSMiB, rss)
		fmt.Fprintf(out, "soak: %6.0fs  RSS %7.1f MiB  %7.0f req/s  p99 %6.2f ms  errors %d\n",
			time.Since(start).Seconds(), rss, res.RPS(), ms(res.Latency.Quantile(0.99)), res.Errors+res.Non2xx)
	}
	total.CPU = loadgen.ProcessCPU() - c0
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	rep.Seconds = elapsed.Seconds()
	rep.Winnow = phase(&total)
	after := be.win.Stats().Signatures
	rep.SigsCached = float64(after.Cached - before.Cached)
	rep.SigsFetched = float64(after.Fetched - before.Fetched)
	var err error
	if rep.MarkedHits, rep.CheckedHits, _, err = be.checkMarks(urls[:min(len(urls), len(Queries))]); err != nil {
		return nil, err
	}
	rep.URLs = len(urls)
	rep.CacheUsedMiB = mib(be.win.Stats().CacheUsedBytes)
	rep.CacheMiB, rep.AnswerCacheMiB = mib(be.cacheSize), mib(be.answerSize)

	win := min(time.Minute, elapsed/4)
	rep.Window = win.String()
	var base2, last []float64
	for _, x := range mem.since(start) {
		at := x.at.Sub(start)
		switch {
		case at >= win && at < 2*win:
			base2 = append(base2, mib(x.rss))
		case at >= elapsed-win:
			last = append(last, mib(x.rss))
		}
		rep.PeakMiB = max(rep.PeakMiB, mib(x.rss))
	}
	rep.BaselineMiB, rep.LastMiB = mean(base2), mean(last)
	if rep.BaselineMiB > 0 {
		rep.Growth = rep.LastMiB/rep.BaselineMiB - 1
	}
	rep.Grew = rep.Growth > soakGrowthLimit
	rep.WithinLimit = rep.PeakMiB <= mib(be.memoryLimit())
	var msx runtime.MemStats
	runtime.ReadMemStats(&msx)
	rep.GoHeapEndMiB = mib(int64(msx.HeapInuse))
	return rep, nil
}
