package eval

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/winnow-search/winnow/similarity"
)

// TestAtCurveMatchesAt checks that reading a threshold off a curve gives
// the counts At computes from the pairs, for thresholds on, between and
// beyond the scores, in both directions.
func TestAtCurveMatchesAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := range 300 {
		n := 1 + rng.IntN(40)
		js := make([]Judged, n)
		positives := 0
		for i := range js {
			js[i] = Judged{Score: float64(rng.IntN(12)) / 10, Dup: rng.IntN(2) == 0}
			if rng.IntN(15) == 0 {
				js[i].Score = math.NaN()
			}
			if js[i].Dup {
				positives++
			}
		}
		for _, lower := range []bool{false, true} {
			curve := Curve(js, lower)
			for _, th := range []float64{-0.5, 0, 0.05, 0.3, 0.35, 0.7, 1.1, 1.15, 2} {
				got, want := atCurve(curve, th, lower, positives), At(js, th, lower)
				if got.TP != want.TP || got.FP != want.FP || got.FN != want.FN || got.Threshold != th {
					t.Fatalf("trial %d, lowerIsDup %v, threshold %v: atCurve = %+v, At = %+v", trial, lower, th, got, want)
				}
			}
		}
	}
}

// TestTransferThresholds checks the held-out protocol on real pairs: a
// set's own thresholds transferred to itself give its best figures, and a
// set of another mode shares no definition.
func TestTransferThresholds(t *testing.T) {
	rep, dev := runSet(t, "testdata/pairs", Options{}), runSet(t, "testdata/pairs", Options{})
	n := rep.TransferThresholds(dev)
	if n == 0 {
		t.Fatal("TransferThresholds set nothing between two runs of one set")
	}
	set2 := 0
	for _, r := range rep.Results {
		if r.ThresholdsFrom != dev.Dir {
			t.Errorf("%s: ThresholdsFrom %q, want %q", r.Definition, r.ThresholdsFrom, dev.Dir)
		}
		for _, m := range r.Methods {
			if m.Best.F1 == 0 {
				if m.Transferred != nil {
					t.Errorf("%s/%s: transferred without a threshold chosen", r.Definition, m.Name)
				}
				continue
			}
			set2++
			tr := m.Transferred
			if tr == nil || tr.Threshold != m.Best.Threshold || tr.TP != m.Best.TP || tr.FP != m.Best.FP || tr.FN != m.Best.FN {
				t.Errorf("%s/%s: transferred %+v, want the set's own best %+v", r.Definition, m.Name, tr, m.Best)
			}
		}
	}
	if set2 != n {
		t.Errorf("TransferThresholds reported %d methods, set %d", n, set2)
	}

	crep := runSet(t, sampleCorpus(t), Options{Decision: similarity.Decision{}})
	if n := crep.TransferThresholds(dev); n != 0 {
		t.Errorf("corpus set took %d thresholds from a pair set; want 0 (no definition in common)", n)
	}
	for _, m := range crep.Results[0].Methods {
		if m.Transferred != nil {
			t.Errorf("%s: transferred across definitions", m.Name)
		}
	}
}
