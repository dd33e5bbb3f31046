package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Queries are the rotating query set: each matches at least 52 of
// the 53 sample pages, so every query fills a page of 50 results.
var Queries = []string{"the", "a", "to", "of", "is", "the llvm", "a code", "of pass"}

// Targets of DESIGN.md ("Targets"), checked by the report.
const (
	targetAddedP99   = time.Millisecond
	targetThroughput = 0.80
	targetRSSMargin  = 150 << 20
	soakGrowthLimit  = 0.10
)

// Phase is what the load generator saw for one target.
type Phase struct {
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

// Memory is the process's resident memory during the run.
type Memory struct {
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

// SoakReport is the outcome of a soak ([Options].Soak).
type SoakReport struct {
	Seconds      float64   `json:"seconds"`
	Winnow       Phase     `json:"winnow"`
	RSSMiB       []float64 `json:"rss_every_30s_mib"`
	BaselineMiB  float64   `json:"rss_mean_baseline_mib"`
	LastMiB      float64   `json:"rss_mean_last_mib"`
	Window       string    `json:"window"`
	Growth       float64   `json:"growth"`
	Grew         bool      `json:"grew"`
	PeakMiB      float64   `json:"rss_peak_mib"`
	WithinLimit  bool      `json:"within_limit"`
	SigsFetched  float64   `json:"signatures_fetched"`
	SigsCached   float64   `json:"signatures_cached"`
	MarkedHits   int       `json:"marked_hits_after"`
	CheckedHits  int       `json:"checked_hits_after"`
	GoHeapEndMiB float64   `json:"go_heap_inuse_end_mib"`
	URLs         int       `json:"distinct_query_urls"`
	CacheUsedMiB float64   `json:"cache_used_end_mib"`
	CacheMiB     float64   `json:"cache_size_mib"`
	// AnswerCacheMiB is the answer cache's configured size.
	AnswerCacheMiB float64 `json:"answer_cache_size_mib"`
}

// Load generator modes of [Report].Load.
const (
	LoadClosed = "closed_loop"
	LoadRate   = "fixed_rate"
)

// Report is the whole report of [Run].
type Report struct {
	// Kind is the engine behind the targets: "demo" (the embedded demo
	// engine) or a real one's kind, at Engine, the sample in Index.
	Kind         string   `json:"engine_kind"`
	Engine       string   `json:"engine,omitempty"`
	Index        string   `json:"index,omitempty"`
	Mode         string   `json:"mode"`
	TopK         int      `json:"top_k"`
	GOMAXPROCS   int      `json:"gomaxprocs"`
	NumCPU       int      `json:"num_cpu"`
	Conns        int      `json:"conns"`
	Results      int      `json:"results"`
	Rounds       int      `json:"rounds"`
	SliceSeconds float64  `json:"slice_seconds"`
	Queries      []string `json:"queries"`
	// Load is how the targets were loaded: LoadClosed, connections
	// sending back to back, or LoadRate, RateRPS requests per second
	// whatever the answers, each latency counted from the request's due
	// time.
	Load    string  `json:"load"`
	RateRPS float64 `json:"rate_rps,omitempty"`
	// RateFraction, with -rate Fx, is F; CalibrationRPS is then the
	// pass-through's closed-loop throughput measured first, for
	// CalibrationSeconds, and RateRPS is F times it.
	RateFraction       float64 `json:"rate_fraction,omitempty"`
	CalibrationRPS     float64 `json:"calibration_passthrough_rps,omitempty"`
	CalibrationSeconds float64 `json:"calibration_seconds,omitempty"`
	Passthrough        Phase   `json:"passthrough"`
	Winnow             Phase   `json:"winnow"`
	// Collapse, on a real engine, is the engine's own collapse on the
	// page field (the sample's near-duplicate clusters), the same
	// queries through the same pass-through.
	Collapse   *Phase  `json:"collapse,omitempty"`
	AddedP99Ms float64 `json:"added_p99_ms"`
	AddedP50Ms float64 `json:"added_p50_ms"`
	// ThroughputRatio and ThroughputOK are nil at a fixed rate, where
	// both targets are sent the same requests.
	ThroughputRatio *float64 `json:"throughput_ratio"`
	AddedCPUUs      float64  `json:"added_cpu_per_query_us"`
	// ByRound are the alternating rounds' own figures, in order: their
	// spread is what one run of the comparison can tell apart.
	ByRound      []Round `json:"rounds_measured"`
	P99OK        bool    `json:"added_p99_under_1ms"`
	ThroughputOK *bool   `json:"throughput_at_least_80pct"`
	// Signatures counts winnow's results by signature source during the
	// measured slices (from its /metrics): all "cached" when warm.
	Signatures map[string]float64 `json:"signatures"`
	// MarkedHits and CheckedHits count, over one pass of the queries
	// after the run, the results winnow marked and returned (in group
	// mode including the duplicates under a winner; results past TopK
	// pass unmarked).
	MarkedHits  int         `json:"marked_results"`
	CheckedHits int         `json:"checked_results"`
	Memory      Memory      `json:"memory"`
	Soak        *SoakReport `json:"soak,omitempty"`
	// WrkPassthrough and WrkWinnow are wrk's output with -wrk.
	WrkPassthrough string `json:"wrk_passthrough,omitempty"`
	WrkWinnow      string `json:"wrk_winnow,omitempty"`
}

// Round is one alternating round of the comparison: the pass-through,
// then winnow, each loaded for one slice.
type Round struct {
	// ThroughputRatio is winnow's req/s over the pass-through's in the
	// round (closed loop; near 1 at a fixed rate).
	ThroughputRatio float64 `json:"throughput_ratio"`
	// AddedCPUUs is winnow's process CPU a request less the
	// pass-through's in the round.
	AddedCPUUs float64 `json:"added_cpu_per_query_us"`
}

// spread is the least and the greatest of the rounds' f.
func spread(rounds []Round, f func(Round) float64) (lo, hi float64) {
	for i, r := range rounds {
		v := f(r)
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return lo, hi
}

// loadName says how the targets were loaded.
func loadName(r *Report) string {
	switch {
	case r.Load == LoadRate && r.RateFraction > 0:
		return fmt.Sprintf("fixed rate %.0f req/s (%gx the pass-through's %.0f req/s closed-loop, calibrated over %.1fs)",
			r.RateRPS, r.RateFraction, r.CalibrationRPS, r.CalibrationSeconds)
	case r.Load == LoadRate:
		return fmt.Sprintf("fixed rate %.0f req/s", r.RateRPS)
	}
	return "closed loop"
}

// startBench starts the demo engine, the pass-through and winnow on

func okWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// WriteText writes the report as the lines `winnow bench` prints, the
// soak's summary included when there was one.
func (r *Report) WriteText(w io.Writer) {
	r.writeBench(w)
	if r.Soak != nil {
		r.Soak.writeText(w)
	}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r *Report) writeBench(w io.Writer) {
	if r.Engine != "" {
		fmt.Fprintf(w, "engine: %s at %s, the sample in %s (pages served by the demo engine)\n", r.Kind, r.Engine, r.Index)
	}
	fmt.Fprintf(w, "%-12s %9s %9s %8s %8s %8s %8s %8s %7s %7s %9s\n",
		"target", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "non2xx", "CPU/req")
	targets := []struct {
		name string
		p    Phase
	}{{"passthrough", r.Passthrough}, {"winnow", r.Winnow}}
	if r.Collapse != nil {
		targets = append(targets, struct {
			name string
			p    Phase
		}{"collapse", *r.Collapse})
	}
	for _, t := range targets {
		fmt.Fprintf(w, "%-12s %9d %9.0f %8.3f %8.3f %8.3f %8.3f %8.2f %7d %7d %7.1fus\n",
			t.name, t.p.Requests, t.p.RPS, t.p.P50Ms, t.p.P90Ms, t.p.P99Ms, t.p.P999Ms, t.p.MaxMs, t.p.Errors, t.p.Non2xx, t.p.CPUPerReqUs)
	}
	switch {
	case r.Load == LoadRate:
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
			if len(r.ByRound) > 1 {
				lo, hi := spread(r.ByRound, func(rd Round) float64 { return rd.ThroughputRatio })
				fmt.Fprintf(w, "throughput ratio round by round: %.3f to %.3f over %d rounds\n", lo, hi, len(r.ByRound))
			}
		}
		if r.Collapse != nil && r.Collapse.RPS > 0 {
			fmt.Fprintf(w, "throughput ratio winnow/%s's own collapse on page: %.3f\n", r.Kind, r.Winnow.RPS/r.Collapse.RPS)
		}
	}
	fmt.Fprintf(w, "added CPU per query (process CPU per request, winnow slices - passthrough slices): %.1f us", r.AddedCPUUs)
	if len(r.ByRound) > 1 {
		lo, hi := spread(r.ByRound, func(rd Round) float64 { return rd.AddedCPUUs })
		fmt.Fprintf(w, " (round by round %.1f to %.1f)", lo, hi)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "signatures during the measured slices: cached %.0f, fetched %.0f, text %.0f, unrefined %.0f\n",
		r.Signatures["cached"], r.Signatures["fetched"], r.Signatures["text"], r.Signatures["unrefined"])
	if r.Mode == "off" {
		fmt.Fprintln(w, "winnow answers: mode off (-gateway), the engine's answers relayed, nothing refined")
	} else {
		fmt.Fprintf(w, "winnow answers after the run (mode %s, top %d refined): %d of %d results carry _winnow marks\n", r.Mode, r.TopK, r.MarkedHits, r.CheckedHits)
	}
	m := r.Memory
	fmt.Fprintf(w, "memory (whole process: load generator, demo engine, both proxies): RSS start %.1f MiB, peak %.1f MiB, end %.1f MiB; "+
		"Go heap in use %.1f MiB; signature cache %.0f MiB (%.2f MiB used), answer cache %.0f MiB; limit caches + answers in flight + 150 MiB = %.0f MiB: %s\n",
		m.StartMiB, m.PeakMiB, m.EndMiB, m.HeapInuseMiB, m.CacheMiB, m.CacheUsedMiB, m.AnswerCacheMiB, m.LimitMiB, okWord(m.WithinLimit))
	if r.WrkPassthrough != "" {
		fmt.Fprintf(w, "wrk cross-check, passthrough:\n%swrk cross-check, winnow:\n%s", r.WrkPassthrough, r.WrkWinnow)
	}
}

func (s *SoakReport) writeText(w io.Writer) {
	p := s.Winnow
	fmt.Fprintf(w, "soak: %.0fs, %d requests, %.0f req/s, p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, errors %d, non2xx %d; "+
		"signatures cached %.0f, fetched %.0f; after: %d of %d results marked\n",
		s.Seconds, p.Requests, p.RPS, p.P50Ms, p.P99Ms, p.P999Ms, p.Errors, p.Non2xx, s.SigsCached, s.SigsFetched, s.MarkedHits, s.CheckedHits)
	verdict := "did not grow"
	if s.Grew {
		verdict = "GREW"
	}
	fmt.Fprintf(w, "soak: RSS mean of window 2 (%s) %.1f MiB, of the last window %.1f MiB: %+.1f%% (limit +10%%): %s; "+
		"peak %.1f MiB, within caches + answers in flight + 150 MiB: %s; Go heap in use at end %.1f MiB\n",
		s.Window, s.BaselineMiB, s.LastMiB, 100*s.Growth, verdict, s.PeakMiB, okWord(s.WithinLimit), s.GoHeapEndMiB)
	fmt.Fprintf(w, "soak: %d distinct query URLs; signature cache %.1f of %.1f MiB used at the end; answer cache %.1f MiB\n", s.URLs, s.CacheUsedMiB, s.CacheMiB, s.AnswerCacheMiB)
}
