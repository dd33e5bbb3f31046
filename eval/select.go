package eval

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/winnow-search/winnow/similarity"
)

// The selection rule (docs/quality.md, "Cross-validated"): a model earns
// its features only when it beats the plain LCS ratio by more than the
// fold-to-fold spread. Every candidate is read at its own operating point
// (the confidence [OwnConfidence] gives it: best F1 over the sets while
// it holds the precision floor on the web pairs, where the
// decision ships), and the LCS ratio is read two ways, since either is
// how an operator could use it instead:
//
//   - as the paper method, at the threshold of best F1 on the training
//     folds (the held-out table sets it so), and
//   - as a model of the ratio alone ([FloorReference]) at its own
//     operating point: the same score held to the same precision floor.
//
// The second matters for the remove decision, whose precision floor the
// paper method's F1-best threshold misses by far (webis-ecir20-dev label
// 3: precision 0.78), so no admissible decision beats it there on every
// set; the first for the group decision, where the ratio held to the
// floor loses the recall the divergence brings back.

// PaperReference and FloorReference name the two readings of the LCS
// ratio the selection rule compares against.
const (
	PaperReference = "lcs"
	FloorReference = "model: lcs"
)

// Beats reports whether the folds a beat the reference's ref by more than
// the fold-to-fold spread on at least one set, and lose to it by more
// than the spread on none; won lists the sets it beats it on. a and ref
// hold one slice of per-fold F1 per set, paired fold by fold. Sets or
// folds that do not pair up, and F1 that is not a number, are an error:
// a NaN would read as a tie and hide a loss.
func Beats(a, ref [][]float64) (ok bool, won []int, err error) {
	if len(a) != len(ref) {
		return false, nil, fmt.Errorf("eval: %d sets against %d", len(a), len(ref))
	}
	for si := range a {
		if len(a[si]) != len(ref[si]) || len(a[si]) < 2 {
			return false, nil, fmt.Errorf("eval: set %d: %d folds against %d (at least 2 needed)", si, len(a[si]), len(ref[si]))
		}
		d := make([]float64, len(a[si]))
		for i := range d {
			d[i] = a[si][i] - ref[si][i]
			if math.IsNaN(d[i]) || math.IsInf(d[i], 0) {
				return false, nil, fmt.Errorf("eval: set %d, fold %d: F1 %v against %v", si, i, a[si][i], ref[si][i])
			}
		}
		mean, sd := meanSD(d)
		switch {
		case mean < -sd:
			return false, nil, nil
		case mean > sd:
			won = append(won, si)
		}
	}
	return len(won) > 0, won, nil
}

// Selection is what the selection rule chose for one truth.
type Selection struct {
	Truth string `json:"truth"`
	// Candidate is the chosen model, Params its fitted numbers and
	// MinConfidence its operating point.
	Candidate     string  `json:"candidate"`
	Params        int     `json:"params"`
	MinConfidence float64 `json:"min_confidence"`
	// Eligible are the models that beat a reading of the LCS ratio by
	// more than the spread (and lose by more on no set), fewest
	// parameters first; empty when none does and FloorReference stands.
	Eligible []Eligible `json:"eligible"`
	// Incumbent is the model that ships (similarity/fitted.go), when the
	// tables hold it. Challenger is the model the rule would take
	// instead, when it does not beat the incumbent by more than the
	// spread on a set without losing to it by more on another: the
	// incumbent then stays (Candidate), since a change to what ships must
	// win as a rule must. Empty when the rule takes the incumbent itself
	// or a challenger beats it.
	Incumbent  string `json:"incumbent,omitempty"`
	Challenger string `json:"challenger,omitempty"`
	// Error says why the rule could not be applied (a reference missing,
	// a fold that is not a number); the other fields are then empty.
	Error string `json:"error,omitempty"`
}

// Eligible is one model the selection rule let through, with the
// reference it beat and the sets it beat it on.
type Eligible struct {
	Candidate string   `json:"candidate"`
	Params    int      `json:"params"`
	Beat      string   `json:"beat"`
	Sets      []string `json:"sets"`
	MeanF1    float64  `json:"mean_f1"`
}

