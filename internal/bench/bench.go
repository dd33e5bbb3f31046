package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/internal/loadgen"
	"github.com/winnow-search/winnow/proxy"
)

// Options configure [Run]. Zero fields take the defaults named.
type Options struct {
	// Proxy is the proxy's configuration (from `winnow serve`'s); Run
	// replaces its engines with the demo engine, allows loopback fetches
	// and lengthens the budget for the warm-up.
	Proxy proxy.Options
	// Duration is the total load time, shared by the two targets.
	// Default 10s.
	Duration time.Duration
	// Conns is the load generator's connections. Default 32.
	Conns int
	// Results is the page size of each query, at most 52 (the demo's
	// queries match 52 or 53 pages). Default 50.
	Results int
	// Rounds alternate the targets, each Duration/(2·Rounds). Default 5.
	Rounds int
	// Rate, when positive, loads both targets at this fixed rate in
	// req/s; RateFraction, when positive, at that multiple of the
	// pass-through's closed-loop throughput measured first. Both zero: a
	// closed loop.
	Rate, RateFraction float64
	// Soak, when positive, then loads winnow alone this long and reports
	// whether memory grows; Churn shows each page under Churn URLs in it.
	Soak  time.Duration
	Churn int
	// Wrk cross-checks with wrk (if installed), one query, Duration/4 on
	// each target.
	Wrk bool
	// Progress receives progress lines; nil discards them.
	Progress io.Writer
	// Logger receives the servers' logs (`winnow bench` passes one at
	// warning level); nil: slog.Default().
	Logger *slog.Logger
	// Engine, when set, is a real engine's base address (as
	// scripts/engine prints it) that the pass-through and winnow stand in
	// front of instead of the demo engine; Kind is its kind
	// ("opensearch", "elasticsearch" or "solr"). Run loads the sample into
	// Index there (default "winnow_bench", replaced), with page URLs on
	// the demo engine, which still serves the pages, and measures the
	// engine's own collapse on the page field as a third target.
	Engine, Kind, Index string
	// Tag, when set with Engine, tags the loaded index as `winnow index
	// -apply` does (it is given the index's URL, as that command takes
	// it), and both targets then ask for the tags too: the proxy groups
	// the hits by them instead of fetching and signing.
	Tag func(ctx context.Context, indexURL, kind string) error
	// Gateway loads winnow with winnow_mode=off on every query: it checks
	// and forwards each search and relays the engine's answer, refining
	// nothing, so the report gives the read-only gateway's own cost
	// beside the pass-through (mode "off").
	Gateway bool
}

