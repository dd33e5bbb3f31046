package proxy

import (
	"sync"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/winnow-search/winnow/proxy/engine"
)

// vmMetrics is the per-request part of the proxy's metrics written with
// VictoriaMetrics/metrics' le-bucket histogram (PrometheusHistogram), the
// other library the issue weighed, with metrics cached by name as the
// proxy cached them before.
type vmMetrics struct {
	set        *vm.Set
	mu         sync.RWMutex
	counters   map[string]*vm.Counter
	histograms map[string]*vm.PrometheusHistogram
}

func (m *vmMetrics) counter(name string) *vm.Counter {
	m.mu.RLock()
	c := m.counters[name]
	m.mu.RUnlock()
	if c == nil {
		c = m.set.GetOrCreateCounter(name)
		m.mu.Lock()
		m.counters[name] = c
		m.mu.Unlock()
	}
	return c
}

func (m *vmMetrics) histogram(name string) *vm.PrometheusHistogram {
	m.mu.RLock()
	h := m.histograms[name]
	m.mu.RUnlock()
	if h == nil {
		h = m.set.GetOrCreatePrometheusHistogramExt(name, latencyBuckets)
		m.mu.Lock()
		m.histograms[name] = h
		m.mu.Unlock()
	}
	return h
}

// request is what one transparent request records: its route and status,
// the engine call, the signature sources and the clusters.
func (m *vmMetrics) request(d time.Duration) {
	m.counter(`winnow_requests_total{route="proxy",code="2xx"}`).Inc()
	m.histogram(`winnow_request_duration_seconds{route="proxy"}`).Update(d.Seconds())
	m.counter(`winnow_engine_requests_total{engine="es",outcome="ok"}`).Inc()
	m.histogram(`winnow_engine_duration_seconds{engine="es"}`).Update(d.Seconds())
	m.counter(`winnow_results_total{signature="cached"}`).Add(50)
	m.counter(`winnow_clusters_total`).Add(3)
	m.counter(`winnow_duplicates_total{mode="group"}`).Add(7)
}

// BenchmarkMetricsPerRequest measures the metric updates of one
// transparent request with prometheus/client_golang (what the proxy uses)
// and with VictoriaMetrics/metrics' le histogram, serially and from every
// CPU at once.
func BenchmarkMetricsPerRequest(b *testing.B) {
	pm := requestMetrics()
	ref := &refined{cached: 50}
	es := &upstream{Engine: Engine{Name: "es"}}
	clientGolang := func(d time.Duration) {
		pm.request(routeProxy, 200, d)
		pm.engine(es, outcomeOK, d)
		pm.refined(ref)
		pm.clustered(3, 7, engine.Group)
	}
	vmm := &vmMetrics{set: vm.NewSet(), counters: map[string]*vm.Counter{}, histograms: map[string]*vm.PrometheusHistogram{}}
	for _, lib := range []struct {
		name string
		do   func(time.Duration)
	}{{"client_golang", clientGolang}, {"victoriametrics_le", vmm.request}} {
		b.Run(lib.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				lib.do(time.Duration(i%5000) * time.Microsecond)
			}
		})
		b.Run(lib.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					lib.do(time.Duration(i%5000) * time.Microsecond)
				}
			})
		})
	}
}
