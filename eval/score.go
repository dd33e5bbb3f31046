package eval

import (
	"cmp"
	"math"
	"slices"
)

// Point is precision, recall and F1 at one threshold.
type Point struct {
	Threshold float64 `json:"threshold"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
}

// pointOf computes a Point from counts; precision of no prediction is 1.
func pointOf(threshold float64, tp, fp, fn int) Point {
	p := Point{Threshold: threshold, TP: tp, FP: fp, FN: fn, Precision: 1}
	if tp+fp > 0 {
		p.Precision = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		p.Recall = float64(tp) / float64(tp+fn)
	}
	if p.Precision+p.Recall > 0 {
		p.F1 = 2 * p.Precision * p.Recall / (p.Precision + p.Recall)
	}
	return p
}

// Judged is one scored pair: the method's score and the gold answer.
type Judged struct {
	Score float64
	Dup   bool
}

// Curve sweeps every distinct threshold of the scores and returns one
// Point per threshold, in the order that loosens the test (descending for
// higher-is-duplicate scores, ascending when lowerIsDup). A pair is
// predicted duplicate when its score is at least the threshold (at most,
// when lowerIsDup). NaN scores never predict a duplicate.
func Curve(js []Judged, lowerIsDup bool) []Point {
	sorted := slices.Clone(js)
	slices.SortFunc(sorted, func(a, b Judged) int {
		// NaN last in both orders: cmp.Compare sorts it first, which an
		// ascending (lowerIsDup) curve would stop at before any score.
		if an, bn := math.IsNaN(a.Score), math.IsNaN(b.Score); an || bn {
			return cmp.Compare(b2i(an), b2i(bn))
		}
		if lowerIsDup {
			return cmp.Compare(a.Score, b.Score)
		}
		return cmp.Compare(b.Score, a.Score)
	})
	positives := 0
	for _, j := range js {
		if j.Dup {
			positives++
		}
	}
	var out []Point
	tp, fp := 0, 0
	for i := 0; i < len(sorted); {
		t := sorted[i].Score
		if math.IsNaN(t) {
			break
		}
		for ; i < len(sorted) && sorted[i].Score == t; i++ {
			if sorted[i].Dup {
				tp++
			} else {
				fp++
			}
		}
		out = append(out, pointOf(t, tp, fp, positives-tp))
	}
	return out
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// At returns the Point of a fixed threshold.
func At(js []Judged, threshold float64, lowerIsDup bool) Point {
	tp, fp, fn := 0, 0, 0
	for _, j := range js {
		pred := !math.IsNaN(j.Score) && (lowerIsDup && j.Score <= threshold || !lowerIsDup && j.Score >= threshold)
		switch {
		case pred && j.Dup:
			tp++
		case pred:
			fp++
		case j.Dup:
			fn++
		}
	}
	return pointOf(threshold, tp, fp, fn)
}

// Best returns the point of highest F1 on a curve; ties go to the stricter
// threshold (the earlier point), which favours precision.
func Best(curve []Point) Point {
	var best Point
	for _, p := range curve {
		if p.F1 > best.F1 {
			best = p
		}
	}
	return best
}

// Verdicts scores a list of yes/no predictions.
func Verdicts(pred, gold []bool) Point {
	tp, fp, fn := 0, 0, 0
	for i := range pred {
		switch {
		case pred[i] && gold[i]:
			tp++
		case pred[i]:
			fp++
		case gold[i]:
			fn++
		}
	}
	return pointOf(0, tp, fp, fn)
}

// BCubed returns the B-cubed precision and recall of a clustering against
// gold clusters, both given as a cluster label per item (Bagga and
// Baldwin 1998): per item, the share of its predicted cluster that is in
// its gold cluster, and the share of its gold cluster found in its
// predicted cluster, averaged over items.
func BCubed(pred, gold []int) Point {
	n := len(pred)
	if n == 0 {
		return pointOf(0, 0, 0, 0)
	}
	type key struct{ p, g int }
	both := map[key]int{}
	pSize := map[int]int{}
	gSize := map[int]int{}
	for i := range n {
		both[key{pred[i], gold[i]}]++
		pSize[pred[i]]++
		gSize[gold[i]]++
	}
	var prec, rec float64
	for i := range n {
		common := float64(both[key{pred[i], gold[i]}])
		prec += common / float64(pSize[pred[i]])
		rec += common / float64(gSize[gold[i]])
	}
	p := Point{Precision: prec / float64(n), Recall: rec / float64(n)}
	if p.Precision+p.Recall > 0 {
		p.F1 = 2 * p.Precision * p.Recall / (p.Precision + p.Recall)
	}
	return p
}
