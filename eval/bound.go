package eval

import (
	"math"
	"runtime"
	"slices"
	"strconv"

	"github.com/winnow-search/winnow/internal/parallel"
	"github.com/winnow-search/winnow/similarity"
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
// no decision of the family can be expected to on new pages of its kind.

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

// BoundFloor is the precision floor the decisions' targets set for a
// decision on sets[set], and the set it is read on: 0.99 on the set
// itself for the near-duplicate decision on a corpus-mode set (LLVM
// pages), else [PrecisionFloor] on the first set (the web pairs), which
// every decision shares. Dropping the web floor on LLVM pages leaves a
// weaker constraint, so the bound still holds.
func BoundFloor(sets []*CVSet, t Truth, set int) (floorSet int, precision float64) {
	if sets[set].Mode == CorpusMode && t.Purpose == similarity.PurposeGroup {
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
			tallies[i] = newBoundTally(s, t, defaultBoundGrid, nil)
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
	// always counts the pairs every rule accepts (a cut with "or"),
	// outside the bins.
	always dupOther
}

type dupOther struct{ dup, other int }

func newBoundTally(s *CVSet, t Truth, g boundGrid, c *boundCut) *boundTally {
	isDup := s.isDup(t)
	bt := &boundTally{grid: g, bins: map[int][]dupOther{}}
	levels := g.levels()
	for i := range s.Scored {
		sp := &s.Scored[i]
		dup := isDup(sp)
		if dup {
			bt.dups++
		}
		if c != nil {
			passes := c.score.value(&sp.Scores) >= c.at
			if c.or && passes {
				if dup {
					bt.always.dup++
				} else {
					bt.always.other++
				}
				continue
			}
			if !c.or && !passes {
				continue // no rule accepts it
			}
		}
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
		if dup {
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
	first := outcome{dup: int32(obj.always.dup), other: int32(obj.always.other)}
	if floored != nil {
		first.slack = floorSlack(floor, floored.always.dup, floored.always.other)
	}
	for bi, bin := range bins {
		prefix = append(prefix[:0], first)
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
	if len(bins) == 0 {
		// Every pair is accepted by the cut alone or by no rule.
		cur = [][]outcome{{first}}
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

// cutScore is a score a cut reads, higher meaning more alike.
type cutScore struct {
	name  string
	value func(*similarity.Scores) float64
}

// cutScores are the scores beside the LCS ratio and the divergence that
// [BoundCuts] tries, each read symmetrically (the order of a pair's two
// documents is arbitrary) and so that higher means more alike. A score
// not computed reads as 0 (NaN compares false with every cut).
var cutScores = []cutScore{
	{"jaccard", func(s *similarity.Scores) float64 { return s.Jaccard }},
	{"length ratio", func(s *similarity.Scores) float64 { return s.LengthRatio }},
	{"containment, larger", func(s *similarity.Scores) float64 { return max(s.ContainAB, s.ContainBA) }},
	{"containment, smaller", func(s *similarity.Scores) float64 { return min(s.ContainAB, s.ContainBA) }},
	{"bloom match, larger", func(s *similarity.Scores) float64 { return max(s.BloomAB, s.BloomBA) }},
	{"bloom match, smaller", func(s *similarity.Scores) float64 { return min(s.BloomAB, s.BloomBA) }},
	{"simhash, 64 - distance", func(s *similarity.Scores) float64 { return float64(64 - s.SimhashDistance) }},
	{"supershingles", func(s *similarity.Scores) float64 { return float64(s.Supershingles) }},
	{"fingerprints", func(s *similarity.Scores) float64 { return float64(s.Fingerprints) }},
	{"central part", func(s *similarity.Scores) float64 { return s.Central }},
	{"coverage, larger", func(s *similarity.Scores) float64 { return max(s.CoverageA, s.CoverageB) }},
	{"coverage, smaller", func(s *similarity.Scores) float64 { return min(s.CoverageA, s.CoverageB) }},
	{"1 - page divergence", func(s *similarity.Scores) float64 { return 1 - s.PageDivergence }},
	{"word-multiset overlap", func(s *similarity.Scores) float64 { return s.Bag }},
}

// boundCut is one cut on a score: with or, a pair at or above at is
// accepted whatever its LCS ratio and divergence; without, a pair under
// it is accepted by no rule.
type boundCut struct {
	score cutScore
	at    float64
	or    bool
}

// String names the cut as -bound prints it.
func (c boundCut) String() string {
	op := "and"
	if c.or {
		op = "or"
	}
	return op + " " + c.score.name + " >= " + strconv.FormatFloat(c.at, 'g', 4, 64)
}

// BoundCut is the best rule of the family widened by one cut on one
// more score, on one set under one truth.
type BoundCut struct {
	Set   string `json:"set"`
	Truth string `json:"truth"`
	Score string `json:"score"`
	// Cut names the best cut ("and length ratio >= 0.9"); empty when no
	// cut keeps the floor.
	Cut      string `json:"cut"`
	Rule     Point  `json:"rule"`
	Feasible bool   `json:"feasible"`
}

// boundCutGrid is the coarser grid the cut search runs on (a search per
// score, cut point and operator).
var boundCutGrid = boundGrid{lcsStep: 0.005, divStep: 0.01}

// boundCutPoints is how many cut points a score is tried at: its
// quantiles over the pairs of LCS ratio 0.5 or more of the sets read.
const boundCutPoints = 20

// BoundCuts widens the family of [Bounds] by one cut on one more score
// at a time ("lcs >= f(divergence) and score >= c", or "… or score >=
// c"): for every set, truth and score of cutScores, the best F1 of such
// a rule fitted on the set under the same floor, over boundCutPoints cut
// points and both operators, on a grid of 0.005 in the LCS ratio. It
// tells whether another score could lift a bound that the family misses,
// not whether the lift holds on new pages: each cut is chosen in-sample
// among 40, and only cross-validation can say that.
func BoundCuts(sets []*CVSet) []BoundCut {
	type job struct {
		t       Truth
		set, sc int
		fs      int
		p       float64
		cuts    []float64
		out     *BoundCut
	}
	var jobs []job
	out := make([]BoundCut, 0, len(Truths())*len(sets)*len(cutScores))
	for _, t := range Truths() {
		for i, s := range sets {
			fs, p := BoundFloor(sets, t, i)
			for sc := range cutScores {
				out = append(out, BoundCut{Set: s.Name, Truth: t.Name, Score: cutScores[sc].name})
				jobs = append(jobs, job{t: t, set: i, sc: sc, fs: fs, p: p, cuts: cutPoints(sets[i], sets[fs], cutScores[sc])})
			}
		}
	}
	for k := range jobs {
		jobs[k].out = &out[k]
	}
	parallel.For(len(jobs), runtime.GOMAXPROCS(0), 1, func(k int) {
		j := jobs[k]
		for _, at := range j.cuts {
			for _, or := range []bool{false, true} {
				c := &boundCut{score: cutScores[j.sc], at: at, or: or}
				obj := newBoundTally(sets[j.set], j.t, boundCutGrid, c)
				var rule Point
				var ok bool
				if j.fs == j.set {
					rule, ok = bestStaircase(obj, j.p, nil, 0)
				} else {
					rule, ok = bestStaircase(obj, 0, newBoundTally(sets[j.fs], j.t, boundCutGrid, c), j.p)
				}
				if ok && (!j.out.Feasible || rule.F1 > j.out.Rule.F1) {
					j.out.Rule, j.out.Feasible, j.out.Cut = rule, true, c.String()
				}
			}
		}
	})
	return out
}

// cutPoints returns up to boundCutPoints distinct quantiles of the
// score over the pairs of LCS ratio 0.5 or more of the two sets.
func cutPoints(a, b *CVSet, sc cutScore) []float64 {
	var vs []float64
	for _, s := range []*CVSet{a, b} {
		for i := range s.Scored {
			if sp := &s.Scored[i]; sp.Scores.LCS >= 0.5 {
				if v := sc.value(&sp.Scores); !math.IsNaN(v) {
					vs = append(vs, v)
				}
			}
		}
		if a == b {
			break
		}
	}
	if len(vs) == 0 {
		return nil
	}
	slices.Sort(vs)
	var cuts []float64
	for q := range boundCutPoints {
		v := vs[q*len(vs)/boundCutPoints]
		if len(cuts) == 0 || cuts[len(cuts)-1] != v {
			cuts = append(cuts, v)
		}
	}
	return cuts
}
