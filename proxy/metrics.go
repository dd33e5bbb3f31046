package proxy

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/winnow-search/winnow/fetch"
)

// metrics holds the proxy's counters in a set of its own (no globals);
// /metrics writes it in Prometheus text format. Labels are bounded:
// engine names come from the configuration, never from requests.
type metrics struct {
	set *vm.Set

	// The counters and histograms by name and labels, so a request
	// finds its metrics without formatting their names (a request
	// updates eight or so).
	mu         sync.RWMutex
	counters   map[metricKey]*vm.Counter
	histograms map[metricKey]*vm.Histogram

	// sources counts results by signature source, in the order of
	// sigSource, for Stats.
	sources [srcService + 2]atomic.Uint64
}

// metricKey is a metric's name format and its label values.
type metricKey struct{ format, a, b string }

func newMetrics(s *Server) *metrics {
	m := &metrics{set: vm.NewSet(), counters: map[metricKey]*vm.Counter{}, histograms: map[metricKey]*vm.Histogram{}}
	m.set.NewGauge("winnow_cache_hits_total", func() float64 { return float64(s.cache.hits.Load()) })
	m.set.NewGauge("winnow_cache_misses_total", func() float64 { return float64(s.cache.miss.Load()) })
	m.set.NewGauge("winnow_cache_cost_bytes", func() float64 {
		return float64(s.cache.c.MaxCost() - s.cache.c.RemainingCost())
	})
	m.set.NewGauge("winnow_cache_max_bytes", func() float64 { return float64(s.cache.c.MaxCost()) })
	m.set.NewGauge(`winnow_answer_cache_total{outcome="hit"}`, func() float64 { return float64(s.memo.answers.load(true)) })
	m.set.NewGauge(`winnow_answer_cache_total{outcome="miss"}`, func() float64 { return float64(s.memo.answers.load(false)) })
	m.set.NewGauge("winnow_fetch_in_flight", func() float64 { return float64(s.fetcher.Stats().InFlight) })
	return m
}

// write writes the proxy's metrics and the process's own (go_* and
// process_*: resident memory, heap, collections, goroutines), which an
// operator watches against the caches' configured size.
func (m *metrics) write(w io.Writer) {
	m.set.WritePrometheus(w)
	vm.WriteProcessMetrics(w)
}

// counter returns the counter named by format (a fmt format with a %q
// for each label) with labels a and b ("" when the format has fewer).
func (m *metrics) counter(format, a, b string) *vm.Counter {
	return cached(m, m.counters, metricKey{format, a, b}, m.set.GetOrCreateCounter)
}

// histogram is counter's twin for histograms.
func (m *metrics) histogram(format, a, b string) *vm.Histogram {
	return cached(m, m.histograms, metricKey{format, a, b}, m.set.GetOrCreateHistogram)
}

// cached returns the metric of key k from byKey, creating it by its name
// the first time.
func cached[T any](m *metrics, byKey map[metricKey]*T, k metricKey, create func(name string) *T) *T {
	m.mu.RLock()
	v := byKey[k]
	m.mu.RUnlock()
	if v == nil {
		v = create(metricName(k))
		m.mu.Lock()
		byKey[k] = v
		m.mu.Unlock()
	}
	return v
}

func metricName(k metricKey) string {
	switch strings.Count(k.format, "%") {
	case 0:
		return k.format
	case 1:
		return fmt.Sprintf(k.format, k.a)
	}
	return fmt.Sprintf(k.format, k.a, k.b)
}

// statusClasses are the label values of HTTP status classes.
var statusClasses = [...]string{"0xx", "1xx", "2xx", "3xx", "4xx", "5xx"}

func statusClass(status int) string {
	if c := status / 100; c >= 0 && c < len(statusClasses) {
		return statusClasses[c]
	}
	return strconv.Itoa(status/100) + "xx"
}

// request counts one client request by route and status class and records
// its latency.
func (m *metrics) request(route string, status int, d time.Duration) {
	m.counter(`winnow_requests_total{route=%q,code=%q}`, route, statusClass(status)).Inc()
	m.histogram(`winnow_request_duration_seconds{route=%q}`, route, "").Update(d.Seconds())
}

// engine records one backend call by engine and outcome.
func (m *metrics) engine(name, outcome string, d time.Duration) {
	m.counter(`winnow_engine_requests_total{engine=%q,outcome=%q}`, name, outcome).Inc()
	m.histogram(`winnow_engine_duration_seconds{engine=%q}`, name, "").Update(d.Seconds())
}

// cluster records one lookup in the cluster service by outcome.
func (m *metrics) cluster(outcome string, d time.Duration) {
	m.counter(`winnow_cluster_lookups_total{outcome=%q}`, outcome, "").Inc()
	m.histogram(`winnow_cluster_lookup_duration_seconds`, "", "").Update(d.Seconds())
}

// signatures returns the results counted by signature source.
func (m *metrics) signatures() SignatureStats {
	return SignatureStats{Cached: m.sources[srcCache].Load(), Text: m.sources[srcText].Load(),
		Fetched: m.sources[srcFetched].Load(), Service: m.sources[srcService].Load(), Unrefined: m.sources[srcNone].Load()}
}

// refined counts results by where their signature came from.
func (m *metrics) refined(r *refined) {
	m.sources[srcCache].Add(uint64(r.cached))
	m.sources[srcText].Add(uint64(r.text))
	m.sources[srcFetched].Add(uint64(r.fetched))
	m.sources[srcService].Add(uint64(r.service))
	m.sources[srcNone].Add(uint64(r.unrefined))
	for _, kv := range [...]struct {
		src string
		n   int
	}{{"cached", r.cached}, {"text", r.text}, {"fetched", r.fetched}, {"service", r.service}, {"unrefined", r.unrefined}} {
		if kv.n > 0 {
			m.counter(`winnow_results_total{signature=%q}`, kv.src, "").Add(kv.n)
		}
	}
}

// clustered counts the clusters of two or more results found and the
// results removed (or grouped) as duplicates.
func (m *metrics) clustered(clusters, duplicates int, mode string) {
	m.counter(`winnow_clusters_total`, "", "").Add(clusters)
	m.counter(`winnow_duplicates_total{mode=%q}`, mode, "").Add(duplicates)
}

// refused counts one request the read-only gateway refused.
func (m *metrics) refused() {
	m.counter(`winnow_gateway_refused_total`, "", "").Inc()
}

// fetchOutcome counts one page fetch by outcome.
func (m *metrics) fetchOutcome(err error) {
	outcome := "ok"
	switch {
	case err == nil:
	case errors.Is(err, fetch.ErrTimeout):
		outcome = "timeout"
	case errors.Is(err, fetch.ErrBlocked):
		outcome = "blocked"
	case errors.Is(err, fetch.ErrTooLarge):
		outcome = "too_large"
	case errors.Is(err, fetch.ErrContentType):
		outcome = "bad_type"
	case errors.Is(err, fetch.ErrStatus):
		outcome = "http_error"
	default:
		outcome = "error"
	}
	m.counter(`winnow_fetches_total{outcome=%q}`, outcome, "").Inc()
}

// feed counts pages fed back to the cluster service by outcome: sent,
// error (the ingest failed) or dropped (the queue was full).
func (m *metrics) feed(outcome string, n int) {
	m.counter(`winnow_cluster_feed_pages_total{outcome=%q}`, outcome, "").Add(n)
}
