package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/internal/loadgen"
	"github.com/winnow-search/winnow/proxy"
	"github.com/winnow-search/winnow/proxy/engine"
)

// benchQueries are the rotating query set: each matches at least 52 of
// the 53 sample pages, so every query fills a page of 50 results.
var benchQueries = []string{"the", "a", "to", "of", "is", "the llvm", "a code", "of pass"}

// Targets of DESIGN.md ("Targets"), checked by the report.
const (
	targetAddedP99   = time.Millisecond
	targetThroughput = 0.80
	targetRSSMargin  = 150 << 20
	soakGrowthLimit  = 0.10
)

// phaseReport is what the load generator saw for one target.
type phaseReport struct {
	Requests  uint64  `json:"requests"`
	Errors    uint64  `json:"errors"`
	Non2xx    uint64  `json:"non_2xx"`
	FirstErr  string  `json:"first_error,omitempty"`
	Seconds   float64 `json:"seconds"`
	RPS       float64 `json:"rps"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P99Ms     float64 `json:"p99_ms"`
	P999Ms    float64 `json:"p999_ms"`
	MaxMs     float64 `json:"max_ms"`
	BodyBytes float64 `json:"mean_body_bytes"`
	// CPUPerReqUs is the process's CPU time (user + system, every
	// goroutine: load generator, demo engine and proxy) during this
	// target's slices, divided by its requests.
	CPUPerReqUs float64 `json:"cpu_per_request_us"`
	// At a fixed rate (0 in a closed loop): Late counts the requests that
	// waited for a free connection, Missed those still waiting when a
	// slice ended (never sent, so in no latency), and LagP50Ms, LagP99Ms
	// are the quantiles of the time from a request's due time to its
	// send, which its latency includes.
	Late     uint64  `json:"late"`
	Missed   uint64  `json:"missed"`
	LagP50Ms float64 `json:"send_lag_p50_ms"`
	LagP99Ms float64 `json:"send_lag_p99_ms"`
}

// memReport is the process's resident memory during the run.
type memReport struct {
	StartMiB float64 `json:"rss_start_mib"`
	PeakMiB  float64 `json:"rss_peak_mib"`
	EndMiB   float64 `json:"rss_end_mib"`
	CacheMiB float64 `json:"cache_size_mib"`
	// AnswerCacheMiB is the answer cache's configured size, part of
	// the limit with CacheMiB.
	AnswerCacheMiB float64 `json:"answer_cache_size_mib"`
	CacheUsedMiB   float64 `json:"cache_used_mib"`
	LimitMiB       float64 `json:"limit_mib"`
	WithinLimit    bool    `json:"within_limit"`
	HeapInuseMiB   float64 `json:"go_heap_inuse_mib"`
	GoSysMiB       float64 `json:"go_sys_mib"`
	SampleSeconds  int     `json:"samples"`
}

// soakReport is the outcome of -soak.
type soakReport struct {
	Seconds      float64     `json:"seconds"`
	Winnow       phaseReport `json:"winnow"`
	RSSMiB       []float64   `json:"rss_every_30s_mib"`
	BaselineMiB  float64     `json:"rss_mean_baseline_mib"`
	LastMiB      float64     `json:"rss_mean_last_mib"`
	Window       string      `json:"window"`
	Growth       float64     `json:"growth"`
	Grew         bool        `json:"grew"`
	PeakMiB      float64     `json:"rss_peak_mib"`
	WithinLimit  bool        `json:"within_limit"`
	SigsFetched  float64     `json:"signatures_fetched"`
	SigsCached   float64     `json:"signatures_cached"`
	MarkedHits   int         `json:"marked_hits_after"`
	CheckedHits  int         `json:"checked_hits_after"`
	GoHeapEndMiB float64     `json:"go_heap_inuse_end_mib"`
	URLs         int         `json:"distinct_query_urls"`
	CacheUsedMiB float64     `json:"cache_used_end_mib"`
	CacheMiB     float64     `json:"cache_size_mib"`
	// AnswerCacheMiB is the answer cache's configured size.
	AnswerCacheMiB float64 `json:"answer_cache_size_mib"`
}

// Load generator modes of benchReport.Load.
const (
	loadClosed = "closed_loop"
	loadRate   = "fixed_rate"
)

// benchReport is the whole report, written as JSON with -json.
type benchReport struct {
	Mode         string   `json:"mode"`
	TopK         int      `json:"top_k"`
	GOMAXPROCS   int      `json:"gomaxprocs"`
	NumCPU       int      `json:"num_cpu"`
	Conns        int      `json:"conns"`
	Results      int      `json:"results"`
	Rounds       int      `json:"rounds"`
	SliceSeconds float64  `json:"slice_seconds"`
	Queries      []string `json:"queries"`
	// Load is how the targets were loaded: loadClosed, connections
	// sending back to back, or loadRate, RateRPS requests per second
	// whatever the answers, each latency counted from the request's due
	// time.
	Load    string  `json:"load"`
	RateRPS float64 `json:"rate_rps,omitempty"`
	// RateFraction, with -rate Fx, is F; CalibrationRPS is then the
	// pass-through's closed-loop throughput measured first, for
	// CalibrationSeconds, and RateRPS is F times it.
	RateFraction       float64     `json:"rate_fraction,omitempty"`
	CalibrationRPS     float64     `json:"calibration_passthrough_rps,omitempty"`
	CalibrationSeconds float64     `json:"calibration_seconds,omitempty"`
	Passthrough        phaseReport `json:"passthrough"`
	Winnow             phaseReport `json:"winnow"`
	AddedP99Ms         float64     `json:"added_p99_ms"`
	AddedP50Ms         float64     `json:"added_p50_ms"`
	// ThroughputRatio and ThroughputOK are nil at a fixed rate, where
	// both targets are sent the same requests.
	ThroughputRatio *float64 `json:"throughput_ratio"`
	AddedCPUUs      float64  `json:"added_cpu_per_query_us"`
	P99OK           bool     `json:"added_p99_under_1ms"`
	ThroughputOK    *bool    `json:"throughput_at_least_80pct"`
	// Signatures counts winnow's results by signature source during the
	// measured slices (from its /metrics): all "cached" when warm.
	Signatures map[string]float64 `json:"signatures"`
	// MarkedHits and CheckedHits count, over one pass of the queries
	// after the run, the results winnow marked and returned (in group
	// mode including the duplicates under a winner; results past TopK
	// pass unmarked).
	MarkedHits  int         `json:"marked_results"`
	CheckedHits int         `json:"checked_results"`
	Memory      memReport   `json:"memory"`
	Soak        *soakReport `json:"soak,omitempty"`
	// WrkPassthrough and WrkWinnow are wrk's output with -wrk.
	WrkPassthrough string `json:"wrk_passthrough,omitempty"`
	WrkWinnow      string `json:"wrk_winnow,omitempty"`
}

// benchEnv holds the servers a bench runs against.
type benchEnv struct {
	demo       *demo.Server
	pass       *loadgen.Passthrough
	win        *proxy.Server
	winLn      net.Listener
	winDone    chan error
	cacheSize  int64 // the signature cache's
	answerSize int64 // the answer cache's
	topK       int
	mode       string
}

func runBench(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	duration := fs.Duration("duration", 10*time.Second, "total load `time`, shared by the two targets")
	conns := fs.Int("conns", 32, "connections of the load generator")
	results := fs.Int("results", 50, "results per query (size=N; at most 52)")
	rounds := fs.Int("rounds", 5, "alternating rounds (pass-through, then winnow, each duration/(2*rounds))")
	soak := fs.Duration("soak", 0, "then load winnow alone for this `time` and report whether memory grows")
	churn := fs.Int("churn", 0, "in the soak, show each page under `N` URLs (the demo's x_variant), so the signature cache fills and churns: the cold path under load")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	useWrk := fs.Bool("wrk", false, "then cross-check with wrk (if installed): one query, duration/4 on each target")
	rateArg := fs.String("rate", "0", "load both targets at this fixed `rate` in req/s, or at Fx: F times the pass-through's closed-loop req/s measured first "+
		"(open loop, latency counted from each request's due time; -conns caps the requests in flight; the soak stays closed loop); 0: closed loop")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: winnow bench [-duration 10s] [-conns 32] [-rate 0|N|Fx] [-results 50] [-rounds 5] [-soak 0] [-churn 0] [-wrk] [-json]\n\n"+
			"Measures the proxy against a plain fasthttp pass-through in front of the same\n"+
			"embedded demo engine, all in this process on 127.0.0.1, with warm signatures.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	rate, fraction, err := parseRate(*rateArg)
	if err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("bench takes no arguments")
	case *duration <= 0, *conns <= 0, *rounds <= 0:
		return usagef("-duration, -conns and -rounds must be positive")
	case *results <= 0 || *results > 52:
		return usagef("-results %d: the demo's queries match at most 52 pages", *results)
	case *soak < 0:
		return usagef("-soak must not be negative")
	case *churn < 0 || *churn > 1e9:
		return usagef("-churn must be in [0, 1e9]")
	}
	progress := e.stderr
	if *asJSON {
		progress = io.Discard
	}

	mem := newRSSSampler()
	defer mem.stop()
	be, err := startBench(e)
	if err != nil {
		return err
	}
	defer be.close(e)
	passBase := be.pass.URL()
	winBase := "http://" + be.winLn.Addr().String()
	passURLs := queryURLs(passBase, *results)
	winURLs := queryURLs(winBase, *results)

	// The pass-through must give full pages, or the comparison is moot.
	for _, u := range passURLs {
		hits, _, err := countHits(u)
		if err == nil && hits != *results {
			err = fmt.Errorf("%s gave %d hits, want %d", u, hits, *results)
		}
		if err != nil {
			return fmt.Errorf("bench: pass-through: %w", err)
		}
	}
	fmt.Fprintf(progress, "bench: warming winnow's signature cache over %d queries\n", len(winURLs))
	if err := warm(ctx, winBase, winURLs, min(*results, be.topK)); err != nil {
		return err
	}

	slice := *duration / time.Duration(2**rounds)
	rep := &benchReport{
		Mode: be.mode, TopK: be.topK,
		GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
		Conns: *conns, Results: *results, Rounds: *rounds, SliceSeconds: slice.Seconds(),
		Queries: benchQueries, Load: loadClosed, RateRPS: rate, RateFraction: fraction,
	}

	// A short unmeasured run on each target opens the connections and
	// fills the pools.
	for _, urls := range [][]string{passURLs, winURLs} {
		if _, err := loadgen.Run(ctx, loadgen.Options{URLs: urls, Conns: *conns, Duration: min(time.Second, slice)}); err != nil {
			return err
		}
	}
	if fraction > 0 {
		calib := min(max(slice, time.Second), 5*time.Second)
		fmt.Fprintf(progress, "bench: calibrating: the pass-through's closed-loop throughput over %v, %d connections\n", calib, *conns)
		res, err := loadgen.Run(ctx, loadgen.Options{URLs: passURLs, Conns: *conns, Duration: calib})
		if err != nil {
			return err
		}
		if res.Requests == 0 {
			return fmt.Errorf("bench: calibration: the pass-through answered no request: %v", res.FirstErr)
		}
		rep.CalibrationRPS, rep.CalibrationSeconds = res.RPS(), res.Elapsed.Seconds()
		rep.RateRPS = fraction * rep.CalibrationRPS
	}
	if rep.RateRPS > 0 {
		rep.Load = loadRate
	}
	fmt.Fprintf(progress, "bench: %d rounds of %v per target, %s, %d connections, %d results per query, GOMAXPROCS=%d "+
		"(load generator, demo engine and both proxies share these CPUs)\n",
		*rounds, slice, loadName(rep), *conns, *results, rep.GOMAXPROCS)
	before, err := scrapeSignatures(winBase)
	if err != nil {
		return err
	}
	mem.mark()
	got, err := loadgen.Compare(ctx, []loadgen.Target{{Name: "passthrough", URLs: passURLs}, {Name: "winnow", URLs: winURLs}},
		loadgen.CompareOptions{Conns: *conns, Rate: rep.RateRPS, Rounds: *rounds, Slice: slice, OnRound: func(r int, so []loadgen.Measured) {
			fmt.Fprintf(progress, "bench: round %d/%d: pass-through %.0f req/s p99 %.3f ms, winnow %.0f req/s p99 %.3f ms so far\n",
				r+1, *rounds, so[0].RPS(), ms(so[0].Latency.Quantile(0.99)), so[1].RPS(), ms(so[1].Latency.Quantile(0.99)))
		}})
	if err != nil {
		return err
	}
	after, err := scrapeSignatures(winBase)
	if err != nil {
		return err
	}
	rep.Signatures = map[string]float64{}
	for k, v := range after {
		rep.Signatures[k] = v - before[k]
	}
	if rep.MarkedHits, rep.CheckedHits, _, err = checkMarks(winURLs); err != nil {
		return err
	}
	rep.Passthrough = phase(&got[0])
	rep.Winnow = phase(&got[1])
	rep.AddedP99Ms = rep.Winnow.P99Ms - rep.Passthrough.P99Ms
	rep.AddedP50Ms = rep.Winnow.P50Ms - rep.Passthrough.P50Ms
	if rep.Load == loadClosed {
		var ratio float64
		if rep.Passthrough.RPS > 0 {
			ratio = rep.Winnow.RPS / rep.Passthrough.RPS
		}
		ok := ratio >= targetThroughput
		rep.ThroughputRatio, rep.ThroughputOK = &ratio, &ok
	}
	rep.AddedCPUUs = rep.Winnow.CPUPerReqUs - rep.Passthrough.CPUPerReqUs
	rep.P99OK = rep.AddedP99Ms < float64(targetAddedP99)/1e6
	rep.Memory = mem.report(be)
	if *useWrk {
		d := max(*duration/4, time.Second)
		for _, t := range []struct {
			name, url string
			dst       *string
		}{{"passthrough", passURLs[0], &rep.WrkPassthrough}, {"winnow", winURLs[0], &rep.WrkWinnow}} {
			out, err := exec.CommandContext(ctx, "wrk", "-t2", "-c"+strconv.Itoa(*conns), "-d"+strconv.Itoa(int(d.Seconds()))+"s", "--latency", t.url).CombinedOutput()
			if err != nil {
				return fmt.Errorf("bench: wrk: %v: %s", err, out)
			}
			*t.dst = string(out)
		}
	}

	if *soak > 0 {
		if !*asJSON {
			printBench(e.stdout, rep)
		}
		soakURLs := winURLs
		if *churn > 0 {
			soakURLs = churnURLs(winURLs, *churn)
		}
		if rep.Soak, err = runSoak(ctx, e.stdout, *asJSON, be, mem, winBase, soakURLs, *conns, *soak); err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(e.stdout, rep)
		}
		printSoak(e.stdout, rep.Soak)
		return nil
	}
	if *asJSON {
		return writeJSON(e.stdout, rep)
	}
	printBench(e.stdout, rep)
	return nil
}

// parseRate reads -rate: req/s, or Fx for F times the pass-through's
// measured throughput (returned as fraction, with rate 0).
func parseRate(s string) (rate, fraction float64, err error) {
	num, isFraction := strings.CutSuffix(s, "x")
	v, err := strconv.ParseFloat(num, 64)
	switch {
	case err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v):
		return 0, 0, usagef("-rate %q: want req/s (5000), 0 for a closed loop, or a multiple of the pass-through's throughput (0.5x)", s)
	case isFraction && v == 0:
		return 0, 0, usagef("-rate %q: a multiple of the pass-through's throughput must be positive", s)
	case isFraction:
		return 0, v, nil
	}
	return v, 0, nil
}

// loadName says how the targets were loaded.
func loadName(r *benchReport) string {
	switch {
	case r.Load == loadRate && r.RateFraction > 0:
		return fmt.Sprintf("fixed rate %.0f req/s (%gx the pass-through's %.0f req/s closed-loop, calibrated over %.1fs)",
			r.RateRPS, r.RateFraction, r.CalibrationRPS, r.CalibrationSeconds)
	case r.Load == loadRate:
		return fmt.Sprintf("fixed rate %.0f req/s", r.RateRPS)
	}
	return "closed loop"
}

func writeJSON(w io.Writer, rep *benchReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// startBench starts the demo engine, the pass-through and winnow on
// loopback.
func startBench(e *env) (*benchEnv, error) {
	quiet := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	eng, err := demo.New(sample.Docs(), demo.Options{Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("bench: demo engine: %w", err)
	}
	be := &benchEnv{}
	if be.demo, err = demo.Start("127.0.0.1:0", eng); err != nil {
		return nil, fmt.Errorf("bench: demo engine: %w", err)
	}
	be.pass, err = loadgen.StartPassthrough(be.demo.Addr().String())
	if err != nil {
		be.close(e)
		return nil, err
	}
	o, err := proxyOptions(e.cfg, e)
	if err != nil {
		be.close(e)
		return nil, err
	}
	o = o.WithDefaults()
	memoryLimit(o.CacheBytes + max(o.AnswerCacheBytes, 0))
	o.Logger = quiet
	o.Fetch.Logger = quiet
	o.Engines = []proxy.Engine{{Name: "demo-es", URL: be.demo.URL(),
		Adapter: engine.Config{Kind: "elasticsearch", Path: "/llvm/_search"}}}
	o.Transparent = ""
	o.Fetch.Allow = append(o.Fetch.Allow, netip.MustParsePrefix("127.0.0.0/8"))
	// Warm-up fetches every page; a generous budget lets the first pass
	// sign them all. Once warm the budget is never reached.
	o.Budget = 5 * time.Second
	be.topK = o.TopK
	be.mode = o.Mode.String()
	// The effective caches, signatures and answers (a negative answer
	// cache is off): the memory target is their size + 150 MiB.
	be.cacheSize = o.CacheBytes
	be.answerSize = max(o.AnswerCacheBytes, 0)
	if be.win, err = proxy.New(o); err != nil {
		be.close(e)
		return nil, err
	}
	if be.winLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		be.close(e)
		return nil, err
	}
	be.winDone = make(chan error, 1)
	go func() { be.winDone <- be.win.Serve(be.winLn) }()
	return be, nil
}

func (be *benchEnv) close(e *env) {
	if be.win != nil && be.winDone != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := be.win.Shutdown(ctx); err != nil {
			e.log.Warn("bench_shutdown", "err", err)
		}
		cancel()
		<-be.winDone
	}
	if be.pass != nil {
		be.pass.Close()
	}
	if be.demo != nil {
		be.demo.Close()
	}
}

// churnURLs repeats urls with the demo's x_variant=0..n-1, interleaved
// so consecutive requests ask for different variants: every page then
// shows under n URLs.
func churnURLs(urls []string, n int) []string {
	out := make([]string, 0, n*len(urls))
	for v := range n {
		for _, u := range urls {
			out = append(out, u+"&x_variant="+strconv.Itoa(v))
		}
	}
	return out
}

func queryURLs(base string, size int) []string {
	urls := make([]string, len(benchQueries))
	for i, q := range benchQueries {
		urls[i] = base + "/llvm/_search?q=" + url.QueryEscape(q) + "&size=" + strconv.Itoa(size)
	}
	return urls
}

// esHits is the part of an Elasticsearch answer the bench checks. In
// group mode a winner's _winnow holds its duplicates.
type esHits struct {
	Hits struct {
		Hits []struct {
			Winnow *struct {
				Duplicates []json.RawMessage `json:"duplicates"`
			} `json:"_winnow"`
		} `json:"hits"`
	} `json:"hits"`
}

// countHits returns the number of results in an Elasticsearch answer
// (hits, and the duplicates grouped under them) and how many carry a
// _winnow mark.
func countHits(u string) (results, marked int, err error) {
	status, body, err := fasthttp.GetTimeout(nil, u, 10*time.Second)
	if err != nil {
		return 0, 0, err
	}
	if status != fasthttp.StatusOK {
		return 0, 0, fmt.Errorf("%s: status %d", u, status)
	}
	var a esHits
	if err := json.Unmarshal(body, &a); err != nil {
		return 0, 0, fmt.Errorf("%s: %v", u, err)
	}
	for _, h := range a.Hits.Hits {
		results++
		if h.Winnow != nil {
			marked += 1 + len(h.Winnow.Duplicates)
			results += len(h.Winnow.Duplicates)
		}
	}
	return results, marked, nil
}

// checkMarks returns, over every URL, the results winnow marked, the
// results it returned, and the fewest results marked in one answer.
func checkMarks(urls []string) (marked, results, fewest int, err error) {
	fewest = -1
	for _, u := range urls {
		r, m, err := countHits(u)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("bench: winnow: %w", err)
		}
		results += r
		marked += m
		if fewest < 0 || m < fewest {
			fewest = m
		}
	}
	return marked, results, fewest, nil
}

// warm sends the queries through winnow until a whole pass finds every
// signature in the cache (no page fetched, every hit marked).
func warm(ctx context.Context, base string, urls []string, want int) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		before, err := scrapeSignatures(base)
		if err != nil {
			return err
		}
		_, _, fewest, err := checkMarks(urls)
		if err != nil {
			return err
		}
		after, err := scrapeSignatures(base)
		if err != nil {
			return err
		}
		fetched := after["fetched"] - before["fetched"] + after["text"] - before["text"]
		if fetched == 0 && fewest >= want {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("bench: winnow's cache did not warm within 60s")
}

// scrapeSignatures reads winnow_results_total by signature source from
// the proxy's /metrics.
func scrapeSignatures(base string) (map[string]float64, error) {
	status, body, err := fasthttp.GetTimeout(nil, base+"/metrics", 10*time.Second)
	if err != nil || status != fasthttp.StatusOK {
		return nil, fmt.Errorf("bench: /metrics: status %d, %v", status, err)
	}
	out := map[string]float64{}
	const prefix = `winnow_results_total{signature="`
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		src, val, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			out[src] = v
		}
	}
	return out, nil
}

