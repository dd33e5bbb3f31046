package eval

import (
	"math"
	"slices"
)

// This file answers a question the cross-validation cannot: whether any
// decision over the LCS ratio and the divergence could reach a target at
// all on a set, if it were fitted to that very set. A monotone rule
// accepts a pair when its LCS ratio reaches a threshold that does not
// fall as the divergence grows, lcs >= f(divergence) with f
// nondecreasing. Every model over those two scores whose probability
// rises with the ratio and falls with the divergence is one (the shipped
// group decision's is), and so is the LCS ratio alone (f constant).
// [Bounds] finds, exactly, the best F1 of every such rule on a step grid
// under the targets' precision floors, fitted in-sample; when even that
// does not beat the LCS ratio at its own best threshold on the same set,
// no decision of the family will on new pages of its kind.

// boundGrid is the grid of the rules searched: a threshold per
// divergence step, on LCS steps.
type boundGrid struct{ lcsStep, divStep float64 }

// defaultBoundGrid is the grid [Bounds] searches. The divergence is a
// share of a 100-token window, so its step is exact for pages of 100
// tokens or more.
var defaultBoundGrid = boundGrid{lcsStep: 0.001, divStep: 0.01}

// levels is the number of LCS steps, and the index of the one that
// accepts nothing.
func (g boundGrid) levels() int { return int(math.Round(1/g.lcsStep)) + 1 }

// BoundFigure is one set's bound under one truth.
type BoundFigure struct {
	Set   string `json:"set"`
	Truth string `json:"truth"`
	// Floor is the precision the rule keeps, on FloorSet.
	Floor    float64 `json:"floor"`
	FloorSet string  `json:"floor_set"`
	// Rule is the best monotone rule under the floor (its Threshold is 0:
	// a rule has one per divergence step); Feasible is false
	// when no rule that accepts a duplicate keeps the floor.
	Rule     Point `json:"rule"`
	Feasible bool  `json:"feasible"`
	// Free is the best monotone rule with no floor.
	Free Point `json:"free"`
	// Ratio is the LCS ratio alone at its threshold of best F1 on the
	// set, with no floor: the paper method the targets compare with,
	// chosen as much in-sample as the rule.
	Ratio Point `json:"ratio"`
}

// Beats reports whether the best rule under the floor has the higher F1
// than the LCS ratio at its own best threshold.
func (b BoundFigure) Beats() bool { return b.Feasible && b.Rule.F1 > b.Ratio.F1 }

// BoundFloor is the precision floor issue 9's targets set for a
// decision on sets[set], and the set it is read on: 0.99 on the set
// itself for the near-duplicate decision on a corpus-mode set (LLVM
// pages), else [PrecisionFloor] on the first set (the web pairs), which
// every decision shares. Dropping the web floor on LLVM pages leaves a
// weaker constraint, so the bound still holds.
func BoundFloor(sets []*CVSet, t Truth, set int) (floorSet int, precision float64) {
	if sets[set].Mode == CorpusMode && t.Purpose == Truths()[0].Purpose {
		return set, 0.99
	}
	return 0, PrecisionFloor
}

// Bounds returns, for every truth and set, the best F1 of a monotone
// rule over the LCS ratio and the divergence fitted on that set under
// the floor [BoundFloor] gives, beside the LCS ratio's best.
func Bounds(sets []*CVSet) []BoundFigure {
	var out []BoundFigure
	for _, t := range Truths() {
		tallies := make([]*boundTally, len(sets))
		for i, s := range sets {
			tallies[i] = newBoundTally(s, t, defaultBoundGrid)
		}
		for i, s := range sets {
			fs, p := BoundFloor(sets, t, i)
			fig := BoundFigure{Set: s.Name, Truth: t.Name, Floor: p, FloorSet: sets[fs].Name}
			if fs == i {
				fig.Rule, fig.Feasible = bestStaircase(tallies[i], p, nil, 0)
			} else {
				fig.Rule, fig.Feasible = bestStaircase(tallies[i], 0, tallies[fs], p)
			}
			fig.Free, _ = bestStaircase(tallies[i], 0, nil, 0)
			fig.Ratio = tallies[i].bestRatio()
			out = append(out, fig)
		}
	}
	return out
}

// boundTally is one set's pairs as the search reads them: for every
// divergence step that holds a pair, the duplicates and other pairs
// whose LCS ratio reaches each LCS step (suffix counts; the last step,
// the grid's levels(), accepts none).
type boundTally struct {
	grid boundGrid
	dups int
	bins map[int][]dupOther
}

type dupOther struct{ dup, other int }

func newBoundTally(s *CVSet, t Truth, g boundGrid) *boundTally {
	isDup := s.isDup(t)
	bt := &boundTally{grid: g, bins: map[int][]dupOther{}}
	levels := g.levels()
	for i := range s.Scored {
		sp := &s.Scored[i]
		lcs, div := sp.Scores.LCS, sp.Scores.Divergence
		// A score not computed argues least for a duplicate, as in the
		// models ([similarity.Feature]).
		if math.IsNaN(lcs) {
			lcs = 0
		}
		if math.IsNaN(div) {
			div = 1
		}
		bin := int(math.Floor(div/g.divStep + 1e-9))
		counts := bt.bins[bin]
		if counts == nil {
			counts = make([]dupOther, levels+1)
			bt.bins[bin] = counts
		}
		level := min(int(math.Floor(lcs/g.lcsStep+1e-9)), levels-1)
		if isDup(sp) {
			bt.dups++
			counts[level].dup++
		} else {
			counts[level].other++
		}
	}
	for _, counts := range bt.bins {
		for l := levels - 2; l >= 0; l-- {
			counts[l].dup += counts[l+1].dup
			counts[l].other += counts[l+1].other
		}
	}
	return bt
}

