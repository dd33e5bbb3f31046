package proxy

import (
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/similarity"
)

// latencyBuckets are the upper bounds, in seconds, of the latency
// histograms: from 100µs (a warm answer) to 10s (a slow engine), so
// histogram_quantile resolves a sub-millisecond p99.
var latencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// metrics holds the proxy's metrics in a registry of its own (no
// globals); /metrics writes it in Prometheus text format with HELP and
// TYPE on every metric and cumulative le buckets on every histogram, so a
// stock Prometheus can take quantiles. Labels are bounded: engine names
// come from the configuration, never from requests.
type metrics struct {
	reg *prometheus.Registry

	requests, engineRequests, clusterLookups *prometheus.CounterVec
	requestDuration, engineDuration          *prometheus.HistogramVec
	clusterDuration                          prometheus.Observer
	results, duplicates, fetches, feedPages  *prometheus.CounterVec
	clusterURLCounts, unrefinedAnswers       *prometheus.CounterVec
	answersCut                               *prometheus.CounterVec
	clusters, refusedWrites, internalPages   prometheus.Counter

	// sources counts results by signature source, in the order of
	// sigSource, for Stats.
	sources [srcService + 1]atomic.Uint64

	// children caches the labelled metrics a request updates, so the hot
	// path neither hashes label values nor allocates (WithLabelValues
	// does both).
	mu       sync.RWMutex // guards counters and observers
	counters map[childKey]prometheus.Counter
	obs      map[childKey]prometheus.Observer

	// The children every request updates, by index and resolved on first
	// use: by route and status class, by route, by signature source and
	// by mode (an engine's are its upstream's). A request loads a pointer
	// each instead of hashing a key of three fields under a lock: the
	// metrics of a search cost 1.6 k instructions, not 5.3 k
	// (BenchmarkMetricsPerRequest under callgrind). A child is still
	// made only once counted, so /metrics lists only what happened.
	requestChildren  [numRoutes][len(statusClasses)]lazyCounter
	durationChildren [numRoutes]lazyObserver
	resultChildren   [srcService + 1]lazyCounter
	dupChildren      [engine.Annotate + 1]lazyCounter
}

// lazyCounter is a labelled counter resolved on first use: later uses
// load one pointer. Safe for concurrent use; the zero value is
// unresolved.
type lazyCounter struct {
	p atomic.Pointer[prometheus.Counter]
}

// lazyObserver is lazyCounter for a histogram.
type lazyObserver struct {
	p atomic.Pointer[prometheus.Observer]
}

// counterIn returns c's counter, resolving it first as v's counter for
// label values a and b (counterOf). Two requests that resolve it at once
// store the same child.
func (m *metrics) counterIn(c *lazyCounter, v *prometheus.CounterVec, a, b string) prometheus.Counter {
	if p := c.p.Load(); p != nil {
		return *p
	}
	k := m.counterOf(v, a, b)
	c.p.Store(&k)
	return k
}

// observerIn is counterIn for histograms of one label.
func (m *metrics) observerIn(o *lazyObserver, v *prometheus.HistogramVec, a string) prometheus.Observer {
	if p := o.p.Load(); p != nil {
		return *p
	}
	k := m.observerOf(v, a)
	o.p.Store(&k)
	return k
}

// engineChildren are one engine's labelled metrics, resolved on first
// use ([metrics.engine]): one counter an outcome, and the duration.
type engineChildren struct {
	outcomes [numOutcomes]lazyCounter
	duration lazyObserver
}

// childKey names one labelled metric: its vector and label values.
type childKey struct {
	vec  any
	a, b string
}

// counterOf returns v's counter for label values a and b ("" when v has
// one label).
func (m *metrics) counterOf(v *prometheus.CounterVec, a, b string) prometheus.Counter {
	k := childKey{v, a, b}
	m.mu.RLock()
	c := m.counters[k]
	m.mu.RUnlock()
	if c == nil {
		if b == "" {
			c = v.WithLabelValues(a)
		} else {
			c = v.WithLabelValues(a, b)
		}
		m.mu.Lock()
		m.counters[k] = c
		m.mu.Unlock()
	}
	return c
}