// scrapeGauge reads one unlabelled gauge from /metrics, 0 if absent.
func scrapeGauge(base, name string) float64 {
	status, body, err := fasthttp.GetTimeout(nil, base+"/metrics", 10*time.Second)
	if err != nil || status != fasthttp.StatusOK {
		return 0
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func phase(r *loadgen.Measured) phaseReport {
	p := phaseReport{
		Requests: r.Requests, Errors: r.Errors, Non2xx: r.Non2xx,
		Seconds: r.Elapsed.Seconds(), RPS: r.RPS(),
		P50Ms: ms(r.Latency.Quantile(0.50)), P90Ms: ms(r.Latency.Quantile(0.90)),
		P99Ms: ms(r.Latency.Quantile(0.99)), P999Ms: ms(r.Latency.Quantile(0.999)),
		MaxMs: ms(r.Latency.Max()),
	}
	if r.FirstErr != nil {
		p.FirstErr = r.FirstErr.Error()
	}
	p.Late, p.Missed = r.Late, r.Missed
	p.LagP50Ms, p.LagP99Ms = ms(r.Lag.Quantile(0.50)), ms(r.Lag.Quantile(0.99))
	if r.Requests > 0 {
		p.BodyBytes = float64(r.Bytes) / float64(r.Requests)
		p.CPUPerReqUs = float64(r.CPUPerRequest()) / 1e3
	}
	return p
}

// rssSampler reads the process's resident memory (VmRSS) every second.
type rssSampler struct {
	mu      sync.Mutex // guards samples and from
	samples []rssSample
	from    int // index of the first sample of the measured run
	done    chan struct{}
	wg      sync.WaitGroup
}

type rssSample struct {
	at  time.Time
	rss int64
}

func newRSSSampler() *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	s.sample()
	s.wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.sample()
			}
		}
	})
	return s
}

