package main

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/winnow-search/winnow/internal/bench"
	"github.com/winnow-search/winnow/internal/realengine"
)

func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("loads loopback servers for 2s")
	}
	code, out, errs := winnow(t, "", "bench", "-duration", "2s", "-conns", "4", "-json")
	if code != 0 {
		t.Fatalf("winnow bench = %d, stderr:\n%s", code, errs)
	}
	var r bench.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench -json output: %v\n%s", err, out)
	}
	for _, p := range []struct {
		name string
		p    bench.Phase
	}{{"passthrough", r.Passthrough}, {"winnow", r.Winnow}} {
		if p.p.RPS <= 0 || p.p.Requests == 0 || p.p.Errors != 0 || p.p.Non2xx != 0 || p.p.P99Ms <= 0 {
			t.Errorf("%s = %+v, want requests, no errors", p.name, p.p)
		}
	}
	if r.Load != bench.LoadClosed || r.RateRPS != 0 || r.ThroughputRatio == nil || *r.ThroughputRatio <= 0 || r.ThroughputOK == nil {
		t.Errorf("load %q at %v req/s, throughput ratio %v; want %q with a ratio", r.Load, r.RateRPS, r.ThroughputRatio, bench.LoadClosed)
	}
	if want := len(bench.Queries) * 50; r.MarkedHits != want {
		t.Errorf("marked results = %d of %d, want %d (the top 50 of each query)", r.MarkedHits, r.CheckedHits, want)
	}
	if r.Signatures["cached"] == 0 || r.Signatures["fetched"] != 0 {
		t.Errorf("signatures during the run = %v, want all cached", r.Signatures)
	}
	if r.Memory.PeakMiB <= 0 || r.Memory.CacheMiB != 256 {
		t.Errorf("memory = %+v, want RSS samples and the default 256 MiB cache", r.Memory)
	}
}

// TestBenchRealEngine runs a short bench in front of each real engine
// (started by realengine): the sample is loaded there, winnow marks the
// top 50 of every query, and the engine's own collapse answers too. With
// -tagged the index is tagged first and winnow signs nothing: the hits'
// tags group them.
func TestBenchRealEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engines and loads them for seconds")
	}
	for _, kind := range realengine.Kinds {
		for _, tagged := range []bool{false, true} {
			name := kind
			args := []string{"bench", "-engine", "", "-kind", kind, "-index", "winnow_bench_test", "-duration", "1500ms", "-rounds", "1", "-conns", "4", "-json"}
			if tagged {
				name += "/tagged"
				args = append(args, "-tagged")
			}
			t.Run(name, func(t *testing.T) { benchRealEngine(t, kind, tagged, args) })
		}
	}
}

// benchRealEngine is one case of TestBenchRealEngine; args[2] is set to
// the engine's address.
func benchRealEngine(t *testing.T, kind string, tagged bool, args []string) {
	base := realengine.Start(t, kind)
	args[2] = base
	code, out, errs := winnow(t, "", args...)
	if code != 0 {
		t.Fatalf("winnow bench -engine = %d, stderr:\n%s", code, errs)
	}
	var r bench.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench -json output: %v\n%s", err, out)
	}
	if r.Kind != kind || r.Engine != base || r.Collapse == nil {
		t.Fatalf("report engine %q at %q, collapse %v; want %s at %s with a collapse phase", r.Kind, r.Engine, r.Collapse, kind, base)
	}
	for name, p := range map[string]bench.Phase{"passthrough": r.Passthrough, "winnow": r.Winnow, "collapse": *r.Collapse} {
		if p.Requests == 0 || p.Errors != 0 || p.Non2xx != 0 {
			t.Errorf("%s = %+v, want requests, no errors", name, p)
		}
	}
	if want := len(bench.Queries) * 50; r.MarkedHits != want {
		t.Errorf("marked results = %d of %d, want %d (the top 50 of each query)", r.MarkedHits, r.CheckedHits, want)
	}
	if n := realengine.DocCount(t, kind, base, "winnow_bench_test"); n != 53 {
		t.Errorf("the engine holds %d documents, want the sample's 53", n)
	}
	if signed := r.Signatures["cached"] + r.Signatures["fetched"] + r.Signatures["text"]; tagged && signed != 0 {
		t.Errorf("tagged index: %v results signed during the run, want none (signatures %v)", signed, r.Signatures)
	}
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "-results", "60"},
		{"bench", "-duration", "0s"},
		{"bench", "extra"},
		{"bench", "-rate", "-5"},
		{"bench", "-rate", "0x"},
		{"bench", "-engine", "http://127.0.0.1:19200"},
		{"bench", "-engine", "http://127.0.0.1:19200", "-kind", "xapian"},
		{"bench", "-kind", "solr"},
		{"bench", "-engine", "http://127.0.0.1:18983/solr", "-kind", "solr", "-churn", "3"},
	} {
		if code, _, errs := winnow(t, "", args...); code != 2 {
			t.Errorf("winnow %q = %d, want 2 (stderr %q)", args, code, errs)
		}
	}
}