// Select applies the selection rule to the tables of one truth (every set
// scored under it, as [CrossValidate] writes them): a model whose pooled
// precision on the first set stays under [PrecisionFloor] at every
// confidence that accepts a pair is left out; of the others, the models that beat
// either reading of the LCS ratio by more than the spread are eligible;
// of those the one with the fewest parameters is chosen (ties: more sets
// beaten, then the higher mean F1 over the sets), and a larger eligible
// model replaces it only when it beats the chosen one by more than the
// spread in turn. When no model is eligible, FloorReference (the ratio
// alone) is chosen. Last, the incumbent (the model that ships, named by
// incumbent; "" for none) stays unless the choice beats it by more than
// the spread on a set and loses to it by more on none, the incumbent at
// its own point reaching the floor: models this close trade places with
// the seed and the repeats (docs/decisions.md, "What the rule selects"), and what
// ships should not move on that. It returns an error when the tables
// lack a reference or disagree on the candidates.
func Select(tables []CVTable, truth, incumbent string) (Selection, error) {
	tabs := tablesOf(tables, truth)
	sel := Selection{Truth: truth}
	if len(tabs) == 0 || len(tabs[0].AtOwn) == 0 {
		return sel, fmt.Errorf("eval: no table of every model at its own confidence under %q", truth)
	}
	own := tabs[0].AtOwn
	for _, t := range tabs[1:] {
		if len(t.AtOwn) != len(own) {
			return sel, fmt.Errorf("eval: %s and %s hold different candidates", tabs[0].Set, t.Set)
		}
	}
	// folds[c][set] are candidate c's per-fold F1 at its own point.
	folds := make([][][]float64, len(own))
	for ci := range own {
		for _, t := range tabs {
			if t.AtOwn[ci].Candidate != own[ci].Candidate {
				return sel, fmt.Errorf("eval: %s and %s hold different candidates", tabs[0].Set, t.Set)
			}
			folds[ci] = append(folds[ci], t.AtOwn[ci].FoldF1)
		}
	}
	floor := slices.IndexFunc(own, func(f CVFigure) bool { return f.Candidate == FloorReference })
	var paper [][]float64
	for _, t := range tabs {
		i := slices.IndexFunc(t.Figures, func(f CVFigure) bool { return f.Candidate == PaperReference })
		if i < 0 || floor < 0 {
			return sel, fmt.Errorf("eval: %s under %q lacks %q or %q", t.Set, truth, PaperReference, FloorReference)
		}
		paper = append(paper, t.Figures[i].FoldF1)
	}
	for ci := range own {
		if !reachesFloor(own[ci]) {
			continue // never reaches the floor on the first set: not a decision that could ship
		}
		for ri, ref := range [][][]float64{paper, folds[floor]} {
			if ci == floor && ri == 1 {
				continue
			}
			ok, won, err := Beats(folds[ci], ref)
			if err != nil {
				return sel, fmt.Errorf("eval: %s under %q: %w", own[ci].Candidate, truth, err)
			}
			if !ok {
				continue
			}
			e := Eligible{Candidate: own[ci].Candidate, Params: own[ci].Params, Beat: []string{PaperReference + " (its F1-best threshold)", FloorReference + " (held to the precision floor)"}[ri]}
			for _, si := range won {
				e.Sets = append(e.Sets, tabs[si].Set)
			}
			for _, t := range tabs {
				e.MeanF1 += t.AtOwn[ci].F1 / float64(len(tabs))
			}
			sel.Eligible = append(sel.Eligible, e)
			break // one reference beaten is enough
		}
	}
	slices.SortStableFunc(sel.Eligible, func(a, b Eligible) int {
		return cmp.Or(cmp.Compare(a.Params, b.Params), cmp.Compare(len(b.Sets), len(a.Sets)), cmp.Compare(b.MeanF1, a.MeanF1))
	})
	index := func(name string) int {
		return slices.IndexFunc(own, func(f CVFigure) bool { return f.Candidate == name })
	}
	chosen := floor
	if len(sel.Eligible) > 0 {
		chosen = index(sel.Eligible[0].Candidate)
		for _, e := range sel.Eligible[1:] {
			if ci := index(e.Candidate); own[ci].Params > own[chosen].Params {
				ok, _, err := Beats(folds[ci], folds[chosen])
				if err != nil {
					return sel, fmt.Errorf("eval: %s under %q: %w", own[ci].Candidate, truth, err)
				}
				if ok {
					chosen = ci
				}
			}
		}
	}
	if inc := index(incumbent); inc >= 0 && reachesFloor(own[inc]) {
		sel.Incumbent = incumbent
		if inc != chosen {
			ok, _, err := Beats(folds[chosen], folds[inc])
			if err != nil {
				return sel, fmt.Errorf("eval: %s against %s under %q: %w", own[chosen].Candidate, incumbent, truth, err)
			}
			if !ok {
				sel.Challenger = own[chosen].Candidate
				chosen = inc
			}
		}
	}
	sel.Candidate, sel.Params = own[chosen].Candidate, own[chosen].Params
	sel.MinConfidence = tabs[0].OwnConfidences[chosen]
	return sel, nil
}