func (o Options) withDefaults() Options {
	o.Duration = cmpOr(o.Duration, 10*time.Second)
	o.Conns = cmpOr(o.Conns, 32)
	o.Results = cmpOr(o.Results, 50)
	o.Rounds = cmpOr(o.Rounds, 5)
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.Duration < 0 || o.Conns < 0 || o.Rounds < 0 {
		errs = append(errs, errors.New("bench: duration, conns and rounds must be positive"))
	}
	if o.Results < 0 || o.Results > 52 {
		errs = append(errs, fmt.Errorf("bench: results %d: the demo's queries match at most 52 pages", o.Results))
	}
	if o.Soak < 0 || o.Churn < 0 || o.Rate < 0 || o.RateFraction < 0 {
		errs = append(errs, errors.New("bench: soak, churn and rate must not be negative"))
	}
	if o.Engine != "" {
		if _, err := realBackend(o.Kind, o.Engine, cmpOr(o.Index, defaultIndex)); err != nil {
			errs = append(errs, err)
		}
		if o.Churn > 0 {
			errs = append(errs, errors.New("bench: churn needs the demo engine (its x_variant), not a real engine"))
		}
	} else if o.Kind != "" || o.Index != "" {
		errs = append(errs, errors.New("bench: an engine kind or index without an engine address"))
	}
	return errors.Join(errs...)
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Run starts the demo engine, a plain pass-through and winnow on
// loopback, warms winnow's signature cache, loads the two targets in
// alternating rounds and reports what it measured; then the soak, if
// asked. It stops early with ctx's error.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	mem := newRSSSampler()
	defer mem.stop()
	be, err := start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer be.close(o.Logger)
	passURLs := be.backend.queryURLs(be.pass.URL(), o.Results)
	winURLs := be.backend.queryURLs("http://"+be.winLn.Addr().String(), o.Results)
	// The pass-through must give full pages, or the comparison is moot.
	for _, u := range passURLs {
		hits, _, err := be.countHits(u)
		if err == nil && hits != o.Results {
			err = fmt.Errorf("%s gave %d hits, want %d", u, hits, o.Results)
		}
		if err != nil {
			return nil, fmt.Errorf("bench: pass-through: %w", err)
		}
	}
	fmt.Fprintf(o.Progress, "bench: warming winnow's signature cache over %d queries\n", len(winURLs))
	if err := be.warm(ctx, winURLs, min(o.Results, be.topK)); err != nil {
		return nil, err
	}
	loadURLs := winURLs
	if o.Gateway {
		loadURLs = make([]string, len(winURLs))
		for i, u := range winURLs {
			loadURLs[i] = u + "&winnow_mode=off"
		}
		be.mode = "off"
	}
	rep, err := measure(ctx, o, be, mem, passURLs, loadURLs)
	if err != nil {
		return nil, err
	}
	if o.Wrk {
		if rep.WrkPassthrough, rep.WrkWinnow, err = runWrk(ctx, o, passURLs[0], winURLs[0]); err != nil {
			return nil, err
		}
	}
	if o.Soak > 0 {
		soakURLs := winURLs
		if o.Churn > 0 {
			soakURLs = churnURLs(winURLs, o.Churn)
		}
		if rep.Soak, err = runSoak(ctx, o.Progress, be, mem, soakURLs, o.Conns, o.Soak); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// measure loads the pass-through and winnow in alternating rounds.
func measure(ctx context.Context, o Options, be *env, mem *rssSampler, passURLs, winURLs []string) (*Report, error) {
	slice := o.Duration / time.Duration(2*o.Rounds)
	rep := &Report{
		Mode: be.mode, TopK: be.topK,
		GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
		Conns: o.Conns, Results: o.Results, Rounds: o.Rounds, SliceSeconds: slice.Seconds(),
		Queries: Queries, Load: LoadClosed, RateRPS: o.Rate, RateFraction: o.RateFraction,
		Engine: o.Engine, Kind: cmpOr(be.backend.kind, "demo"), Index: be.backend.index,
	}
	// A short unmeasured run on each target opens the connections and
	// fills the pools.
	for _, urls := range [][]string{passURLs, winURLs} {
		if _, err := loadgen.Run(ctx, loadgen.Options{URLs: urls, Conns: o.Conns, Duration: min(time.Second, slice)}); err != nil {
			return nil, err
		}
	}
	if err := calibrate(ctx, o, rep, slice, passURLs); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "bench: %d rounds of %v per target, %s, %d connections, %d results per query, GOMAXPROCS=%d "+
		"(load generator, demo engine and both proxies share these CPUs)\n",
		o.Rounds, slice, loadName(rep), o.Conns, o.Results, rep.GOMAXPROCS)
	before := be.win.Stats().Signatures
	mem.mark()
	targets := []loadgen.Target{{Name: "passthrough", URLs: passURLs}, {Name: "winnow", URLs: winURLs}}
	if be.backend.kind != "" {
		// The engine's own collapse, through the same pass-through.
		targets = append(targets, loadgen.Target{Name: "collapse", URLs: be.backend.collapseURLs(be.pass.URL(), o.Results)})
	}
	var prev [2]loadgen.Measured
	got, err := loadgen.Compare(ctx, targets,
		loadgen.CompareOptions{Conns: o.Conns, Rate: rep.RateRPS, Rounds: o.Rounds, Slice: slice, OnRound: func(r int, so []loadgen.Measured) {
			fmt.Fprintf(o.Progress, "bench: round %d/%d: pass-through %.0f req/s p99 %.3f ms, winnow %.0f req/s p99 %.3f ms so far\n",
				r+1, o.Rounds, so[0].RPS(), ms(so[0].Latency.Quantile(0.99)), so[1].RPS(), ms(so[1].Latency.Quantile(0.99)))
			rep.ByRound = append(rep.ByRound, roundOf(prev, so))
			prev = [2]loadgen.Measured{so[0], so[1]}
		}})
	if err != nil {
		return nil, err
	}
	rep.Signatures = signatureDelta(before, be.win.Stats().Signatures)
	if !o.Gateway {
		if rep.MarkedHits, rep.CheckedHits, _, err = be.checkMarks(winURLs); err != nil {
			return nil, err
		}
	}
	rep.Passthrough = phase(&got[0])
	rep.Winnow = phase(&got[1])
	if len(got) > 2 {
		c := phase(&got[2])
		rep.Collapse = &c
	}
	rep.compare()
	rep.Memory = mem.report(be)
	return rep, nil
}

// roundOf is one round's figures: the targets' results after it, so,
// less their results before it, prev (Compare's are cumulative).
func roundOf(prev [2]loadgen.Measured, so []loadgen.Measured) Round {
	var rd Round
	var rps, cpu [2]float64
	for i := range prev {
		req := so[i].Requests - prev[i].Requests
		if el := (so[i].Elapsed - prev[i].Elapsed).Seconds(); el > 0 {
			rps[i] = float64(req) / el
		}
		if req > 0 {
			cpu[i] = float64((so[i].CPU - prev[i].CPU).Microseconds()) / float64(req)
		}
	}
	if rps[0] > 0 {
		rd.ThroughputRatio = rps[1] / rps[0]
	}
	rd.AddedCPUUs = cpu[1] - cpu[0]
	return rd
}

// calibrate measures the pass-through's closed-loop throughput when the
// rate is a multiple of it, and sets the report's load.
func calibrate(ctx context.Context, o Options, rep *Report, slice time.Duration, passURLs []string) error {
	if o.RateFraction > 0 {
		calib := min(max(slice, time.Second), 5*time.Second)
		fmt.Fprintf(o.Progress, "bench: calibrating: the pass-through's closed-loop throughput over %v, %d connections\n", calib, o.Conns)
		res, err := loadgen.Run(ctx, loadgen.Options{URLs: passURLs, Conns: o.Conns, Duration: calib})
		if err != nil {
			return err
		}
		if res.Requests == 0 {
			return fmt.Errorf("bench: calibration: the pass-through answered no request: %v", res.FirstErr)
		}
		rep.CalibrationRPS, rep.CalibrationSeconds = res.RPS(), res.Elapsed.Seconds()
		rep.RateRPS = o.RateFraction * rep.CalibrationRPS
	}
	if rep.RateRPS > 0 {
		rep.Load = LoadRate
	}
	return nil
}

// compare fills the differences between the two targets and the targets
// met.
func (rep *Report) compare() {
	rep.AddedP99Ms = rep.Winnow.P99Ms - rep.Passthrough.P99Ms
	rep.AddedP50Ms = rep.Winnow.P50Ms - rep.Passthrough.P50Ms
	if rep.Load == LoadClosed {
		var ratio float64
		if rep.Passthrough.RPS > 0 {
			ratio = rep.Winnow.RPS / rep.Passthrough.RPS
		}
		ok := ratio >= targetThroughput
		rep.ThroughputRatio, rep.ThroughputOK = &ratio, &ok
	}
	rep.AddedCPUUs = rep.Winnow.CPUPerReqUs - rep.Passthrough.CPUPerReqUs
	rep.P99OK = rep.AddedP99Ms < float64(targetAddedP99)/1e6
}

// signatureDelta is what the proxy signed between two snapshots, by
// source, as the report names them.
func signatureDelta(before, after proxy.SignatureStats) map[string]float64 {
	return map[string]float64{
		"cached": float64(after.Cached - before.Cached), "text": float64(after.Text - before.Text),
		"fetched": float64(after.Fetched - before.Fetched), "service": float64(after.Service - before.Service),
		"unrefined": float64(after.Unrefined - before.Unrefined),
	}
}

// runWrk cross-checks each target with wrk.
func runWrk(ctx context.Context, o Options, passURL, winURL string) (pass, win string, err error) {
	d := max(o.Duration/4, time.Second)
	for _, t := range []struct {
		url string
		dst *string
	}{{passURL, &pass}, {winURL, &win}} {
		out, err := exec.CommandContext(ctx, "wrk", "-t2", "-c"+strconv.Itoa(o.Conns), "-d"+strconv.Itoa(int(d.Seconds()))+"s", "--latency", t.url).CombinedOutput()
		if err != nil {
			return "", "", fmt.Errorf("bench: wrk: %v: %s", err, out)
		}
		*t.dst = string(out)
	}
	return pass, win, nil
}

// start starts the demo engine, the pass-through and winnow on loopback;
// with o.Engine it loads the sample into that engine and puts the
// pass-through and winnow in front of it.
func start(ctx context.Context, o Options) (*env, error) {
	quiet := o.Logger // the servers' warnings only: the caller's level
	eng, err := demo.New(sample.Docs(), demo.Options{Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("bench: demo engine: %w", err)
	}
	be := &env{}
	if be.demo, err = demo.Start("127.0.0.1:0", eng); err != nil {
		return nil, fmt.Errorf("bench: demo engine: %w", err)
	}
	be.backend = demoBackend(be.demo.URL())
	if o.Engine != "" {
		if be.backend, err = realBackend(o.Kind, o.Engine, cmpOr(o.Index, defaultIndex)); err != nil {
			be.close(quiet)
			return nil, err
		}
		fmt.Fprintf(o.Progress, "bench: loading the sample into %s %s at %s\n", o.Kind, be.backend.index, o.Engine)
		if err := be.backend.load(ctx, o.Engine, be.demo.URL()); err != nil {
			be.close(quiet)
			return nil, err
		}
		if o.Tag != nil {
			fmt.Fprintf(o.Progress, "bench: tagging %s with winnow index -apply\n", be.backend.index)
			if err := o.Tag(ctx, be.backend.indexURL(), o.Kind); err != nil {
				be.close(quiet)
				return nil, fmt.Errorf("bench: tagging the index: %w", err)
			}
			be.backend.tagged = true
		}
	}
	if be.pass, err = loadgen.StartPassthrough(strings.TrimPrefix(strings.TrimPrefix(be.backend.origin, "http://"), "https://")); err != nil {
		be.close(quiet)
		return nil, err
	}
	po := o.Proxy.WithDefaults()
	po.Logger = quiet
	po.Fetch.Logger = quiet
	po.Engines = []proxy.Engine{{Name: cmpOr(be.backend.kind, "demo-es"), URL: be.backend.origin, Adapter: be.backend.adapter()}}
	po.Transparent = ""
	po.Fetch.Allow = append(po.Fetch.Allow, netip.MustParsePrefix("127.0.0.0/8"))
	// Warm-up fetches every page; a generous budget lets the first pass
	// sign them all. Once warm the budget is never reached.
	po.Budget = 5 * time.Second
	be.topK, be.mode = po.TopK, po.Mode.String()
	// The effective caches, signatures and answers (a negative answer
	// cache is off), and the bound on answers in flight: the memory
	// target is their size + 150 MiB.
	be.cacheSize, be.answerSize = po.CacheBytes, max(po.AnswerCacheBytes, 0)
	be.inflightSize = po.AnswerBytesInFlight
	if be.win, err = proxy.New(po); err != nil {
		be.close(quiet)
		return nil, err
	}
	if be.winLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		be.close(quiet)
		return nil, err
	}
	be.win.LimitMemory(ctx, time.Second) // as winnow serve runs it
	be.winDone = make(chan error, 1)
	go func() { be.winDone <- be.win.Serve(be.winLn) }()
	return be, nil
}

func (be *env) close(log *slog.Logger) {
	if be.win != nil && be.winDone != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := be.win.Shutdown(ctx); err != nil {
			log.Warn("bench_shutdown", "err", err)
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

// env holds the servers a bench runs against.
type env struct {
	backend    backend
	demo       *demo.Server
	pass       *loadgen.Passthrough
	win        *proxy.Server
	winLn      net.Listener
	winDone    chan error
	cacheSize  int64 // the signature cache's
	answerSize int64 // the answer cache's
	// inflightSize is the bound on engine answers in flight.
	inflightSize int64
	topK         int
	mode         string
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

// esHits is the part of an Elasticsearch answer the bench checks. In
// group mode a winner's duplicates are its inner_hits named "winnow".
type esHits struct {
	Hits struct {
		Hits []struct {
			InnerHits struct {
				Winnow struct {
					Hits struct {
						Hits []json.RawMessage `json:"hits"`
					} `json:"hits"`
				} `json:"winnow"`
			} `json:"inner_hits"`
			Winnow *struct{} `json:"_winnow"`
		} `json:"hits"`
	} `json:"hits"`
}

// countHits returns the number of results in an Elasticsearch or Solr
// answer (hits, and the duplicates grouped under them) and how many carry
// a _winnow mark.
func (be *env) countHits(u string) (results, marked int, err error) {
	status, body, err := fasthttp.GetTimeout(nil, u, 10*time.Second)
	if err != nil {
		return 0, 0, err
	}
	if status != fasthttp.StatusOK {
		return 0, 0, fmt.Errorf("%s: status %d", u, status)
	}
	if be.backend.solr() {
		if results, marked, err = countSolr(body); err != nil {
			return 0, 0, fmt.Errorf("%s: %v", u, err)
		}
		return results, marked, nil
	}
	var a esHits
	if err := json.Unmarshal(body, &a); err != nil {
		return 0, 0, fmt.Errorf("%s: %v", u, err)
	}
	for _, h := range a.Hits.Hits {
		results++
		if h.Winnow != nil {
			dups := len(h.InnerHits.Winnow.Hits.Hits)
			marked += 1 + dups
			results += dups
		}
	}
	return results, marked, nil
}

// checkMarks returns, over every URL, the results winnow marked, the
// results it returned, and the fewest results marked in one answer.
func (be *env) checkMarks(urls []string) (marked, results, fewest int, err error) {
	fewest = -1
	for _, u := range urls {
		r, m, err := be.countHits(u)
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
func (be *env) warm(ctx context.Context, urls []string, want int) error {
	win := be.win
	deadline := time.Now().Add(60 * time.Second)
	var fetched, fewest int64
	for time.Now().Before(deadline) && ctx.Err() == nil {
		before := win.Stats().Signatures
		_, _, least, err := be.checkMarks(urls)
		if err != nil {
			return err
		}
		after := win.Stats().Signatures
		fetched, fewest = int64(after.Fetched-before.Fetched+after.Text-before.Text), int64(least)
		if fetched == 0 && least >= want {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("bench: winnow's cache did not warm within 60s (the last pass signed %d pages; fewest results marked in an answer %d, want %d)", fetched, fewest, want)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func phase(r *loadgen.Measured) Phase {
	p := Phase{
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