// at returns what the pairs in divergence step bin accept at LCS step
// level.
func (bt *boundTally) at(bin, level int) dupOther {
	if c := bt.bins[bin]; c != nil {
		return c[level]
	}
	return dupOther{}
}

// bestRatio is the LCS ratio alone at its threshold of best F1 (the
// higher of equals).
func (bt *boundTally) bestRatio() Point {
	best := pointOf(1, 0, 0, bt.dups)
	for l := bt.grid.levels() - 1; l >= 0; l-- {
		var acc dupOther
		for bin := range bt.bins {
			c := bt.at(bin, l)
			acc.dup += c.dup
			acc.other += c.other
		}
		if p := pointOf(float64(l)*bt.grid.lcsStep, acc.dup, acc.other, bt.dups-acc.dup); p.F1 > best.F1 {
			best = p
		}
	}
	return best
}

// outcome is what a partial rule accepts: duplicates and other pairs of
// the objective set, and slack, the floored set's count that must end at
// or under zero ([floorSlack]).
type outcome struct {
	dup, other int32
	slack      int64
}

// bestStaircase searches every monotone rule on the grid for the best
// F1 on obj whose precision on obj is at least selfFloor and on floored
// (nil: none) at least floor. It is a dynamic programme over the
// divergence steps in order: for each LCS step, the outcomes reachable
// with the threshold there, merged with those of every lower step (the
// threshold may only rise with the divergence) and pruned to those no
// other outcome of as many duplicates dominates. Cost: divergence steps
// × LCS steps × outcomes kept (at most one per duplicate count without
// a floored set).
func bestStaircase(obj *boundTally, selfFloor float64, floored *boundTally, floor float64) (Point, bool) {
	seen := map[int]bool{}
	var bins []int
	for _, bt := range []*boundTally{obj, floored} {
		if bt == nil {
			continue
		}
		for bin := range bt.bins {
			if !seen[bin] {
				seen[bin] = true
				bins = append(bins, bin)
			}
		}
	}
	slices.Sort(bins)
	levels := obj.grid.levels()
	cur := make([][]outcome, levels+1)
	next := make([][]outcome, levels+1)
	var prefix, merged []outcome
	for bi, bin := range bins {
		prefix = append(prefix[:0], outcome{})
		for l := 0; l <= levels; l++ {
			if bi > 0 {
				if l == 0 {
					prefix = prefix[:0]
				}
				merged = mergeOutcomes(merged[:0], prefix, cur[l])
				prefix, merged = merged, prefix
			}
			o := obj.at(bin, l)
			var ds int64
			if floored != nil {
				c := floored.at(bin, l)
				ds = floorSlack(floor, c.dup, c.other)
			}
			n := next[l][:0]
			for _, s := range prefix {
				n = append(n, outcome{dup: s.dup + int32(o.dup), other: s.other + int32(o.other), slack: s.slack + ds})
			}
			next[l] = n
		}
		cur, next = next, cur
	}
	best, ok := pointOf(0, 0, 0, obj.dups), false
	for _, outcomes := range cur {
		for _, s := range outcomes {
			if s.dup == 0 || s.slack > 0 {
				continue
			}
			p := pointOf(0, int(s.dup), int(s.other), obj.dups-int(s.dup))
			if p.Precision < selfFloor {
				continue
			}
			if !ok || p.F1 > best.F1 {
				best, ok = p, true
			}
		}
	}
	return best, ok
}

// mergeOutcomes appends to dst the outcomes of a and b (each sorted by
// duplicates, then slack, then other pairs, and pruned) that no outcome
// of as many duplicates, no more slack and no more other pairs
// dominates, in the same order.
func mergeOutcomes(dst, a, b []outcome) []outcome {
	less := func(x, y outcome) bool {
		if x.dup != y.dup {
			return x.dup < y.dup
		}
		if x.slack != y.slack {
			return x.slack < y.slack
		}
		return x.other < y.other
	}
	keep := func(s outcome) {
		// Within one duplicate count the kept outcomes have rising slack,
		// so s is dominated exactly when the last kept has no more other
		// pairs.
		if n := len(dst); n > 0 && dst[n-1].dup == s.dup && dst[n-1].other <= s.other {
			return
		}
		dst = append(dst, s)
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if less(b[j], a[i]) {
			keep(b[j])
			j++
		} else {
			keep(a[i])
			i++
		}
	}
	for ; i < len(a); i++ {
		keep(a[i])
	}
	for ; j < len(b); j++ {
		keep(b[j])
	}
	return dst
}

// floorSlack is what accepting dup duplicates and other pairs of the
// floored set adds to its slack: precision >= p holds when
// p·other − (1−p)·dup, summed over the accepted pairs, is at most zero;
// in ten-thousandths, so the sum is an exact integer.
func floorSlack(p float64, dup, other int) int64 {
	q := int64(math.Round(p * 10000))
	return q*int64(other) - (10000-q)*int64(dup)
}
