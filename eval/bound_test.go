package eval

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/winnow-search/winnow/similarity"
)

// pairSet is a pair-mode set of (LCS ratio, divergence, label) pairs.
func pairSet(name string, pairs [][3]float64) *CVSet {
	s := &CVSet{Name: name, Mode: PairMode}
	for _, p := range pairs {
		s.Scored = append(s.Scored, ScoredPair{Label: int(p[2]), Scores: similarity.Scores{LCS: p[0], Divergence: p[1]}})
	}
	return s
}

// bruteStaircase tries every nondecreasing threshold per divergence step
// of the grid (the last level accepting nothing), judging each pair from
// its scores and the cut (nil: none) as the rules are defined, and
// returns the best F1 on obj with precision at least selfFloor on obj
// and floor on floored (nil: none), and whether any rule accepting a
// duplicate keeps them.
func bruteStaircase(g boundGrid, t Truth, c *boundCut, obj *CVSet, selfFloor float64, floored *CVSet, floor float64) (float64, bool) {
	levels := g.levels()
	place := func(sp *ScoredPair) (bin, level int) {
		lcs, div := sp.Scores.LCS, sp.Scores.Divergence
		if math.IsNaN(lcs) {
			lcs = 0
		}
		if math.IsNaN(div) {
			div = 1
		}
		return int(math.Floor(div/g.divStep + 1e-9)), min(int(math.Floor(lcs/g.lcsStep+1e-9)), levels-1)
	}
	maxBin := 0
	for _, s := range []*CVSet{obj, floored} {
		if s != nil {
			for i := range s.Scored {
				b, _ := place(&s.Scored[i])
				maxBin = max(maxBin, b)
			}
		}
	}
	accepts := func(f []int, sp *ScoredPair) bool {
		b, l := place(sp)
		ok := l >= f[b]
		if c != nil {
			pass := c.score.value(&sp.Scores) >= c.at
			if c.or {
				ok = ok || pass
			} else {
				ok = ok && pass
			}
		}
		return ok
	}
	count := func(f []int, s *CVSet) (tp, fp, fn int) {
		isDup := s.isDup(t)
		for i := range s.Scored {
			sp := &s.Scored[i]
			switch a, d := accepts(f, sp), isDup(sp); {
			case a && d:
				tp++
			case a:
				fp++
			case d:
				fn++
			}
		}
		return
	}
	best, ok := 0.0, false
	f := make([]int, maxBin+1)
	var walk func(bin, lowest int)
	walk = func(bin, lowest int) {
		if bin > maxBin {
			tp, fp, fn := count(f, obj)
			if tp == 0 {
				return
			}
			p := pointOf(0, tp, fp, fn)
			if p.Precision < selfFloor {
				return
			}
			if floored != nil {
				if ftp, ffp, _ := count(f, floored); pointOf(0, ftp, ffp, 0).Precision < floor {
					return
				}
			}
			if !ok || p.F1 > best {
				best, ok = p.F1, true
			}
			return
		}
		for l := lowest; l <= levels; l++ {
			f[bin] = l
			walk(bin+1, l)
		}
	}
	walk(0, 0)
	return best, ok
}

// TestBestStaircaseMatchesBruteForce checks the dynamic programme
// against every rule of a coarse grid, on random sets with and without
// a floored second set and a floor on the set itself.
func TestBestStaircaseMatchesBruteForce(t *testing.T) {
	g := boundGrid{lcsStep: 0.25, divStep: 0.25}
	rng := rand.New(rand.NewPCG(1, 2))
	randomSet := func(name string) *CVSet {
		s := &CVSet{Name: name, Mode: PairMode}
		for range 2 + rng.IntN(12) {
			sc := similarity.Scores{LCS: rng.Float64(), Divergence: rng.Float64(), Jaccard: rng.Float64()}
			if rng.IntN(8) == 0 {
				sc.Divergence = math.NaN()
			}
			s.Scored = append(s.Scored, ScoredPair{Label: rng.IntN(2), Scores: sc})
		}
		return s
	}
	label := Truths()[0]
	jaccard := cutScores[slices.IndexFunc(cutScores, func(c cutScore) bool { return c.name == "jaccard" })]
	for trial := range 600 {
		objSet := randomSet("obj")
		var c *boundCut
		if trial%2 == 1 {
			c = &boundCut{score: jaccard, at: rng.Float64(), or: rng.IntN(2) == 0}
		}
		var flooredSet *CVSet
		selfFloor, floor := 0.0, 0.0
		switch trial % 3 {
		case 1:
			flooredSet, floor = randomSet("web"), 0.6+0.1*float64(rng.IntN(4))
		case 2:
			selfFloor = 0.6 + 0.1*float64(rng.IntN(4))
		}
		var floored *boundTally
		if flooredSet != nil {
			floored = newBoundTally(flooredSet, label, g, c)
		}
		got, gotOK := bestStaircase(newBoundTally(objSet, label, g, c), selfFloor, floored, floor)
		want, wantOK := bruteStaircase(g, label, c, objSet, selfFloor, flooredSet, floor)
		if gotOK != wantOK || (wantOK && math.Abs(got.F1-want) > 1e-12) {
			t.Fatalf("trial %d (cut %v): bestStaircase F1 %.4f (feasible %v), every rule %.4f (feasible %v)", trial, c, got.F1, gotOK, want, wantOK)
		}
	}
}

