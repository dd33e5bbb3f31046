package eval

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCurveAndAt(t *testing.T) {
	js := []Judged{{0.9, true}, {0.8, true}, {0.8, false}, {0.5, true}, {0.2, false}, {math.NaN(), true}}
	curve := Curve(js, false)
	if len(curve) != 4 {
		t.Fatalf("Curve has %d points, want 4 (distinct non-NaN scores)", len(curve))
	}
	// At 0.8: tp 2, fp 1, fn 2 (0.5 and the NaN).
	p := curve[1]
	if p.Threshold != 0.8 || p.TP != 2 || p.FP != 1 || p.FN != 2 {
		t.Errorf("curve[1] = %+v, want threshold 0.8 tp 2 fp 1 fn 2", p)
	}
	if got := At(js, 0.8, false); got.TP != p.TP || got.FP != p.FP || got.FN != p.FN {
		t.Errorf("At(0.8) = %+v, want the curve's %+v", got, p)
	}
	if !near(p.Precision, 2.0/3) || !near(p.Recall, 0.5) {
		t.Errorf("precision, recall = %g, %g; want 2/3, 1/2", p.Precision, p.Recall)
	}
	best := Best(curve)
	if best.Threshold != 0.5 {
		t.Errorf("Best threshold = %g, want 0.5 (F1 %g)", best.Threshold, best.F1)
	}
}

func TestCurveLowerIsDup(t *testing.T) {
	js := []Judged{{1, true}, {3, true}, {9, false}, {20, false}}
	curve := Curve(js, true)
	if b := Best(curve); b.Threshold != 3 || b.F1 != 1 {
		t.Errorf("Best = %+v, want threshold 3 with F1 1", b)
	}
	if p := At(js, 5, true); p.TP != 2 || p.FP != 0 {
		t.Errorf("At(5) = %+v, want tp 2 fp 0", p)
	}
}

func TestBCubed(t *testing.T) {
	// Perfect clustering.
	if p := BCubed([]int{1, 1, 2}, []int{7, 7, 8}); p.Precision != 1 || p.Recall != 1 {
		t.Errorf("BCubed(perfect) = %+v, want 1/1", p)
	}
	// Everything merged: items a,b in gold {a,b}, c alone.
	p := BCubed([]int{1, 1, 1}, []int{7, 7, 8})
	// precision per item: 2/3, 2/3, 1/3 -> 5/9; recall 1.
	if !near(p.Precision, 5.0/9) || p.Recall != 1 {
		t.Errorf("BCubed(merged) = %+v, want precision 5/9 recall 1", p)
	}
}

func TestVerdicts(t *testing.T) {
	p := Verdicts([]bool{true, true, false, false}, []bool{true, false, true, false})
	if p.TP != 1 || p.FP != 1 || p.FN != 1 || !near(p.F1, 0.5) {
		t.Errorf("Verdicts = %+v, want tp 1 fp 1 fn 1 F1 0.5", p)
	}
}

// TestCurveLowerIsDupNaN checks that a pair without a score does not end
// an ascending curve before the scores (cmp.Compare sorts NaN first).
func TestCurveLowerIsDupNaN(t *testing.T) {
	js := []Judged{{math.NaN(), true}, {1, true}, {3, false}}
	curve := Curve(js, true)
	if len(curve) != 2 || curve[0].Threshold != 1 || curve[0].TP != 1 || curve[0].FN != 1 {
		t.Fatalf("Curve = %+v, want points at 1 (tp 1, fn 1: the NaN pair) and 3", curve)
	}
}