// observerOf is counterOf for histograms of one label.
func (m *metrics) observerOf(v *prometheus.HistogramVec, a string) prometheus.Observer {
	k := childKey{v, a, ""}
	m.mu.RLock()
	o := m.obs[k]
	m.mu.RUnlock()
	if o == nil {
		o = v.WithLabelValues(a)
		m.mu.Lock()
		m.obs[k] = o
		m.mu.Unlock()
	}
	return o
}

func newMetrics(s *Server) *metrics {
	m := newMetricsRegistry()
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(v)
		return v
	}
	histogram := func(name, help string, labels ...string) *prometheus.HistogramVec {
		v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets}, labels)
		m.reg.MustRegister(v)
		return v
	}
	m.requests = counter("winnow_requests_total", "Client requests by route and status class.", "route", "code")
	m.requestDuration = histogram("winnow_request_duration_seconds", "Time to answer a client request, by route.", "route")
	m.engineRequests = counter("winnow_engine_requests_total", "Calls to search engines by engine and outcome.", "engine", "outcome")
	m.answersCut = counter("winnow_engine_answers_cut_total",
		"Engine answers relayed to the client unread by winnow that the engine's connection ended short (cut, reset, or silent past the engine's timeout): the client got them cut too.", "engine")
	m.engineDuration = histogram("winnow_engine_duration_seconds", "Time of one call to a search engine.", "engine")
	m.clusterLookups = counter("winnow_cluster_lookups_total", "Lookups in the cluster service by outcome.", "outcome")
	m.clusterURLCounts = counter("winnow_cluster_lookup_urls_total", "URLs looked up in the cluster service, by whether it knew them.", "result")
	m.clusterDuration = histogram("winnow_cluster_lookup_duration_seconds", "Time of one lookup in the cluster service.").WithLabelValues()
	m.results = counter("winnow_results_total", "Results refined, by where their signature came from.", "signature")
	m.duplicates = counter("winnow_duplicates_total", "Results removed or grouped as duplicates, by mode.", "mode")
	m.fetches = counter("winnow_fetches_total", "Result pages fetched, by outcome.", "outcome")
	m.feedPages = counter("winnow_cluster_feed_pages_total", "Signatures fed back to the cluster service, by outcome.", "outcome")
	m.unrefinedAnswers = counter("winnow_answers_unrefined_total",
		"Engine answers of searches passed through unrefined, by reason (budget: over the bound on answer bytes in flight; msearch: a multi-search, passed as the engine gave it; rewrite, engine_request, engine_unreachable, compressed, read, parse, render: winnow could not refine it; unsigned: no result could be signed).", "reason")
	for _, reason := range unrefinedReasons {
		m.unrefinedAnswers.WithLabelValues(reason) // a series at 0 from the start, for alerts
	}
	m.clusters = counter("winnow_clusters_total", "Clusters of two or more results found.").WithLabelValues()
	m.refusedWrites = counter("winnow_gateway_refused_total", "Requests the read-only gateway refused (not a search route).").WithLabelValues()
	m.internalPages = counter("winnow_results_internal_total",
		"Result pages not refined because the SSRF guard refused their address (see serve.fetch.allow).").WithLabelValues()
	gauge := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	total := func(name, help string, labels prometheus.Labels, f func() float64) {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, f))
	}
	total("winnow_cache_hits_total", "Signature cache hits.", nil, func() float64 { return float64(s.cache.hits.Load()) })
	if s.fb != nil {
		total("winnow_feedback_records_total", "Pairs the search page's readers judged, written to the feedback log.", nil,
			func() float64 { return float64(s.fb.written.Load()) })
	}
	for _, d := range []similarity.Decision{s.o.Decision, s.o.Remove} {
		if !d.IsModel() {
			continue
		}
		pm := d.PurposeModels()
		calibrated := "false"
		if pm.Calibration != "" {
			calibrated = "true"
		}
		conf := d.MinConfidence()
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "winnow_decision_min_confidence",
			Help:        "The min_confidence of each purpose's decision; calibrated is true for one fitted by winnow calibrate (decision.calibration), holds_target false for one whose cross-validated precision did not hold its target.",
			ConstLabels: prometheus.Labels{"purpose": d.Purpose.String(), "calibrated": calibrated, "holds_target": strconv.FormatBool(!pm.CalibrationFlagged)}},
			func() float64 { return conf }))
	}
	total("winnow_cache_misses_total", "Signature cache misses.", nil, func() float64 { return float64(s.cache.miss.Load()) })
	gauge("winnow_cache_cost_bytes", "Bytes the signature cache holds (its cost estimate).", func() float64 {
		return float64(s.cache.c.MaxCost() - s.cache.c.RemainingCost())
	})
	gauge("winnow_cache_max_bytes", "The signature cache's bound in bytes.", func() float64 { return float64(s.cache.c.MaxCost()) })
	answerHelp := "Uses of the answer cache by outcome."
	total("winnow_answer_cache_total", answerHelp, prometheus.Labels{"outcome": "hit"}, func() float64 { return float64(s.memo.answers.load(true)) })
	total("winnow_answer_cache_total", answerHelp, prometheus.Labels{"outcome": "miss"}, func() float64 { return float64(s.memo.answers.load(false)) })
	gauge("winnow_fetch_in_flight", "Result page fetches in flight.", func() float64 { return float64(s.fetcher.Stats().InFlight) })
	gauge("winnow_answer_bytes_in_flight", "Bytes of engine answers held in memory by requests in flight (answer and rendering).", func() float64 { return float64(s.inflight.used()) })
	// The process's own (go_* and process_*: resident memory, heap,
	// collections, goroutines), which an operator watches against the
	// caches' configured size.
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func newMetricsRegistry() *metrics {
	return &metrics{reg: prometheus.NewRegistry(), counters: map[childKey]prometheus.Counter{}, obs: map[childKey]prometheus.Observer{}}
}