func (s *rssSampler) stop() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.wg.Wait()
}

func (s *rssSampler) sample() {
	v := readRSS()
	s.mu.Lock()
	s.samples = append(s.samples, rssSample{time.Now(), v})
	s.mu.Unlock()
}

// mark takes a sample now and starts the measured run there.
func (s *rssSampler) mark() {
	s.sample()
	s.mu.Lock()
	s.from = len(s.samples) - 1
	s.mu.Unlock()
}

// since returns the samples taken at or after t.
func (s *rssSampler) since(t time.Time) []rssSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []rssSample
	for _, x := range s.samples {
		if !x.at.Before(t) {
			out = append(out, x)
		}
	}
	return out
}

// memoryLimit is the resident-memory target: the configured caches +
// 150 MiB.
func (be *benchEnv) memoryLimit() int64 { return be.cacheSize + be.answerSize + targetRSSMargin }

func (s *rssSampler) report(be *benchEnv) memReport {
	s.sample()
	s.mu.Lock()
	run := append([]rssSample(nil), s.samples[s.from:]...)
	s.mu.Unlock()
	var m memReport
	for _, x := range run {
		m.PeakMiB = max(m.PeakMiB, mib(x.rss))
	}
	m.StartMiB, m.EndMiB = mib(run[0].rss), mib(run[len(run)-1].rss)
	m.SampleSeconds = len(run)
	m.CacheMiB, m.AnswerCacheMiB = mib(be.cacheSize), mib(be.answerSize)
	m.CacheUsedMiB = scrapeGauge("http://"+be.winLn.Addr().String(), "winnow_cache_cost_bytes") / (1 << 20)
	m.LimitMiB = mib(be.memoryLimit())
	m.WithinLimit = m.PeakMiB <= m.LimitMiB
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.HeapInuseMiB, m.GoSysMiB = mib(int64(ms.HeapInuse)), mib(int64(ms.Sys))
	return m
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// readRSS returns VmRSS from /proc/self/status in bytes, 0 if unknown.
func readRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				return 0
			}
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// runSoak loads winnow alone for d in 30s slices, printing RSS after
// each, and compares the mean RSS of the last window with that of the
// second (window: one minute, or a quarter of d if shorter).
func runSoak(ctx context.Context, w io.Writer, quiet bool, be *benchEnv, mem *rssSampler, base string, urls []string, conns int, d time.Duration) (*soakReport, error) {
	out := w
	if quiet {
		out = io.Discard
	}
	before, err := scrapeSignatures(base)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	mem.sample()
	fmt.Fprintf(out, "soak: winnow alone for %v, %d connections; RSS every 30s\n", d, conns)
	var total loadgen.Measured
	rep := &soakReport{}
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
	after, err := scrapeSignatures(base)
	if err != nil {
		return nil, err
	}
	rep.SigsCached = after["cached"] - before["cached"]
	rep.SigsFetched = after["fetched"] - before["fetched"]
	if rep.MarkedHits, rep.CheckedHits, _, err = checkMarks(urls[:min(len(urls), len(benchQueries))]); err != nil {
		return nil, err
	}
	rep.URLs = len(urls)
	rep.CacheUsedMiB = scrapeGauge(base, "winnow_cache_cost_bytes") / (1 << 20)
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

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func okWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

func printBench(w io.Writer, r *benchReport) {
	fmt.Fprintf(w, "%-12s %9s %9s %8s %8s %8s %8s %8s %7s %7s %9s\n",
		"target", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "non2xx", "CPU/req")
	for _, t := range []struct {
		name string
		p    phaseReport
	}{{"passthrough", r.Passthrough}, {"winnow", r.Winnow}} {
		fmt.Fprintf(w, "%-12s %9d %9.0f %8.3f %8.3f %8.3f %8.3f %8.2f %7d %7d %7.1fus\n",
			t.name, t.p.Requests, t.p.RPS, t.p.P50Ms, t.p.P90Ms, t.p.P99Ms, t.p.P999Ms, t.p.MaxMs, t.p.Errors, t.p.Non2xx, t.p.CPUPerReqUs)
	}
	switch {
	case r.Load == loadRate:
		fmt.Fprintf(w, "load: %s to each target; latency counts from each request's due time\n", loadName(r))
		fmt.Fprintf(w, "schedule: passthrough %d late, %d missed, send lag p50 %.3f ms p99 %.3f ms; winnow %d late, %d missed, send lag p50 %.3f ms p99 %.3f ms "+
			"(late: waited for one of the %d connections; missed: never sent, still waiting when a slice ended; send lag: due to sent, in the latency)\n",
			r.Passthrough.Late, r.Passthrough.Missed, r.Passthrough.LagP50Ms, r.Passthrough.LagP99Ms,
			r.Winnow.Late, r.Winnow.Missed, r.Winnow.LagP50Ms, r.Winnow.LagP99Ms, r.Conns)
		if r.Passthrough.Missed+r.Winnow.Missed > 0 {
			fmt.Fprintf(w, "WARNING: requests missed: the rate is more than a target sustains here, and its latencies leave out the backlog\n")
		}
		fmt.Fprintf(w, "added latency at %.0f req/s: p50 %+.3f ms, p99 %+.3f ms (target < 1 ms: %s)\n", r.RateRPS, r.AddedP50Ms, r.AddedP99Ms, okWord(r.P99OK))
		fmt.Fprintf(w, "throughput ratio: not measured at a fixed rate (both targets are sent %.0f req/s); run without -rate to compare throughput\n", r.RateRPS)
	default:
		how := fmt.Sprintf("%d connections back to back: at saturation latency is mostly queueing (connections / throughput), not what winnow adds per request; see -rate", r.Conns)
		if r.Conns == 1 {
			how = "1 connection, one request at a time: no queueing"
		}
		fmt.Fprintf(w, "added latency in a closed loop (%s): p50 %+.3f ms, p99 %+.3f ms (target < 1 ms: %s)\n", how, r.AddedP50Ms, r.AddedP99Ms, okWord(r.P99OK))
		if r.ThroughputRatio != nil && r.ThroughputOK != nil {
			fmt.Fprintf(w, "throughput ratio winnow/passthrough: %.3f (target >= %.2f: %s)\n", *r.ThroughputRatio, targetThroughput, okWord(*r.ThroughputOK))
		}
	}
	fmt.Fprintf(w, "added CPU per query (process CPU per request, winnow slices - passthrough slices): %.1f us\n", r.AddedCPUUs)
	fmt.Fprintf(w, "signatures during the measured slices: cached %.0f, fetched %.0f, text %.0f, unrefined %.0f\n",
		r.Signatures["cached"], r.Signatures["fetched"], r.Signatures["text"], r.Signatures["unrefined"])
	fmt.Fprintf(w, "winnow answers after the run (mode %s, top %d refined): %d of %d results carry _winnow marks\n", r.Mode, r.TopK, r.MarkedHits, r.CheckedHits)
	m := r.Memory
	fmt.Fprintf(w, "memory (whole process: load generator, demo engine, both proxies): RSS start %.1f MiB, peak %.1f MiB, end %.1f MiB; "+
		"Go heap in use %.1f MiB; signature cache %.0f MiB (%.2f MiB used), answer cache %.0f MiB; limit caches + 150 MiB = %.0f MiB: %s\n",
		m.StartMiB, m.PeakMiB, m.EndMiB, m.HeapInuseMiB, m.CacheMiB, m.CacheUsedMiB, m.AnswerCacheMiB, m.LimitMiB, okWord(m.WithinLimit))
	if r.WrkPassthrough != "" {
		fmt.Fprintf(w, "wrk cross-check, passthrough:\n%swrk cross-check, winnow:\n%s", r.WrkPassthrough, r.WrkWinnow)
	}
}

func printSoak(w io.Writer, s *soakReport) {
	p := s.Winnow
	fmt.Fprintf(w, "soak: %.0fs, %d requests, %.0f req/s, p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, errors %d, non2xx %d; "+
		"signatures cached %.0f, fetched %.0f; after: %d of %d results marked\n",
		s.Seconds, p.Requests, p.RPS, p.P50Ms, p.P99Ms, p.P999Ms, p.Errors, p.Non2xx, s.SigsCached, s.SigsFetched, s.MarkedHits, s.CheckedHits)
	verdict := "did not grow"
	if s.Grew {
		verdict = "GREW"
	}
	fmt.Fprintf(w, "soak: RSS mean of window 2 (%s) %.1f MiB, of the last window %.1f MiB: %+.1f%% (limit +10%%): %s; "+
		"peak %.1f MiB, within caches + 150 MiB: %s; Go heap in use at end %.1f MiB\n",
		s.Window, s.BaselineMiB, s.LastMiB, 100*s.Growth, verdict, s.PeakMiB, okWord(s.WithinLimit), s.GoHeapEndMiB)
	fmt.Fprintf(w, "soak: %d distinct query URLs; signature cache %.1f of %.1f MiB used at the end; answer cache %.1f MiB\n", s.URLs, s.CacheUsedMiB, s.CacheMiB, s.AnswerCacheMiB)
}