// TestBounds checks what the bound reports on a set where the
// divergence separates what the LCS ratio cannot: duplicates at ratio
// 0.8 with a low divergence, other pairs at 0.85 with a high one.
func TestBounds(t *testing.T) {
	web := pairSet("web", [][3]float64{{0.8, 0.1, 1}, {0.8, 0.1, 1}, {0.85, 0.9, 0}, {0.85, 0.9, 0}, {0.2, 0.9, 0}})
	other := pairSet("shops", [][3]float64{{0.7, 0.2, 1}, {0.9, 0.95, 0}, {0.95, 0.95, 1}})
	figs := Bounds([]*CVSet{web, other})
	if len(figs) != 2*len(Truths()) {
		t.Fatalf("%d figures, want one per set and truth (%d)", len(figs), 2*len(Truths()))
	}
	w := figs[0]
	if w.Set != "web" || w.FloorSet != "web" || w.Floor != PrecisionFloor {
		t.Errorf("web figure: set %q, floor %v on %q; want the web floor on itself", w.Set, w.Floor, w.FloorSet)
	}
	if !w.Feasible || w.Rule.F1 != 1 || w.Rule.TP != 2 || w.Rule.FP != 0 {
		t.Errorf("web rule %+v (feasible %v): want both duplicates and nothing else", w.Rule, w.Feasible)
	}
	if w.Ratio.F1 >= 1 || w.Ratio.Threshold > 0.8 {
		t.Errorf("LCS ratio alone %+v: cannot take the duplicates at 0.8 without the pairs at 0.85", w.Ratio)
	}
	if !w.Beats() {
		t.Error("the rule does not beat the ratio where the divergence separates")
	}
	s := figs[1]
	if s.FloorSet != "web" {
		t.Errorf("second set floored on %q, want the web pairs", s.FloorSet)
	}
	// A rule held to no floor is the widest search; the LCS ratio alone
	// is one of its rules.
	if s.Free.F1 < s.Rule.F1 || s.Free.F1 < s.Ratio.F1 {
		t.Errorf("free rule F1 %.3f under the floored rule's %.3f or the ratio's %.3f: the free search is the widest", s.Free.F1, s.Rule.F1, s.Ratio.F1)
	}
}

// TestBoundsFloorCanBind checks that the web floor constrains the rule
// on another set: the second set's duplicates sit where the web pairs
// are mostly not duplicates.
func TestBoundsFloorCanBind(t *testing.T) {
	web := pairSet("web", [][3]float64{{0.9, 0.1, 1}, {0.75, 0.6, 0}, {0.75, 0.6, 0}, {0.75, 0.6, 1}})
	other := pairSet("shops", [][3]float64{{0.75, 0.6, 1}, {0.75, 0.6, 1}, {0.75, 0.6, 1}, {0.9, 0.1, 0}})
	s := Bounds([]*CVSet{web, other})[1]
	if s.Free.F1 <= s.Rule.F1 {
		t.Errorf("free F1 %.3f, floored %.3f: the web floor should cost the second set its duplicates", s.Free.F1, s.Rule.F1)
	}
	if s.Feasible {
		t.Errorf("rule %+v: no rule accepting a duplicate of the second set keeps web precision %.2f", s.Rule, PrecisionFloor)
	}
}

// TestBoundCuts checks the widened search where only another score
// separates: duplicates and other pairs at the same LCS ratio and
// divergence, told apart by the Jaccard alone.
func TestBoundCuts(t *testing.T) {
	web := &CVSet{Name: "web", Mode: PairMode}
	for _, p := range [][2]float64{{0.9, 1}, {0.9, 1}, {0.2, 0}, {0.2, 0}} {
		web.Scored = append(web.Scored, ScoredPair{Label: int(p[1]), Scores: similarity.Scores{LCS: 0.8, Divergence: 0.1, Jaccard: p[0]}})
	}
	if fig := Bounds([]*CVSet{web})[0]; fig.Feasible {
		t.Fatalf("family bound %+v feasible: the LCS ratio and divergence cannot separate these pairs", fig.Rule)
	}
	var found bool
	for _, c := range BoundCuts([]*CVSet{web}) {
		if c.Truth != Truths()[0].Name || c.Score != "jaccard" {
			continue
		}
		found = true
		if !c.Feasible || c.Rule.F1 != 1 || c.Cut != "and jaccard >= 0.9" {
			t.Errorf("jaccard cut %q: rule %+v (feasible %v); want \"and jaccard >= 0.9\" taking both duplicates alone", c.Cut, c.Rule, c.Feasible)
		}
	}
	if !found {
		t.Error("no jaccard figure for label >= 1")
	}
}
