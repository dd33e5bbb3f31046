package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/winnow-search/winnow/indextag"
	"github.com/winnow-search/winnow/internal/bench"
	"github.com/winnow-search/winnow/options"
)

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
	engineURL := fs.String("engine", "", "stand in front of the real engine at this `URL` (as scripts/engine start prints it) instead of the demo engine; "+
		"the sample is loaded into -index there, and the engine's own collapse is measured too")
	kind := fs.String("kind", "", "the -engine's `kind`: opensearch, elasticsearch or solr")
	tagged := fs.Bool("tagged", false, "with -engine: tag the loaded index as winnow index -apply does, and ask for the tags, so the proxy groups by them")
	gateway := fs.Bool("gateway", false, "load winnow with winnow_mode=off: the read-only gateway alone (allow-list, exchange, relay), refining nothing")
	index := fs.String("index", "", "the -engine's `index` (Solr core) to load the sample into, replaced (default winnow_bench)")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: winnow bench [-duration 10s] [-conns 32] [-rate 0|N|Fx] [-results 50] [-rounds 5] [-soak 0] [-churn 0] [-wrk] [-gateway] [-json]\n"+
			"                    [-engine URL -kind opensearch|elasticsearch|solr [-index winnow_bench] [-tagged]]\n\n"+
			"Measures the proxy against a plain fasthttp pass-through in front of the same\n"+
			"embedded demo engine, all in this process on 127.0.0.1, with warm signatures;\n"+
			"with -engine, in front of that real engine, the demo engine serving the pages.")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
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
	case *engineURL != "" && *kind != "opensearch" && *kind != "elasticsearch" && *kind != "solr":
		return usagef("-engine needs -kind opensearch, elasticsearch or solr")
	case *engineURL == "" && (*kind != "" || *index != "" || *tagged):
		return usagef("-kind, -index and -tagged need -engine")
	case *engineURL != "" && *churn > 0:
		return usagef("-churn needs the demo engine (its x_variant), not -engine")
	}
	po, err := options.Proxy(e.cfg, e.log)
	if err != nil {
		return err
	}
	eff := po.WithDefaults()
	memoryLimit(eff.CacheBytes + max(eff.AnswerCacheBytes, 0) + eff.AnswerBytesInFlight)
	o := bench.Options{
		Proxy: po, Duration: *duration, Conns: *conns, Results: *results, Rounds: *rounds,
		Rate: rate, RateFraction: fraction, Soak: *soak, Churn: *churn, Wrk: *useWrk,
		Engine: *engineURL, Kind: *kind, Index: *index, Gateway: *gateway,
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if !*asJSON {
		o.Progress = e.stderr
	}
	if *tagged {
		o.Tag = func(ctx context.Context, indexURL, kind string) error {
			target, err := indextag.ParseTarget(indexURL, kind)
			if err != nil {
				return err
			}
			io, err := options.Index(e.cfg, target, o.Logger)
			if err != nil {
				return err
			}
			io.Apply = true
			_, err = indextag.Run(ctx, io)
			return err
		}
	}
	rep, err := bench.Run(ctx, o)
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(e.stdout)
	}
	rep.WriteText(e.stdout)
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
