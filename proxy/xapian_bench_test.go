package proxy

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/loadgen"
)

// omegaBenchQueries each match at least 50 of the 53 sample pages, so
// every query fills a page of 50 results.
var omegaBenchQueries = []string{"llvm", "documentation", "llvm documentation", "the"}

// BenchmarkOmegaThroughput sets winnow against the plain fasthttp
// pass-through in front of a real search engine: Xapian Omega (Debian's
// omega CGI, served on loopback) over the 53 pages of the embedded sample,
// 50 results a query, every signature cached. The demo engine of `winnow
// bench` answers in tens of microseconds, so there the ratio is winnow's
// cost alone; here the engine does a real engine's work per query.
// Alternating rounds, 32 connections, then one. Run it once:
//
//	go test -run '^$' -bench OmegaThroughput -benchtime=1x ./proxy/
func BenchmarkOmegaThroughput(b *testing.B) {
	tools := findOmega(b)
	dir := writeOmegaPages(b, nil)
	pages := startPages(b, dir)
	conf := buildOmegaIndex(b, tools, b.TempDir(), dir, pages.URL+"/pages/")
	omega, _ := startOmega(b, tools, conf)
	s, base := startProxy(b, Options{Engines: []Engine{omegaEngine(omega.URL, 10*time.Second)}, Budget: 5 * time.Second})
	pt, err := loadgen.StartPassthrough(strings.TrimPrefix(omega.URL, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	defer pt.Close()
	urls := func(base string) []string {
		var out []string
		for _, q := range omegaBenchQueries {
			out = append(out, base+"/?"+url.Values{"P": {q}, "DB": {"db"}, "FMT": {"opensearch"}, "HITSPERPAGE": {"50"}}.Encode())
		}
		return out
	}
	passURLs, winURLs := urls(pt.URL()), urls(base)
	for _, u := range passURLs {
		if _, body := get(b, u); len(decodeRSS(b, body).Channel.Items) != 50 {
			b.Fatalf("%s: want 50 items\n%s", u, body)
		}
	}
	// Warm: every page fetched and signed once, then every list refined
	// from the cache.
	for range 3 {
		for _, u := range winURLs {
			get(b, u)
		}
		s.ref.wait()
	}
	for _, u := range winURLs {
		_, body := get(b, u)
		marked := 0
		for _, it := range decodeRSS(b, body).Channel.Items {
			if len(it.Duplicates) > 0 || it.Annotation != nil {
				marked++
			}
		}
		if marked == 0 {
			b.Fatalf("%s: no result grouped after warm-up\n%s", u, body)
		}
	}
	misses := s.cache.miss.Load()
	targets := []loadgen.Target{{Name: "passthrough", URLs: passURLs}, {Name: "winnow", URLs: winURLs}}
	for b.Loop() {
		for _, conns := range []int{32, 1} {
			got, err := loadgen.Compare(context.Background(), targets, loadgen.CompareOptions{Conns: conns, Rounds: 5, Slice: 2 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			pass, win := &got[0], &got[1]
			for _, m := range got {
				if m.Errors+m.Non2xx > 0 {
					b.Fatalf("%d errors, %d non-2xx: %v", m.Errors, m.Non2xx, m.FirstErr)
				}
			}
			sfx := "-c" + map[int]string{32: "32", 1: "1"}[conns]
			b.ReportMetric(pass.RPS(), "pass-req/s"+sfx)
			b.ReportMetric(win.RPS(), "winnow-req/s"+sfx)
			b.ReportMetric(win.RPS()/pass.RPS(), "ratio"+sfx)
			b.ReportMetric(ms(pass.Latency.Quantile(0.99)), "pass-p99-ms"+sfx)
			b.ReportMetric(ms(win.Latency.Quantile(0.99)-pass.Latency.Quantile(0.99)), "added-p99-ms"+sfx)
			b.ReportMetric(ms(win.Latency.Quantile(0.50)-pass.Latency.Quantile(0.50)), "added-p50-ms"+sfx)
			b.ReportMetric(float64(win.CPUPerRequest()-pass.CPUPerRequest())/1e3, "added-cpu-µs"+sfx)
		}
	}
	if n := s.cache.miss.Load() - misses; n > 0 {
		b.Errorf("%d signature cache misses during the measured rounds, want every signature cached", n)
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