// write writes the metrics in Prometheus text format.
func (m *metrics) write(w io.Writer) error {
	mfs, err := m.reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.FmtText)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}

// statusClasses are the label values of HTTP status classes.
var statusClasses = [...]string{"0xx", "1xx", "2xx", "3xx", "4xx", "5xx"}

func statusClass(status int) string {
	if c := status / 100; c >= 0 && c < len(statusClasses) {
		return statusClasses[c]
	}
	return strconv.Itoa(status/100) + "xx"
}

// route is a client request's route, the label of the request metrics.
type route uint8

const (
	routeProxy route = iota // the transparent engine
	routeHealthz
	routeReadyz
	routeMetrics
	routeFeedback
	routeSearch // the search page
	routeNotFound
	numRoutes
)

// routeNames are the route label values, in the order of route.
var routeNames = [numRoutes]string{routeProxy: "proxy", routeHealthz: "healthz", routeReadyz: "readyz",
	routeMetrics: "metrics", routeFeedback: "feedback", routeSearch: "search", routeNotFound: "notfound"}

// request counts one client request by route and status class and records
// its latency.
func (m *metrics) request(rt route, status int, d time.Duration) {
	name := routeNames[rt]
	if c := status / 100; c >= 0 && c < len(statusClasses) {
		m.counterIn(&m.requestChildren[rt][c], m.requests, name, statusClasses[c]).Inc()
	} else {
		m.counterOf(m.requests, name, statusClass(status)).Inc()
	}
	m.observerIn(&m.durationChildren[rt], m.requestDuration, name).Observe(d.Seconds())
}

// outcome is how an engine call ended, the label of the engine metrics.
type outcome uint8

const (
	outcomeOK          outcome = iota
	outcomePassthrough         // the client's request relayed as it came
	outcomeFallback            // the client's request relayed when the rewritten one could not be refined
	outcomeHTTPError
	outcomeDown
	outcomeOverBound // past the bound on answer bytes in flight
	outcomeBadAnswer // a metasearch answer that does not parse
	numOutcomes
)

// outcomeNames are the outcome label values, in the order of outcome.
var outcomeNames = [numOutcomes]string{outcomeOK: "ok", outcomePassthrough: "passthrough", outcomeFallback: "fallback",
	outcomeHTTPError: "http_error", outcomeDown: "down", outcomeOverBound: "over_memory_bound", outcomeBadAnswer: "bad_answer"}

