package proxy

import (
	"errors"
	"fmt"
	"io"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/winnow-search/winnow/fetch"
)

// metrics holds the proxy's counters in a set of its own (no globals);
// /metrics writes it in Prometheus text format. Labels are bounded:
// engine names come from the configuration, never from requests.
type metrics struct {
	set *vm.Set
}

func newMetrics(s *Server) *metrics {
	m := &metrics{set: vm.NewSet()}
	m.set.NewGauge("winnow_cache_hits_total", func() float64 { return float64(s.cache.hits.Load()) })
	m.set.NewGauge("winnow_cache_misses_total", func() float64 { return float64(s.cache.miss.Load()) })
	m.set.NewGauge("winnow_cache_cost_bytes", func() float64 {
		return float64(s.cache.c.MaxCost() - s.cache.c.RemainingCost())
	})
	m.set.NewGauge("winnow_cache_max_bytes", func() float64 { return float64(s.cache.c.MaxCost()) })
	m.set.NewGauge(`winnow_answer_cache_total{outcome="hit"}`, func() float64 { return float64(s.answers.load(true)) })
	m.set.NewGauge(`winnow_answer_cache_total{outcome="miss"}`, func() float64 { return float64(s.answers.load(false)) })
	m.set.NewGauge("winnow_fetch_in_flight", func() float64 { return float64(s.fetcher.Stats().InFlight) })
	return m
}

func (m *metrics) write(w io.Writer) { m.set.WritePrometheus(w) }

// request counts one client request by route and status class and records
// its latency.
func (m *metrics) request(route string, status int, d time.Duration) {
	m.set.GetOrCreateCounter(fmt.Sprintf(`winnow_requests_total{route=%q,code="%dxx"}`, route, status/100)).Inc()
	m.set.GetOrCreateHistogram(fmt.Sprintf(`winnow_request_duration_seconds{route=%q}`, route)).Update(d.Seconds())
}

// engine records one backend call by engine and outcome.
func (m *metrics) engine(name, outcome string, d time.Duration) {
	m.set.GetOrCreateCounter(fmt.Sprintf(`winnow_engine_requests_total{engine=%q,outcome=%q}`, name, outcome)).Inc()
	m.set.GetOrCreateHistogram(fmt.Sprintf(`winnow_engine_duration_seconds{engine=%q}`, name)).Update(d.Seconds())
}

// cluster records one lookup in the cluster service by outcome.
func (m *metrics) cluster(outcome string, d time.Duration) {
	m.set.GetOrCreateCounter(fmt.Sprintf(`winnow_cluster_lookups_total{outcome=%q}`, outcome)).Inc()
	m.set.GetOrCreateHistogram(`winnow_cluster_lookup_duration_seconds`).Update(d.Seconds())
}

// refined counts results by where their signature came from.
func (m *metrics) refined(r *refined) {
	for _, kv := range []struct {
		src string
		n   int
	}{{"cached", r.cached}, {"text", r.text}, {"fetched", r.fetched}, {"service", r.service}, {"unrefined", r.unrefined}} {
		if kv.n > 0 {
			m.set.GetOrCreateCounter(fmt.Sprintf(`winnow_results_total{signature=%q}`, kv.src)).Add(kv.n)
		}
	}
}

// clustered counts the clusters of two or more results found and the
// results removed (or grouped) as duplicates.
func (m *metrics) clustered(clusters, duplicates int, mode string) {
	m.set.GetOrCreateCounter(`winnow_clusters_total`).Add(clusters)
	m.set.GetOrCreateCounter(fmt.Sprintf(`winnow_duplicates_total{mode=%q}`, mode)).Add(duplicates)
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
	m.set.GetOrCreateCounter(fmt.Sprintf(`winnow_fetches_total{outcome=%q}`, outcome)).Inc()
}

// feed counts pages fed back to the cluster service by outcome: sent,
// error (the ingest failed) or dropped (the queue was full).
func (m *metrics) feed(outcome string, n int) {
	m.set.GetOrCreateCounter(fmt.Sprintf(`winnow_cluster_feed_pages_total{outcome=%q}`, outcome)).Add(n)
}
