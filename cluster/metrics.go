package cluster

import (
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/winnow-search/winnow/cluster/client"
)

// serviceMetrics are the service's metrics, in a registry of its own,
// written with HELP and TYPE and with cumulative le buckets, so a stock
// Prometheus can take quantiles.
type serviceMetrics struct {
	reg            *prometheus.Registry
	statuses       map[string]*counter
	rejected       *counter
	lookups        *counter
	lookupKnown    *counter
	lookupUnknown  *counter
	comparisons    *counter
	verifyFailures *counter
	repairs        *counter
	merges         *counter
	signerMatched  *counter
	signerMissing  *counter
	signerRefused  *counter
	ingestDuration histogram
	lookupDuration histogram
}

// durationBuckets are the upper bounds, in seconds, of the batch
// duration histograms.
var durationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// counter is a Prometheus counter whose value the service's tests read.
type counter struct {
	c prometheus.Counter
	n atomic.Uint64
}

func (c *counter) Inc()        { c.Add(1) }
func (c *counter) Add(n int)   { c.n.Add(uint64(n)); c.c.Add(float64(n)) }
func (c *counter) Get() uint64 { return c.n.Load() }

// histogram records durations in seconds.
type histogram struct{ h prometheus.Histogram }

// UpdateDuration records the time since start.
func (h histogram) UpdateDuration(start time.Time) { h.h.Observe(time.Since(start).Seconds()) }

func newServiceMetrics(s *Service) serviceMetrics {
	reg := prometheus.NewRegistry()
	newCounter := func(name, help string, labels prometheus.Labels) *counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		reg.MustRegister(c)
		return &counter{c: c}
	}
	newHistogram := func(name, help string) histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: durationBuckets})
		reg.MustRegister(h)
		return histogram{h}
	}
	m := serviceMetrics{
		reg:            reg,
		statuses:       map[string]*counter{},
		rejected:       newCounter("winnow_cluster_service_ingest_rejected_total", "Ingest requests rejected.", nil),
		lookups:        newCounter("winnow_cluster_service_lookup_urls_total", "URLs looked up.", nil),
		lookupKnown:    newCounter("winnow_cluster_service_lookup_results_total", "URLs looked up, by whether the service knew them.", prometheus.Labels{"result": "known"}),
		lookupUnknown:  newCounter("winnow_cluster_service_lookup_results_total", "URLs looked up, by whether the service knew them.", prometheus.Labels{"result": "unknown"}),
		comparisons:    newCounter("winnow_cluster_service_tier2_comparisons_total", "Signature comparisons of the second tier.", nil),
		verifyFailures: newCounter("winnow_cluster_service_verify_failures_total", "Group members that failed verification against their winner.", nil),
		repairs:        newCounter("winnow_cluster_service_group_repairs_total", "Groups repaired.", nil),
		merges:         newCounter("winnow_cluster_service_group_merges_total", "Groups merged.", nil),
		signerMatched:  newCounter(signerMetric, signerHelp, prometheus.Labels{"signer": "matched"}),
		signerMissing:  newCounter(signerMetric, signerHelp, prometheus.Labels{"signer": "missing"}),
		signerRefused:  newCounter(signerMetric, signerHelp, prometheus.Labels{"signer": "refused"}),
		ingestDuration: newHistogram("winnow_cluster_service_ingest_batch_duration_seconds", "Time to ingest one batch."),
		lookupDuration: newHistogram("winnow_cluster_service_lookup_batch_duration_seconds", "Time to look up one batch."),
	}
	for _, st := range []string{client.StatusNew, client.StatusJoined, client.StatusStayed, client.StatusMoved,
		client.StatusWinnerChanged, client.StatusRedirect, client.StatusDeleted, client.StatusStale} {
		m.statuses[st] = newCounter("winnow_cluster_service_ingest_pages_total", "Pages ingested, by outcome.", prometheus.Labels{"status": st})
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "winnow_cluster_service_groups_indexed", Help: "Groups in the index."},
		func() float64 { return float64(s.Stats().Groups) }))
	return m
}

// signerMetric counts ingest batches by their signing settings'
// fingerprint: the store's (matched, or recorded by the first), none
// (missing: accepted, compared unchecked) or another (refused, 409).
const (
	signerMetric = "winnow_cluster_service_ingest_batches_signer_total"
	signerHelp   = "Ingest batches by their signing settings' fingerprint: the store's (matched), none (missing, accepted unchecked) or another (refused)."
)

// unaliased are the metrics that came after the deprecated names went:
// they have no alias.
var unaliased = map[string]bool{signerMetric: true}

func (m *serviceMetrics) status(s string) *counter { return m.statuses[s] }

func (m *serviceMetrics) now() time.Time { return time.Now() }

// Metric name prefixes: the service's metrics are
// winnow_cluster_service_*; the same values are also written under their
// earlier names, winnow_backend_*, as deprecated aliases for one release,
// so dashboards and alerts can move over (their HELP says which name
// replaces them).
const (
	metricPrefix           = "winnow_cluster_service_"
	deprecatedMetricPrefix = "winnow_backend_"
)

// WriteMetrics writes the service's metrics in Prometheus text format,
// each also under its deprecated alias.
func (s *Service) WriteMetrics(w io.Writer) {
	mfs, err := s.m.reg.Gather()
	if err != nil {
		return // a registry of fixed metrics: only a programming error
	}
	enc := expfmt.NewEncoder(w, expfmt.FmtText)
	for _, mf := range mfs {
		if enc.Encode(mf) != nil {
			return
		}
	}
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, metricPrefix) || unaliased[name] {
			continue
		}
		aliasName := deprecatedMetricPrefix + strings.TrimPrefix(name, metricPrefix)
		help := "Deprecated alias of " + name + ": " + mf.GetHelp()
		alias := &dto.MetricFamily{Name: &aliasName, Help: &help, Type: mf.Type, Metric: mf.Metric}
		if enc.Encode(alias) != nil {
			return
		}
	}
}