// engine records one call to engine b by outcome.
func (m *metrics) engine(b *upstream, o outcome, d time.Duration) {
	m.counterIn(&b.metrics.outcomes[o], m.engineRequests, b.Name, outcomeNames[o]).Inc()
	m.observerIn(&b.metrics.duration, m.engineDuration, b.Name).Observe(d.Seconds())
}

// answerCut counts one answer of engine b relayed to a client and ended
// short by the engine's connection.
func (m *metrics) answerCut(b *upstream) { m.counterOf(m.answersCut, b.Name, "").Inc() }

// cluster records one lookup in the cluster service by outcome.
func (m *metrics) cluster(outcome string, d time.Duration) {
	m.counterOf(m.clusterLookups, outcome, "").Inc()
	m.clusterDuration.Observe(d.Seconds())
}

// clusterURLs counts the URLs of a cluster lookup that the service knew
// and did not know.
func (m *metrics) clusterURLs(known, unknown int) {
	m.counterOf(m.clusterURLCounts, "known", "").Add(float64(known))
	m.counterOf(m.clusterURLCounts, "unknown", "").Add(float64(unknown))
}

// signatures returns the results counted by signature source.
func (m *metrics) signatures() SignatureStats {
	return SignatureStats{Cached: m.sources[srcCache].Load(), Text: m.sources[srcText].Load(),
		Fetched: m.sources[srcFetched].Load(), Service: m.sources[srcService].Load(), Unrefined: m.sources[srcNone].Load()}
}

// sourceNames are the signature label values, in the order of sigSource.
var sourceNames = [...]string{srcNone: "unrefined", srcCache: "cached", srcText: "text", srcFetched: "fetched", srcService: "service"}

// refined counts results by where their signature came from.
func (m *metrics) refined(r *refined) {
	for src, n := range [...]int{srcNone: r.unrefined, srcCache: r.cached, srcText: r.text, srcFetched: r.fetched, srcService: r.service} {
		if n > 0 {
			m.sources[src].Add(uint64(n))
			m.counterIn(&m.resultChildren[src], m.results, sourceNames[src], "").Add(float64(n))
		}
	}
}

// clustered counts the clusters of two or more results found and the
// results removed (or grouped) as duplicates.
func (m *metrics) clustered(clusters, duplicates int, mode engine.Mode) {
	m.clusters.Add(float64(clusters))
	if mode < 0 || int(mode) >= len(m.dupChildren) {
		m.counterOf(m.duplicates, mode.String(), "").Add(float64(duplicates))
		return
	}
	m.counterIn(&m.dupChildren[mode], m.duplicates, mode.String(), "").Add(float64(duplicates))
}

// unrefinedReasons are the reasons an answer passes unrefined, each a
// series of winnow_answers_unrefined_total from the start.
var unrefinedReasons = []string{"budget", "msearch", "rewrite", "engine_request", "engine_unreachable", "compressed", "read", "parse", "format", "render", "unsigned"}

// unrefined counts one engine answer passed through unrefined, by
// reason.
func (m *metrics) unrefined(reason string) { m.counterOf(m.unrefinedAnswers, reason, "").Inc() }

// refused counts one request the read-only gateway refused.
func (m *metrics) refused() { m.refusedWrites.Inc() }

// fetchOutcome counts one page fetch by outcome.
func (m *metrics) fetchOutcome(err error) {
	outcome := "ok"
	switch {
	case err == nil:
	case errors.Is(err, fetch.ErrTimeout):
		outcome = "timeout"
	case errors.Is(err, fetch.ErrBlocked):
		outcome = "blocked"
		if internalRefusal(err) {
			m.internalPages.Inc()
		}
	case errors.Is(err, fetch.ErrTooLarge):
		outcome = "too_large"
	case errors.Is(err, fetch.ErrContentType):
		outcome = "bad_type"
	case errors.Is(err, fetch.ErrStatus):
		outcome = "http_error"
	default:
		outcome = "error"
	}
	m.counterOf(m.fetches, outcome, "").Inc()
}

// feed counts pages fed back to the cluster service by outcome: sent,
// error (the ingest failed) or dropped (the queue was full).
func (m *metrics) feed(outcome string, n int) {
	m.counterOf(m.feedPages, outcome, "").Add(float64(n))
}
