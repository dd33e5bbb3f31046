package eval

import (
	"math"
	"math/rand/v2"
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
// of the grid (the last level accepting nothing) and returns the best F1
// on obj under the floors, and whether any rule accepting a duplicate
// keeps them.
func bruteStaircase(obj *boundTally, selfFloor float64, floored *boundTally, floor float64) (float64, bool) {
	bins := map[int]bool{}
	for bin := range obj.bins {
		bins[bin] = true
	}
	if floored != nil {
		for bin := range floored.bins {
			bins[bin] = true
		}
	}
	maxBin := 0
	for bin := range bins {
		maxBin = max(maxBin, bin)
	}
	levels := obj.grid.levels()
	best, ok := 0.0, false
	f := make([]int, maxBin+1)
	var walk func(bin, lowest int)
	walk = func(bin, lowest int) {
		if bin > maxBin {
			var o, c dupOther
			for b, l := range f {
				x := obj.at(b, l)
				o.dup, o.other = o.dup+x.dup, o.other+x.other
				if floored != nil {
					y := floored.at(b, l)
					c.dup, c.other = c.dup+y.dup, c.other+y.other
				}
			}
			if o.dup == 0 {
				return
			}
			p := pointOf(0, o.dup, o.other, obj.dups-o.dup)
			if p.Precision < selfFloor || pointOf(0, c.dup, c.other, 0).Precision < floor {
				return
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
		var pairs [][3]float64
		for range 2 + rng.IntN(12) {
			div := rng.Float64()
			if rng.IntN(8) == 0 {
				div = math.NaN()
			}
			pairs = append(pairs, [3]float64{rng.Float64(), div, float64(rng.IntN(2))})
		}
		return pairSet(name, pairs)
	}
	label := Truths()[0]
	for trial := range 300 {
		obj := newBoundTally(randomSet("obj"), label, g)
		var floored *boundTally
		selfFloor, floor := 0.0, 0.0
		switch trial % 3 {
		case 1:
			floored, floor = newBoundTally(randomSet("web"), label, g), 0.6+0.1*float64(rng.IntN(4))
		case 2:
			selfFloor = 0.6 + 0.1*float64(rng.IntN(4))
		}
		got, gotOK := bestStaircase(obj, selfFloor, floored, floor)
		want, wantOK := bruteStaircase(obj, selfFloor, floored, floor)
		if gotOK != wantOK || (wantOK && math.Abs(got.F1-want) > 1e-12) {
			t.Fatalf("trial %d: bestStaircase F1 %.4f (feasible %v), every rule %.4f (feasible %v)", trial, got.F1, gotOK, want, wantOK)
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
