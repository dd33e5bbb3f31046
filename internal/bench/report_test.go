package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestPrintBenchLoad checks that the report says how the targets were
// loaded: what closed-loop latency means, the fixed rate, and no
// throughput ratio at a fixed rate.
func TestPrintBenchLoad(t *testing.T) {
	ratio, ok := 0.5, false
	closed := Report{Load: LoadClosed, Conns: 32, ThroughputRatio: &ratio, ThroughputOK: &ok, AddedP99Ms: 2.5}
	one := closed
	one.Conns = 1
	rate := Report{Load: LoadRate, Conns: 32, RateRPS: 5000, RateFraction: 0.5, CalibrationRPS: 10000, CalibrationSeconds: 2,
		AddedP99Ms: 0.25, P99OK: true, Winnow: Phase{Late: 7, Missed: 2}}
	for _, tc := range []struct {
		name      string
		r         Report
		want, not []string
	}{
		{"closed loop", closed,
			[]string{"added latency in a closed loop (32 connections back to back: at saturation latency is mostly queueing", "p99 +2.500 ms (target < 1 ms: MISSED)",
				"throughput ratio winnow/passthrough: 0.500 (target >= 0.80: MISSED)"},
			[]string{"fixed rate"}},
		{"one connection", one, []string{"(1 connection, one request at a time: no queueing)"}, []string{"saturation"}},
		{"fixed rate", rate,
			[]string{"load: fixed rate 5000 req/s (0.5x the pass-through's 10000 req/s closed-loop, calibrated over 2.0s)",
				"winnow 7 late, 2 missed", "WARNING: requests missed",
				"added latency at 5000 req/s: p50 +0.000 ms, p99 +0.250 ms (target < 1 ms: ok)",
				"throughput ratio: not measured at a fixed rate"},
			[]string{"winnow/passthrough", "closed loop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.r.writeBench(&b)
			for _, s := range tc.want {
				if !strings.Contains(b.String(), s) {
					t.Errorf("report lacks %q:\n%s", s, b.String())
				}
			}
			for _, s := range tc.not {
				if strings.Contains(b.String(), s) {
					t.Errorf("report has %q:\n%s", s, b.String())
				}
			}
		})
	}
}
