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
	for _, r := range rep.Results {
		for mode, own := range r.Confidence {
			c, ok := bestConfidence(own)
			tr, got := r.DecisionsTransferred[mode]
			if got != ok {
				t.Errorf("%s/%s: transferred %v, want %v (a confidence with F1 > 0 on dev: %v)", r.Definition, mode, got, ok, ok)
				continue
			}
			if !ok {
				continue
			}
			set2++
			for _, p := range own {
				if p.Threshold == c && (tr.Threshold != c || tr.TP != p.TP || tr.FP != p.FP || tr.FN != p.FN) {
					t.Errorf("%s/%s: transferred %+v, want the set's own best confidence %+v", r.Definition, mode, tr, p)
				}
			}
		}
	}
	if set2 != n {
		t.Errorf("TransferThresholds reported %d methods and decisions, set %d", n, set2)
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
	if crep.Results[0].DecisionsTransferred != nil {
		t.Errorf("decisions transferred across definitions: %v", crep.Results[0].DecisionsTransferred)
	}
}

// TestBestConfidence checks the choice of a decision's min_confidence on a
// development set: best F1, the higher confidence of equal F1 (it removes
// less), none when no confidence accepts a true pair.
func TestBestConfidence(t *testing.T) {
	for _, c := range []struct {
		name   string
		points []Point
		want   float64
		ok     bool
	}{
		{"best F1", []Point{{Threshold: 0.3, F1: 0.7}, {Threshold: 0.5, F1: 0.8}, {Threshold: 0.9, F1: 0.6}}, 0.5, true},
		{"tie goes to the higher", []Point{{Threshold: 0.3, F1: 0.8}, {Threshold: 0.5, F1: 0.8}, {Threshold: 0.9, F1: 0.6}}, 0.5, true},
		{"tie, higher first", []Point{{Threshold: 0.9, F1: 0.8}, {Threshold: 0.5, F1: 0.8}}, 0.9, true},
		{"nothing accepted", []Point{{Threshold: 0.3}, {Threshold: 0.9}}, 0, false},
		{"empty", nil, 0, false},
	} {
		got, ok := bestConfidence(c.points)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: bestConfidence = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
