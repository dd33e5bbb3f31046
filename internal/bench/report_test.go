package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/loadgen"
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

// TestRoundByRound checks each round's figures: the targets' cumulative
// results differenced round to round, and their spread in the report.
func TestRoundByRound(t *testing.T) {
	at := func(req uint64, sec float64, cpuMs int) loadgen.Measured {
		return loadgen.Measured{Result: loadgen.Result{Requests: req, Elapsed: time.Duration(sec * float64(time.Second))}, CPU: time.Duration(cpuMs) * time.Millisecond}
	}
	var zero [2]loadgen.Measured
	// Round 1: 1000 req/s against 800, 100 against 150 µs a request.
	r1 := roundOf(zero, []loadgen.Measured{at(1000, 1, 100), at(800, 1, 120)})
	// Round 2, cumulative: 2000 against 900 req/s, 100 against 120 µs.
	r2 := roundOf([2]loadgen.Measured{at(1000, 1, 100), at(800, 1, 120)}, []loadgen.Measured{at(3000, 2, 300), at(1700, 2, 228)})
	for _, c := range []struct {
		got        Round
		ratio, cpu float64
	}{{r1, 0.8, 50}, {r2, 0.45, 20}} {
		if math.Abs(c.got.ThroughputRatio-c.ratio) > 1e-9 || math.Abs(c.got.AddedCPUUs-c.cpu) > 1e-9 {
			t.Errorf("round %+v, want ratio %v, added CPU %v µs", c.got, c.ratio, c.cpu)
		}
	}
	ratio, ok := 0.6, false
	r := Report{Load: LoadClosed, Conns: 32, ThroughputRatio: &ratio, ThroughputOK: &ok, ByRound: []Round{r1, r2}}
	var b bytes.Buffer
	r.writeBench(&b)
	for _, s := range []string{"throughput ratio round by round: 0.450 to 0.800 over 2 rounds", "(round by round 20.0 to 50.0)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
		}
	}
}