// reachesFloor reports whether a model at its own point on the first set
// accepts a pair at pooled precision [PrecisionFloor] or more
// ([OwnConfidence] falls back to the strictest confidence when none
// does).
func reachesFloor(f CVFigure) bool {
	return f.Recall > 0 && f.PooledPrecision >= PrecisionFloor
}

// AcrossSeeds is the selection rule read over several fold shuffles: a
// gain that one shuffle shows and another does not is not one to ship.
type AcrossSeeds struct {
	Seeds []uint64 `json:"seeds"`
	// PerSeed are each shuffle's selections, in the order of Seeds.
	PerSeed [][]Selection `json:"per_seed"`
	// Selected is the choice for each truth: what every shuffle selects
	// when they agree; else, of the models eligible under every shuffle,
	// the one with the fewest parameters (then more sets beaten under
	// every shuffle, then the higher mean F1, averaged over the
	// shuffles) unless a larger one beats
	// it by more than the spread under every shuffle; else
	// FloorReference; and the incumbent of every shuffle instead, unless
	// that choice beats it under every shuffle. Its MinConfidence is the
	// highest of the shuffles' own confidences for it (each the one
	// [OwnConfidence] picks under that shuffle; precision need not rise
	// with the confidence, so this is not a re-check at the higher one);
	// Eligible lists the models eligible under every shuffle, each with
	// the sets it beats the ratio on under every shuffle and the
	// readings of the ratio it beat ("… or …" when the shuffles differ).
	Selected []Selection `json:"selected"`
}

// SelectAcross combines the selections of reports that differ only in
// their seed ([CVOptions.Seed]).
func SelectAcross(reps []*CVReport) (*AcrossSeeds, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("eval: no report to select across")
	}
	out := &AcrossSeeds{}
	for _, r := range reps {
		if len(r.Selected) != len(reps[0].Selected) {
			return nil, fmt.Errorf("eval: seeds %d and %d selected for different truths", reps[0].Seed, r.Seed)
		}
		out.Seeds = append(out.Seeds, r.Seed)
		out.PerSeed = append(out.PerSeed, r.Selected)
	}
	for ti, first := range reps[0].Selected {
		sel := Selection{Truth: first.Truth}
		// every[name] sums an eligible model's figures over the seeds
		// that let it through.
		every := map[string]*Eligible{}
		seen := map[string]int{}
		agree := true
		for _, r := range reps {
			s := r.Selected[ti]
			if s.Error != "" {
				return nil, fmt.Errorf("eval: seed %d, %s: %s", r.Seed, s.Truth, s.Error)
			}
			if s.Truth != first.Truth {
				return nil, fmt.Errorf("eval: seeds %d and %d selected for different truths", reps[0].Seed, r.Seed)
			}
			agree = agree && s.Candidate == first.Candidate
			for _, e := range s.Eligible {
				seen[e.Candidate]++
				acc := every[e.Candidate]
				if acc == nil {
					acc = &Eligible{Candidate: e.Candidate, Params: e.Params, Beat: e.Beat, Sets: slices.Clone(e.Sets)}
					every[e.Candidate] = acc
				}
				// Across seeds a model beats what it beats under every
				// seed: the sets beaten under all of them (the tie-break
				// counts them), and the readings of the ratio it beat.
				acc.Sets = slices.DeleteFunc(acc.Sets, func(set string) bool { return !slices.Contains(e.Sets, set) })
				if !slices.Contains(strings.Split(acc.Beat, " or "), e.Beat) {
					acc.Beat += " or " + e.Beat
				}
				acc.MeanF1 += e.MeanF1 / float64(len(reps))
			}
		}
		for name, e := range every {
			if seen[name] == len(reps) {
				sel.Eligible = append(sel.Eligible, *e)
			}
		}
		slices.SortFunc(sel.Eligible, func(a, b Eligible) int {
			return cmp.Or(cmp.Compare(a.Params, b.Params), cmp.Compare(len(b.Sets), len(a.Sets)), cmp.Compare(b.MeanF1, a.MeanF1), cmp.Compare(a.Candidate, b.Candidate))
		})
		switch {
		case agree:
			sel.Candidate = first.Candidate
		case len(sel.Eligible) > 0:
			// The fewest parameters, unless a larger model eligible under
			// every seed beats it by more than the spread under every
			// seed, as Select asks of one seed.
			sel.Candidate = sel.Eligible[0].Candidate
			for _, e := range sel.Eligible[1:] {
				if e.Params <= sel.Eligible[0].Params {
					continue
				}
				all, err := beatsUnderEvery(reps, first.Truth, e.Candidate, sel.Candidate)
				if err != nil {
					return nil, err
				}
				if all {
					sel.Candidate = e.Candidate
				}
			}
		default:
			sel.Candidate = FloorReference
		}
		// The incumbent stays unless the choice beats it under every seed,
		// as Select asks under one; it must reach the floor under every
		// seed to have a standing.
		inc := first.Incumbent
		for _, r := range reps {
			if r.Selected[ti].Incumbent != inc {
				inc = ""
			}
		}
		sel.Incumbent = inc
		if inc != "" && sel.Candidate != inc {
			all, err := beatsUnderEvery(reps, first.Truth, sel.Candidate, inc)
			if err != nil {
				return nil, err
			}
			if !all {
				sel.Challenger, sel.Candidate = sel.Candidate, inc
			}
		}
		for _, r := range reps {
			if f, c, ok := ownFigure(r, first.Truth, sel.Candidate); ok {
				sel.Params, sel.MinConfidence = f.Params, max(sel.MinConfidence, c)
			}
		}
		out.Selected = append(out.Selected, sel)
	}
	return out, nil
}

