package eval

import (
	"math"

	"github.com/winnow-search/winnow/similarity"
)

// FitPenalty is the L2 penalty on the weights (not the intercept) of the
// fitted models, against each data set's examples weighing
// [fitSetWeight] in all: strong enough to keep two correlated scores
// from trading huge opposite weights, weak enough that the LCS ratio
// keeps its slope.
const FitPenalty = 0.1

// fitSetWeight is the total weight of one data set's examples in a fit,
// so that 676 LLVM pages (2,000 candidate pairs) weigh as much as 125
// judged web pairs.
const fitSetWeight = 100

// fitExample is one training pair: its features, its label, its weight.
type fitExample struct {
	x []float64
	y bool
	w float64
}

// fitLogistic fits a logistic regression with L2 penalty by Newton's
// method (iteratively reweighted least squares; Hastie, Tibshirani and
// Friedman, The Elements of Statistical Learning, §4.4.1). x[0] of the
// result is the intercept. The objective is convex, so the result does
// not depend on a starting point or on the order of the examples beyond
// rounding: a refit gives the same coefficients.
func fitLogistic(ex []fitExample, dims int, penalty float64) []float64 {
	return fitLogisticToward(ex, dims, penalty, nil)
}

// fitLogisticToward is fitLogistic with the L2 penalty on the distance
// of the weights from prior (prior[0] the intercept, not penalized; nil:
// zero), so that few examples move a model little from where it was:
// calibration refits the shipped coefficients toward a site's pairs.
func fitLogisticToward(ex []fitExample, dims int, penalty float64, prior []float64) []float64 {
	d := dims + 1
	beta := make([]float64, d)
	grad := make([]float64, d)
	hess := make([][]float64, d)
	for i := range hess {
		hess[i] = make([]float64, d)
	}
	row := make([]float64, d)
	for range 100 {
		clear(grad)
		for i := range hess {
			clear(hess[i])
		}
		for _, e := range ex {
			row[0] = 1
			copy(row[1:], e.x)
			z := 0.0
			for j := range row {
				z += beta[j] * row[j]
			}
			p := 1 / (1 + math.Exp(-z))
			y := 0.0
			if e.y {
				y = 1
			}
			for j := range row {
				grad[j] += e.w * (p - y) * row[j]
				for k := range row {
					hess[j][k] += e.w * p * (1 - p) * row[j] * row[k]
				}
			}
		}
		for j := 1; j < d; j++ {
			p0 := 0.0
			if prior != nil {
				p0 = prior[j]
			}
			grad[j] += penalty * (beta[j] - p0)
			hess[j][j] += penalty
		}
		step := solveLinear(hess, grad)
		biggest := 0.0
		for j := range beta {
			beta[j] -= step[j]
			biggest = max(biggest, math.Abs(step[j]))
		}
		if biggest < 1e-10 {
			break
		}
	}
	return beta
}

// solveLinear solves a·x = b by Gaussian elimination with partial
// pivoting; a is small (features + 1) and positive definite here. a and
// b are not modified.
func solveLinear(a [][]float64, b []float64) []float64 {
	n := len(b)
	m := make([][]float64, n)
	for i := range m {
		m[i] = append(append(make([]float64, 0, n+1), a[i]...), b[i])
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		if m[c][c] == 0 {
			continue
		}
		for r := range n {
			if r == c {
				continue
			}
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for i := range x {
		if m[i][i] != 0 {
			x[i] = m[i][n] / m[i][i]
		}
	}
	return x
}

// FitModel fits a model over the features fs to the candidate pairs of the
// given labelled pairs, each set's pairs weighing the same in all.
// isDup gives the truth of a pair.
func FitModel(sets [][]ScoredPair, fs []similarity.Feature, isDup func(*ScoredPair) bool, penalty float64) similarity.Model {
	var ex []fitExample
	for _, set := range sets {
		n := 0
		for i := range set {
			if set[i].Candidate {
				n++
			}
		}
		for i := range set {
			sp := &set[i]
			if !sp.Candidate {
				continue
			}
			x := make([]float64, len(fs))
			for j, f := range fs {
				x[j] = f.Value(&sp.Scores)
			}
			ex = append(ex, fitExample{x: x, y: isDup(sp), w: fitSetWeight / float64(n)})
		}
	}
	beta := fitLogistic(ex, len(fs), penalty)
	return similarity.Model{Features: fs, Weights: beta[1:], Intercept: beta[0]}
}

// fitToward fits prior's features to the candidate pairs of the given
// pairs of every set (indexes into its Scored), the truth read per set's
// mode, with the weights' L2 penalty on their distance from prior's, and
// keeps prior's NumbersVeto and NumbersOnly.
func fitToward(sets []*CVSet, pairs [][]int, prior similarity.Model, t Truth, penalty float64) similarity.Model {
	var ex []fitExample
	for si, s := range sets {
		isDup := s.isDup(t)
		n := 0
		for _, i := range pairs[si] {
			if s.Scored[i].Candidate {
				n++
			}
		}
		for _, i := range pairs[si] {
			sp := &s.Scored[i]
			if !sp.Candidate {
				continue
			}
			x := make([]float64, len(prior.Features))
			for j, f := range prior.Features {
				x[j] = f.Value(&sp.Scores)
			}
			ex = append(ex, fitExample{x: x, y: isDup(sp), w: fitSetWeight / float64(n)})
		}
	}
	p := append([]float64{prior.Intercept}, prior.Weights...)
	beta := fitLogisticToward(ex, len(prior.Features), penalty, p)
	return similarity.Model{Features: prior.Features, Weights: beta[1:], Intercept: beta[0], NumbersVeto: prior.NumbersVeto, NumbersOnly: prior.NumbersOnly}
}

// nonCandidateRate is the share of duplicates among the pairs that fail
// the candidate test, averaged over the sets.
func nonCandidateRate(sets [][]ScoredPair, isDup func(*ScoredPair) bool) float64 {
	sum, used := 0.0, 0
	for _, set := range sets {
		n, dup := 0, 0
		for i := range set {
			if !set[i].Candidate {
				n++
				if isDup(&set[i]) {
					dup++
				}
			}
		}
		if n > 0 {
			sum += float64(dup) / float64(n)
			used++
		}
	}
	if used == 0 {
		return 0
	}
	return sum / float64(used)
}
