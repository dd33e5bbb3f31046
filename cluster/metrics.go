package cluster

import (
	"io"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/winnow-search/winnow/cluster/client"
)

// serviceMetrics are the service's metrics, in a Set of its own.
type serviceMetrics struct {
	set            *metrics.Set
	statuses       map[string]*metrics.Counter
	rejected       *metrics.Counter
	lookups        *metrics.Counter
	lookupKnown    *metrics.Counter
	lookupUnknown  *metrics.Counter
	comparisons    *metrics.Counter
	verifyFailures *metrics.Counter
	repairs        *metrics.Counter
	merges         *metrics.Counter
	ingestDuration *metrics.Histogram
	lookupDuration *metrics.Histogram
}

func newServiceMetrics(s *Service) serviceMetrics {
	set := metrics.NewSet()
	m := serviceMetrics{
		set:            set,
		statuses:       map[string]*metrics.Counter{},
		rejected:       set.NewCounter("winnow_backend_ingest_rejected_total"),
		lookups:        set.NewCounter("winnow_backend_lookup_urls_total"),
		lookupKnown:    set.NewCounter(`winnow_backend_lookup_results_total{result="known"}`),
		lookupUnknown:  set.NewCounter(`winnow_backend_lookup_results_total{result="unknown"}`),
		comparisons:    set.NewCounter("winnow_backend_tier2_comparisons_total"),
		verifyFailures: set.NewCounter("winnow_backend_verify_failures_total"),
		repairs:        set.NewCounter("winnow_backend_group_repairs_total"),
		merges:         set.NewCounter("winnow_backend_group_merges_total"),
		ingestDuration: set.NewHistogram("winnow_backend_ingest_batch_duration_seconds"),
		lookupDuration: set.NewHistogram("winnow_backend_lookup_batch_duration_seconds"),
	}
	for _, st := range []string{client.StatusNew, client.StatusJoined, client.StatusStayed, client.StatusMoved,
		client.StatusWinnerChanged, client.StatusRedirect, client.StatusDeleted} {
		m.statuses[st] = set.NewCounter(`winnow_backend_ingest_pages_total{status="` + st + `"}`)
	}
	set.NewGauge("winnow_backend_groups_indexed", func() float64 { return float64(s.Stats().Groups) })
	return m
}

func (m *serviceMetrics) status(s string) *metrics.Counter { return m.statuses[s] }

func (m *serviceMetrics) now() time.Time { return time.Now() }

// WriteMetrics writes the service's metrics in Prometheus text format.
func (s *Service) WriteMetrics(w io.Writer) { s.m.set.WritePrometheus(w) }