// beatsUnderEvery reports whether the candidate named a beats the one
// named b ([Beats], each at its own confidence) under every report's
// seed.
// Every seed is read, so a malformed one is an error even after a seed
// where a does not win.
func beatsUnderEvery(reps []*CVReport, truth, a, b string) (bool, error) {
	all := true
	for _, r := range reps {
		fa, errA := ownFolds(r, truth, a)
		fb, errB := ownFolds(r, truth, b)
		if err := cmp.Or(errA, errB); err != nil {
			return false, err
		}
		ok, _, err := Beats(fa, fb)
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return all, nil
}

// tablesOf returns the tables scored under the truth named truth, set by
// set: a corpus set's table names it with a suffix (see [CrossValidate]).
func tablesOf(tables []CVTable, truth string) []CVTable {
	var out []CVTable
	for _, t := range tables {
		if t.Truth == truth || strings.HasPrefix(t.Truth, truth+corpusSuffix) {
			out = append(out, t)
		}
	}
	return out
}

// ownFolds returns the per-fold F1 of the candidate named name at its own
// confidence in every table of the truth, set by set.
func ownFolds(r *CVReport, truth, name string) ([][]float64, error) {
	var out [][]float64
	for _, t := range tablesOf(r.Tables, truth) {
		i := slices.IndexFunc(t.AtOwn, func(f CVFigure) bool { return f.Candidate == name })
		if i < 0 {
			return nil, fmt.Errorf("eval: seed %d: no %s under %q in %s", r.Seed, name, truth, t.Set)
		}
		out = append(out, t.AtOwn[i].FoldF1)
	}
	return out, nil
}

// ownFigure returns the figures and the own confidence of the candidate
// named name in the report's first table of the truth.
func ownFigure(r *CVReport, truth, name string) (CVFigure, float64, bool) {
	tabs := tablesOf(r.Tables, truth)
	if len(tabs) == 0 {
		return CVFigure{}, 0, false
	}
	i := slices.IndexFunc(tabs[0].AtOwn, func(f CVFigure) bool { return f.Candidate == name })
	if i < 0 {
		return CVFigure{}, 0, false
	}
	return tabs[0].AtOwn[i], tabs[0].OwnConfidences[i], true
}

// Shipped returns the name of the -cv candidate whose features the
// default decision of the truth named truth carries ("" when none does)
// and that decision's min_confidence.
func Shipped(truth string) (name string, minConfidence float64) {
	for _, tr := range Truths() {
		if tr.Name == truth {
			pm := similarity.DefaultModel(tr.Purpose)
			if i := shippedIndex(ModelCandidates(), tr.Purpose); i >= 0 {
				name = ModelCandidates()[i].Name
			}
			return name, pm.MinConfidence
		}
	}
	return "", 0
}

// shippedIndex returns the index in models of the candidate whose
// features the default decision of purpose p carries, -1 when none does.
func shippedIndex(models []Candidate, p similarity.Purpose) int {
	return slices.IndexFunc(models, func(c Candidate) bool {
		return slices.Equal(c.Features, similarity.DefaultModel(p).Seq.Features) && c.Veto == similarity.DefaultModel(p).Seq.NumbersVeto
	})
}