// TestBenchChurnSoak runs a short soak in which every page shows under
// many URLs: signatures are fetched throughout, the 1 MiB cache fills and
// stays within its size, and no request fails.
func TestBenchChurnSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("loads loopback servers for 4s")
	}
	code, out, errs := winnow(t, "", "-set", "serve.cache_bytes=1048576", "bench", "-duration", "1s", "-conns", "4",
		"-soak", "3s", "-churn", "50", "-json")
	if code != 0 {
		t.Fatalf("winnow bench -churn = %d, stderr:\n%s", code, errs)
	}
	var r bench.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench -json output: %v\n%s", err, out)
	}
	s := r.Soak
	if s == nil {
		t.Fatalf("no soak in the report:\n%s", out)
	}
	if s.URLs != len(bench.Queries)*50 || s.SigsFetched == 0 || s.Winnow.Requests == 0 || s.Winnow.Errors+s.Winnow.Non2xx != 0 {
		t.Errorf("soak = %d URLs, %v fetched, %+v; want %d URLs, fetches, no errors", s.URLs, s.SigsFetched, s.Winnow, len(bench.Queries)*50)
	}
	if s.CacheMiB != 1 || s.CacheUsedMiB <= 0 || s.CacheUsedMiB > 1 {
		t.Errorf("cache %.2f of %.2f MiB used, want a full 1 MiB cache", s.CacheUsedMiB, s.CacheMiB)
	}
}

// TestBenchRate runs a short bench at half the pass-through's measured
// throughput: both targets get the requests due at that rate in their
// slices, and the report names the rate and leaves out the throughput
// ratio.
func TestBenchRate(t *testing.T) {
	if testing.Short() {
		t.Skip("loads loopback servers for 3s")
	}
	code, out, errs := winnow(t, "", "bench", "-duration", "2s", "-conns", "4", "-rate", "0.5x", "-json")
	if code != 0 {
		t.Fatalf("winnow bench -rate 0.5x = %d, stderr:\n%s", code, errs)
	}
	var r bench.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench -json output: %v\n%s", err, out)
	}
	if r.Load != bench.LoadRate || r.RateFraction != 0.5 || r.CalibrationRPS <= 0 || r.CalibrationSeconds <= 0 || r.RateRPS != 0.5*r.CalibrationRPS {
		t.Errorf("load %q at %v req/s, %vx of %v req/s calibrated over %vs; want %q at half the calibrated rate",
			r.Load, r.RateRPS, r.RateFraction, r.CalibrationRPS, r.CalibrationSeconds, bench.LoadRate)
	}
	if r.ThroughputRatio != nil || r.ThroughputOK != nil {
		t.Errorf("throughput ratio %v, ok %v at a fixed rate; want none", r.ThroughputRatio, r.ThroughputOK)
	}
	due := float64(r.Rounds) * r.SliceSeconds * r.RateRPS
	for _, p := range []struct {
		name string
		p    bench.Phase
	}{{"passthrough", r.Passthrough}, {"winnow", r.Winnow}} {
		if p.p.Requests == 0 || p.p.Errors != 0 || p.p.Non2xx != 0 || p.p.P99Ms <= 0 || p.p.LagP99Ms <= 0 {
			t.Errorf("%s = %+v, want requests, no errors, latencies and send lags", p.name, p.p)
		}
		// Each of the rounds rounds up the requests due in its slice.
		if got := float64(p.p.Requests + p.p.Errors + p.p.Missed); math.Abs(got-due) > float64(r.Rounds) {
			t.Errorf("%s: %d sent + %d missed, want the %.0f due at %.0f req/s in %d slices of %vs",
				p.name, p.p.Requests+p.p.Errors, p.p.Missed, due, r.RateRPS, r.Rounds, r.SliceSeconds)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in             string
		rate, fraction float64
		ok             bool
	}{
		{"0", 0, 0, true},
		{"5000", 5000, 0, true},
		{"2500.5", 2500.5, 0, true},
		{"0.5x", 0, 0.5, true},
		{"2x", 0, 2, true},
		{"-1", 0, 0, false},
		{"0x", 0, 0, false},
		{"x", 0, 0, false},
		{"fast", 0, 0, false},
		{"NaN", 0, 0, false},
		{"Inf", 0, 0, false},
		{"1e400", 0, 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			rate, fraction, err := parseRate(tc.in)
			if rate != tc.rate || fraction != tc.fraction || (err == nil) != tc.ok {
				t.Errorf("parseRate(%q) = %v, %v, %v; want %v, %v, ok %v", tc.in, rate, fraction, err, tc.rate, tc.fraction, tc.ok)
			}
		})
	}
}

// TestBenchGateway runs the bench with -gateway: winnow checks and
// relays every search with winnow_mode=off, so its answers are the
// engine's answers to the pass-through's own requests (the same mean
// size), none carries a mark, and no signature is looked up.
func TestBenchGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("loads loopback servers for 2s")
	}
	code, out, errs := winnow(t, "", "bench", "-duration", "2s", "-conns", "4", "-gateway", "-json")
	if code != 0 {
		t.Fatalf("winnow bench -gateway = %d, stderr:\n%s", code, errs)
	}
	var r bench.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench -json output: %v\n%s", err, out)
	}
	if r.Mode != "off" || r.Winnow.Requests == 0 || r.Winnow.Errors != 0 || r.Winnow.Non2xx != 0 {
		t.Errorf("mode %q, winnow = %+v; want mode off and requests without errors", r.Mode, r.Winnow)
	}
	if p, w := r.Passthrough.BodyBytes, r.Winnow.BodyBytes; p <= 0 || math.Abs(w-p) > p/1000 {
		t.Errorf("mean answer %.0f bytes through winnow, %.0f through the pass-through; want the engine's answer through both", w, p)
	}
	if r.MarkedHits != 0 || r.Signatures["cached"] != 0 {
		t.Errorf("marked results %d, signatures %v; want none: nothing is refined", r.MarkedHits, r.Signatures)
	}
}
