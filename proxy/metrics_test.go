package proxy

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/winnow-search/winnow/proxy/engine"
)

// requestMetrics returns the metrics a request updates, in a registry of
// their own: newMetrics needs a Server for the gauges, which a request
// never touches.
func requestMetrics() *metrics {
	m := newMetricsRegistry()
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "winnow_requests_total", Help: "h"}, []string{"route", "code"})
	m.requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "winnow_request_duration_seconds", Help: "h", Buckets: latencyBuckets}, []string{"route"})
	m.engineRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "winnow_engine_requests_total", Help: "h"}, []string{"engine", "outcome"})
	m.engineDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "winnow_engine_duration_seconds", Help: "h", Buckets: latencyBuckets}, []string{"engine"})
	m.results = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "winnow_results_total", Help: "h"}, []string{"signature"})
	m.duplicates = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "winnow_duplicates_total", Help: "h"}, []string{"mode"})
	m.clusters = prometheus.NewCounter(prometheus.CounterOpts{Name: "winnow_clusters_total", Help: "h"})
	m.reg.MustRegister(m.requests, m.requestDuration, m.engineRequests, m.engineDuration, m.results, m.duplicates, m.clusters)
	return m
}

// TestMetricsChildren: the children a request updates, resolved once and
// then loaded by index, count under their own labels, and a series
// appears only once counted.
func TestMetricsChildren(t *testing.T) {
	m := requestMetrics()
	es, solr := &upstream{Engine: Engine{Name: "es"}}, &upstream{Engine: Engine{Name: "solr"}}
	for range 3 {
		m.request(routeProxy, 200, time.Millisecond)
		m.engine(es, outcomeOK, time.Millisecond)
		m.refined(&refined{cached: 2, fetched: 1})
		m.clustered(1, 2, engine.Remove)
	}
	m.request(routeProxy, 503, time.Millisecond)
	m.request(routeSearch, 200, time.Millisecond)
	m.request(routeProxy, 999, time.Millisecond) // no class of the table
	m.engine(solr, outcomeDown, time.Millisecond)
	m.clustered(0, 1, engine.Mode(7)) // no mode of the table
	got := map[string]float64{}
	series := map[string]int{}
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, x := range mf.GetMetric() {
			k := mf.GetName()
			for _, l := range x.GetLabel() {
				k += " " + l.GetName() + "=" + l.GetValue()
			}
			series[mf.GetName()]++
			if c := x.GetCounter(); c != nil {
				got[k] = c.GetValue()
			}
		}
	}
	for k, want := range map[string]float64{
		"winnow_requests_total code=2xx route=proxy":              3,
		"winnow_requests_total code=5xx route=proxy":              1,
		"winnow_requests_total code=9xx route=proxy":              1,
		"winnow_requests_total code=2xx route=search":             1,
		"winnow_engine_requests_total engine=es outcome=ok":       3,
		"winnow_engine_requests_total engine=solr outcome=down":   1,
		"winnow_results_total signature=cached":                   6,
		"winnow_results_total signature=fetched":                  3,
		"winnow_duplicates_total mode=remove":                     6,
		"winnow_duplicates_total mode=" + engine.Mode(7).String(): 1,
		"winnow_clusters_total":                                   3,
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	for name, want := range map[string]int{
		"winnow_requests_total":           4,
		"winnow_request_duration_seconds": 2, // proxy and search
		"winnow_engine_requests_total":    2,
		"winnow_engine_duration_seconds":  2, // es and solr
		"winnow_results_total":            2,
		"winnow_duplicates_total":         2,
	} {
		if series[name] != want {
			t.Errorf("%s: %d series, want %d", name, series[name], want)
		}
	}
}
