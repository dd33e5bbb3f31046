package eval

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/winnow-search/winnow/similarity"
)

// shift returns ref with each fold moved by d[i % len(d)].
func shift(ref []float64, d ...float64) []float64 {
	out := make([]float64, len(ref))
	for i, x := range ref {
		out[i] = x + d[i%len(d)]
	}
	return out
}

var refFolds = []float64{0.70, 0.80, 0.75, 0.90, 0.65, 0.85, 0.72, 0.78}

// Gains in F1, fold by fold: clearly beyond the spread, inside it, and a
// loss beyond it.
var (
	clearGain = []float64{0.10, 0.12, 0.09, 0.11}   // mean 0.105, sd ≈ 0.013
	noisyGain = []float64{0.10, -0.08, 0.09, -0.07} // mean 0.01, sd ≈ 0.097
	clearLoss = []float64{-0.10, -0.12, -0.09, -0.11}
	noChange  = []float64{0}
)

func TestBeats(t *testing.T) {
	for _, c := range []struct {
		name string
		a    [][]float64
		ok   bool
		won  []int
	}{
		{"gain on one set, tie on the other", [][]float64{shift(refFolds, clearGain...), shift(refFolds, noisyGain...)}, true, []int{0}},
		{"gain on both", [][]float64{shift(refFolds, clearGain...), shift(refFolds, clearGain...)}, true, []int{0, 1}},
		{"ties everywhere", [][]float64{shift(refFolds, noisyGain...), shift(refFolds, noChange...)}, false, nil},
		{"a gain does not buy a loss", [][]float64{shift(refFolds, clearGain...), shift(refFolds, clearLoss...)}, false, nil},
	} {
		ok, won, err := Beats(c.a, [][]float64{refFolds, refFolds})
		if err != nil || ok != c.ok || !slices.Equal(won, c.won) {
			t.Errorf("%s: Beats = %v, %v, %v; want %v, %v", c.name, ok, won, err, c.ok, c.won)
		}
	}
	// A fold that is not a number would read as a tie and hide a loss;
	// folds that do not pair up are no comparison.
	nan := shift(refFolds, clearLoss...)
	nan[3] = math.NaN()
	for name, a := range map[string][][]float64{
		"a NaN fold":     {shift(refFolds, clearGain...), nan},
		"unpaired folds": {shift(refFolds, clearGain...), refFolds[:4]},
		"a set missing":  {shift(refFolds, clearGain...)},
	} {
		if _, _, err := Beats(a, [][]float64{refFolds, refFolds}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// selTables builds the tables of one truth on two sets: the paper LCS
// ratio at paper[si] and each model at its own confidence with the folds
// given, the FloorReference's being refFolds.
func selTables(paper [2][]float64, models map[string][2][]float64, params map[string]int) []CVTable {
	names := []string{FloorReference}
	for n := range models {
		names = append(names, n)
	}
	slices.Sort(names[1:])
	var tabs []CVTable
	for si, set := range []string{"web", "docs (corpus)"} {
		tab := CVTable{Set: set, Truth: "label = 3", Figures: []CVFigure{{Candidate: PaperReference, Params: 1, FoldF1: paper[si]}}}
		if si == 1 {
			tab.Truth = "label = 3" + corpusSuffix
		}
		for i, n := range names {
			folds, p := refFolds, 2
			if n != FloorReference {
				folds, p = models[n][si], params[n]
			}
			f1, _ := meanSD(folds)
			tab.AtOwn = append(tab.AtOwn, CVFigure{Candidate: n, Params: p, F1: f1, Recall: 0.7, PooledPrecision: PrecisionFloor, FoldF1: folds})
			tab.OwnConfidences = append(tab.OwnConfidences, 0.8+0.01*float64(i))
		}
		tabs = append(tabs, tab)
	}
	// A table of another truth, which Select must leave out.
	tabs = append(tabs, CVTable{Set: "web", Truth: "label >= 1", AtOwn: []CVFigure{{Candidate: "model: other"}}})
	return tabs
}

func TestSelect(t *testing.T) {
	low := shift(refFolds, 0.2, 0.3) // a paper method far above every model
	params := map[string]int{"model: three": 3, "model: four": 4, "model: five": 5, "model: loser": 3, "model: zz": 3}
	for _, c := range []struct {
		name     string
		paper    [2][]float64
		models   map[string][2][]float64
		want     string
		eligible []string
		// beat, when set, is what the first eligible model beat;
		// lowPrecision names a model whose precision stays under the
		// floor.
		beat         string
		lowPrecision string
		// incumbent names the model that ships; challenger is the
		// model the rule would take instead when the incumbent stays,
		// hasIncumbent whether the incumbent has a standing (reaches
		// the floor).
		incumbent, challenger string
		hasIncumbent          bool
	}{
		{
			name:   "nothing beats the ratio: it stands alone",
			paper:  [2][]float64{low, low},
			models: map[string][2][]float64{"model: three": {shift(refFolds, noisyGain...), refFolds}},
			want:   FloorReference,
		},
		{
			name:  "fewest parameters among the eligible",
			paper: [2][]float64{low, low},
			models: map[string][2][]float64{
				"model: three": {shift(refFolds, clearGain...), shift(refFolds, clearGain...)},
				"model: four":  {shift(refFolds, 0.12, 0.10, 0.11, 0.09), shift(refFolds, 0.12, 0.10, 0.11, 0.09)},
			},
			want:     "model: three",
			eligible: []string{"model: three", "model: four"},
		},
		{
			name:  "a larger model replaces the chosen one only by beating it beyond the spread",
			paper: [2][]float64{low, low},
			models: map[string][2][]float64{
				"model: three": {shift(refFolds, clearGain...), refFolds},
				"model: four":  {shift(refFolds, 0.25, 0.27, 0.24, 0.26), refFolds},
			},
			want:     "model: four",
			eligible: []string{"model: three", "model: four"},
		},
		{
			name:  "a loss beyond the spread on one set rules a model out",
			paper: [2][]float64{low, low},
			models: map[string][2][]float64{
				"model: loser": {shift(refFolds, 0.3, 0.32, 0.29, 0.31), shift(refFolds, clearLoss...)},
				"model: five":  {shift(refFolds, clearGain...), refFolds},
			},
			want:     "model: five",
			eligible: []string{"model: five"},
		},
		{
			name: "beating the paper method's F1-best threshold is enough",
			// The ratio held to the floor ties with the paper method (a
			// noisy gain); the model beats the paper method clearly and
			// ties with the ratio at the floor.
			paper: [2][]float64{shift(refFolds, -0.10, 0.08, -0.09, 0.07), refFolds},
			models: map[string][2][]float64{
				"model: three": {shift(refFolds, 0.0, 0.20, 0.0, 0.18), refFolds},
			},
			want:     "model: three",
			eligible: []string{"model: three"},
		},
		{
			// Beating both readings lists the model once, under the
			// paper method's.
			name:  "a model that beats both readings is listed once",
			paper: [2][]float64{shift(refFolds, -0.10, 0.08, -0.09, 0.07), refFolds},
			models: map[string][2][]float64{
				"model: three": {shift(refFolds, 0.2, 0.21, 0.19, 0.2), refFolds},
			},
			want:     "model: three",
			eligible: []string{"model: three"},
			beat:     PaperReference + " (its F1-best threshold)",
		},
		{
			name:  "equal parameters: more sets beaten before a higher mean F1",
			paper: [2][]float64{low, low},
			models: map[string][2][]float64{
				// One gains a little more over both sets, on one set; the
				// other beats the ratio on two.
				"model: three": {shift(refFolds, 0.21, 0.23, 0.20, 0.22), refFolds},
				"model: zz":    {shift(refFolds, 0.10, 0.12, 0.09, 0.11), shift(refFolds, 0.10, 0.12, 0.09, 0.11)},
			},
			want:     "model: zz",
			eligible: []string{"model: zz", "model: three"},
		},
		{
			name:  "a model that never reaches the precision floor is left out",
			paper: [2][]float64{low, low},
			models: map[string][2][]float64{
				"model: five": {shift(refFolds, clearGain...), refFolds},
			},
			lowPrecision: "model: five",
			want:         FloorReference,
		},
		{
			name:  "equal parameters: more sets beaten first",
			paper: [2][]float64{low, low},
			models: map[string][2][]float64{
				"model: three": {shift(refFolds, 0.2, 0.21, 0.19, 0.2), refFolds},
				"model: loser": {shift(refFolds, clearGain...), shift(refFolds, clearGain...)},
			},
			want:     "model: loser",
			eligible: []string{"model: loser", "model: three"},
		},
		{
			name:  "the incumbent stays against a choice inside the spread",
			paper: [2][]float64{low, low},
			models: map[string][2][]float64{
				"model: three": {shift(refFolds, clearGain...), refFolds},
				"model: four":  {shift(refFolds, 0.10, 0.13, 0.08, 0.11), refFolds},
			},
			incumbent:    "model: four",
			hasIncumbent: true,
			want:         "model: four",
			challenger:   "model: three",
			eligible:     []string{"model: three", "model: four"},
		},
		{
			name:  "a choice beyond the spread replaces the incumbent",
			paper: [2][]float64{low, low},
			models: map[string][2][]float64{
				"model: three": {shift(refFolds, clearGain...), refFolds},
				"model: five":  {refFolds, refFolds},
			},
			incumbent:    "model: five",
			hasIncumbent: true,
			want:         "model: three",
			eligible:     []string{"model: three"},
		},
		{
			name:  "an incumbent under the floor has no standing",
			paper: [2][]float64{low, low},
			models: map[string][2][]float64{
				"model: three": {shift(refFolds, clearGain...), refFolds},
				"model: five":  {shift(refFolds, clearGain...), refFolds},
			},
			incumbent:    "model: five",
			lowPrecision: "model: five",
			want:         "model: three",
			eligible:     []string{"model: three"},
		},
	} {
		tabs := selTables(c.paper, c.models, params)
		for i := range tabs[0].AtOwn {
			tabs[0].AtOwn[i].PooledPrecision = PrecisionFloor
			if tabs[0].AtOwn[i].Candidate == c.lowPrecision {
				// Its fold mean reaches the floor (a fold that accepts
				// nothing counts 1); the pooled precision the rule reads
				// does not.
				tabs[0].AtOwn[i].Precision = 1
				tabs[0].AtOwn[i].PooledPrecision = PrecisionFloor - 0.01
			}
		}
		sel, err := Select(tabs, "label = 3", c.incumbent)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if sel.Challenger != c.challenger || (sel.Incumbent != "") != c.hasIncumbent || c.hasIncumbent && sel.Incumbent != c.incumbent {
			t.Errorf("%s: incumbent %q, challenger %q; want %q (standing %v), %q", c.name, sel.Incumbent, sel.Challenger, c.incumbent, c.hasIncumbent, c.challenger)
		}
		var eligible []string
		for _, e := range sel.Eligible {
			eligible = append(eligible, e.Candidate)
		}
		if sel.Candidate != c.want || !slices.Equal(eligible, c.eligible) {
			t.Errorf("%s: selected %s, eligible %v; want %s, %v", c.name, sel.Candidate, eligible, c.want, c.eligible)
		}
		if c.beat != "" && (len(sel.Eligible) == 0 || sel.Eligible[0].Beat != c.beat) {
			t.Errorf("%s: eligible %+v, want the first to have beaten %s", c.name, sel.Eligible, c.beat)
		}
		i := slices.IndexFunc(tabs[0].AtOwn, func(f CVFigure) bool { return f.Candidate == sel.Candidate })
		if sel.MinConfidence != tabs[0].OwnConfidences[i] || sel.Params != tabs[0].AtOwn[i].Params {
			t.Errorf("%s: selection %+v, want the candidate's own confidence %.2f and %d parameters", c.name, sel, tabs[0].OwnConfidences[i], tabs[0].AtOwn[i].Params)
		}
	}
	if _, err := Select(selTables([2][]float64{low, low}, nil, params), "label >= 2", ""); err == nil {
		t.Error("Select on a truth without tables: no error")
	}
	tabs := selTables([2][]float64{low, low}, nil, params)
	tabs[1].Figures = nil
	if _, err := Select(tabs, "label = 3", ""); err == nil {
		t.Error("Select without the paper method's figures: no error")
	}
}

func TestSelectAcross(t *testing.T) {
	params := map[string]int{"model: three": 3, "model: four": 4}
	low := shift(refFolds, 0.2, 0.3)
	// Under one seed both models beat the ratio and the larger beats the
	// smaller; under the other only the smaller is eligible.
	seedA := selTables([2][]float64{low, low}, map[string][2][]float64{
		"model: three": {shift(refFolds, clearGain...), refFolds},
		"model: four":  {shift(refFolds, 0.25, 0.27, 0.24, 0.26), refFolds},
	}, params)
	seedB := selTables([2][]float64{low, low}, map[string][2][]float64{
		"model: three": {shift(refFolds, clearGain...), refFolds},
		"model: four":  {shift(refFolds, noisyGain...), refFolds},
	}, params)
	// A seed under which the own confidence of the smaller is higher.
	seedC := selTables([2][]float64{low, low}, map[string][2][]float64{
		"model: three": {shift(refFolds, clearGain...), refFolds},
		"model: four":  {shift(refFolds, noisyGain...), refFolds},
	}, params)
	for i := range seedC {
		for j := range seedC[i].OwnConfidences {
			seedC[i].OwnConfidences[j] += 0.05
		}
	}
	report := func(seed uint64, tabs []CVTable) *CVReport {
		sel, err := Select(tabs, "label = 3", "")
		if err != nil {
			t.Fatal(err)
		}
		return &CVReport{Seed: seed, Tables: tabs, Selected: []Selection{sel}}
	}
	a, b, c := report(0, seedA), report(1, seedB), report(2, seedC)
	if a.Selected[0].Candidate != "model: four" || b.Selected[0].Candidate != "model: three" {
		t.Fatalf("the seeds select %s and %s, want the fixture's four and three", a.Selected[0].Candidate, b.Selected[0].Candidate)
	}
	for _, cs := range []struct {
		name     string
		reps     []*CVReport
		want     string
		conf     float64
		eligible []string
	}{
		{"one seed", []*CVReport{a}, "model: four", seedA[0].OwnConfidences[1], []string{"model: three", "model: four"}},
		{"seeds agree", []*CVReport{b, b}, "model: three", seedB[0].OwnConfidences[2], []string{"model: three"}},
		{"seeds differ: the fewest parameters eligible under both", []*CVReport{a, b}, "model: three", seedA[0].OwnConfidences[2], []string{"model: three"}},
		{"the highest own confidence of the seeds", []*CVReport{b, c}, "model: three", seedC[0].OwnConfidences[2], []string{"model: three"}},
	} {
		got, err := SelectAcross(cs.reps)
		if err != nil {
			t.Fatalf("%s: %v", cs.name, err)
		}
		s := got.Selected[0]
		var eligible []string
		for _, e := range s.Eligible {
			eligible = append(eligible, e.Candidate)
		}
		if s.Candidate != cs.want || s.MinConfidence != cs.conf || s.Params != params[cs.want] || !slices.Equal(eligible, cs.eligible) || len(got.PerSeed) != len(cs.reps) {
			t.Errorf("%s: %+v (eligible %v), want %s at %.2f, eligible %v", cs.name, s, eligible, cs.want, cs.conf, cs.eligible)
		}
	}
	// Across seeds a model is credited with the sets it beats the ratio
	// on under every seed: here both sets under one, the first under the
	// other.
	both := report(9, selTables([2][]float64{low, low}, map[string][2][]float64{
		"model: three": {shift(refFolds, clearGain...), shift(refFolds, clearGain...)},
		"model: four":  {shift(refFolds, noisyGain...), refFolds},
	}, params))
	if e := both.Selected[0].Eligible; len(e) != 1 || len(e[0].Sets) != 2 {
		t.Fatalf("the two-set fixture: eligible %+v, want model: three beating on both sets", e)
	}
	for _, reps := range [][]*CVReport{{both, b}, {b, both}} {
		got, err := SelectAcross(reps)
		if err != nil || len(got.Selected[0].Eligible) != 1 || !slices.Equal(got.Selected[0].Eligible[0].Sets, []string{"web"}) {
			t.Errorf("a model beating on two sets under seed %d and one under seed %d: %+v, %v; want it credited with web alone", reps[0].Seed, reps[1].Seed, got, err)
		}
	}
	// A model that beats one reading of the ratio under one seed and the
	// other under another is said to beat either.
	paperLow := report(10, selTables([2][]float64{refFolds, refFolds}, map[string][2][]float64{
		"model: three": {shift(refFolds, clearGain...), refFolds},
		"model: four":  {shift(refFolds, noisyGain...), refFolds},
	}, params))
	if e, f := paperLow.Selected[0].Eligible, b.Selected[0].Eligible; len(e) != 1 || len(f) != 1 || e[0].Beat == f[0].Beat {
		t.Fatalf("the readings fixture: eligible %+v and %+v, want model: three beating another reading under each", e, f)
	}
	if got, err := SelectAcross([]*CVReport{paperLow, b}); err != nil || len(got.Selected[0].Eligible) != 1 ||
		got.Selected[0].Eligible[0].Beat != paperLow.Selected[0].Eligible[0].Beat+" or "+b.Selected[0].Eligible[0].Beat {
		t.Errorf("a model beating a different reading under each seed: %+v, %v; want both readings named", got, err)
	}
	// The seeds disagree (a third model wins under one), but a larger
	// model eligible under both beats the fewest-parameter one under
	// both: it replaces it, as Select's own step does.
	params["model: zz"] = 3
	withZZ := selTables([2][]float64{low, low}, map[string][2][]float64{
		"model: three": {shift(refFolds, clearGain...), refFolds},
		"model: four":  {shift(refFolds, 0.25, 0.27, 0.24, 0.26), refFolds},
		"model: zz":    {shift(refFolds, clearGain...), shift(refFolds, clearGain...)},
	}, params)
	z := report(4, withZZ)
	if z.Selected[0].Candidate != "model: zz" {
		t.Fatalf("the fixture's third seed selects %s, want model: zz", z.Selected[0].Candidate)
	}
	got, err := SelectAcross([]*CVReport{a, z})
	if err != nil || got.Selected[0].Candidate != "model: four" {
		t.Errorf("a larger model beating the fewest-parameter one under every seed: %+v, %v; want model: four", got, err)
	}
	// The incumbent stays across seeds unless the choice beats it under
	// every seed: under one seed the smaller model beats it, under the
	// other it ties with it.
	withIncumbent := func(seed uint64, three []float64) *CVReport {
		tabs := selTables([2][]float64{low, low}, map[string][2][]float64{
			"model: three": {three, refFolds},
			"model: four":  {shift(refFolds, clearGain...), refFolds},
		}, params)
		sel, err := Select(tabs, "label = 3", "model: four")
		if err != nil {
			t.Fatal(err)
		}
		return &CVReport{Seed: seed, Tables: tabs, Selected: []Selection{sel}}
	}
	beatsIt, tiesIt := withIncumbent(6, shift(refFolds, 0.3, 0.32, 0.29, 0.31)), withIncumbent(7, shift(refFolds, clearGain...))
	if beatsIt.Selected[0].Candidate != "model: three" || tiesIt.Selected[0].Candidate != "model: four" || tiesIt.Selected[0].Challenger != "model: three" {
		t.Fatalf("the incumbent fixture's seeds select %+v and %+v, want three, and four kept against three", beatsIt.Selected[0], tiesIt.Selected[0])
	}
	got, err = SelectAcross([]*CVReport{beatsIt, tiesIt})
	if s := got.Selected[0]; err != nil || s.Candidate != "model: four" || s.Challenger != "model: three" || s.Incumbent != "model: four" {
		t.Errorf("a choice that beats the incumbent under one seed only: %+v, %v; want model: four kept against model: three", s, err)
	}
	got, err = SelectAcross([]*CVReport{beatsIt, beatsIt})
	if s := got.Selected[0]; err != nil || s.Candidate != "model: three" || s.Challenger != "" {
		t.Errorf("a choice that beats the incumbent under every seed: %+v, %v; want model: three", s, err)
	}
	// An incumbent under the floor under one seed has no standing across
	// the seeds: the rule's choice stands.
	underFloor := withIncumbent(8, shift(refFolds, clearGain...))
	for i, f := range underFloor.Tables[0].AtOwn {
		if f.Candidate == "model: four" {
			underFloor.Tables[0].AtOwn[i].PooledPrecision = PrecisionFloor - 0.01
		}
	}
	sel, err := Select(underFloor.Tables, "label = 3", "model: four")
	if err != nil || sel.Incumbent != "" || sel.Candidate != "model: three" {
		t.Fatalf("an incumbent under the floor: %+v, %v; want model: three and no incumbent", sel, err)
	}
	underFloor.Selected = []Selection{sel}
	got, err = SelectAcross([]*CVReport{tiesIt, underFloor})
	if s := got.Selected[0]; err != nil || s.Candidate != "model: three" || s.Incumbent != "" || s.Challenger != "" {
		t.Errorf("an incumbent under the floor under one seed: %+v, %v; want model: three, no incumbent", s, err)
	}
	// A seed whose rule could not be applied is an error, not a skip.
	bad := report(5, seedB)
	bad.Selected[0] = Selection{Truth: "label = 3", Error: "no reference"}
	if _, err := SelectAcross([]*CVReport{a, bad}); err == nil {
		t.Error("SelectAcross over a failed selection: no error")
	}
	// No model eligible under every seed: the ratio alone.
	none := selTables([2][]float64{low, low}, map[string][2][]float64{
		"model: three": {shift(refFolds, noisyGain...), refFolds},
		"model: four":  {shift(refFolds, 0.25, 0.27, 0.24, 0.26), refFolds},
	}, params)
	got, err = SelectAcross([]*CVReport{b, report(3, none)})
	if err != nil || got.Selected[0].Candidate != FloorReference || got.Selected[0].Params != 2 {
		t.Errorf("no model eligible under both seeds: %+v, %v; want %s", got, err, FloorReference)
	}
	if _, err := SelectAcross(nil); err == nil {
		t.Error("SelectAcross of no report: no error")
	}
}

// TestJudgedPairs checks the confidence sweep's counts: a pair whose
// probability equals the confidence is accepted, a pair that is not a
// candidate never is, and its duplicates count as missed.
func TestJudgedPairs(t *testing.T) {
	m := similarity.Model{Features: []similarity.Feature{similarity.FeatureLCS}, Weights: []float64{20}, Intercept: -10}
	pairs := []ScoredPair{
		{Candidate: true, Scores: similarity.Scores{LCS: 0.7, HasLCS: true}},  // duplicate
		{Candidate: true, Scores: similarity.Scores{LCS: 0.55, HasLCS: true}}, // distinct
		{Candidate: false, Scores: similarity.Scores{LCS: 1, HasLCS: true}},   // duplicate, never accepted
	}
	dup := []bool{true, false, true}
	js, dups := judgeCandidates(len(pairs), func(i int) (*ScoredPair, bool) { return &pairs[i], dup[i] }, &m)
	if len(js) != 2 || dups != 2 {
		t.Fatalf("judgeCandidates: %d candidates, %d duplicates; want 2, 2", len(js), dups)
	}
	at := js[1].prob // the distinct pair's probability: accepted at it
	if pt := js.at(at, dups); pt.TP != 1 || pt.FP != 1 || pt.FN != 1 || pt.Precision != 0.5 || pt.Recall != 0.5 {
		t.Errorf("at the distinct pair's probability: %+v, want tp 1, fp 1, fn 1", pt)
	}
	if pt := js.at(math.Nextafter(at, 1), dups); pt.TP != 1 || pt.FP != 0 || pt.FN != 1 {
		t.Errorf("just above it: %+v, want tp 1, fp 0, fn 1", pt)
	}
	if pt := js.at(0.999999, dups); pt.TP != 0 || pt.FP != 0 || pt.FN != 2 || pt.Precision != 1 || pt.Recall != 0 {
		t.Errorf("above every pair: %+v, want nothing accepted, both duplicates missed", pt)
	}
}

// TestSummarizePooled checks the pooled precision against the fold mean:
// a fold that accepts nothing counts 1 in the mean and nothing in the
// pool.
func TestSummarizePooled(t *testing.T) {
	f := summarize("m", 2, []foldScore{
		{p: 1, r: 0, f: 0},                     // accepts nothing
		{p: 0.9, r: 0.9, f: 0.9, tp: 9, fp: 1}, // 9 of 10
		{p: 0.5, r: 0.5, f: 0.5, tp: 1, fp: 1}, // 1 of 2
	})
	if math.Abs(f.Precision-0.8) > 1e-12 || math.Abs(f.PooledPrecision-10.0/12) > 1e-12 {
		t.Errorf("precision %.4f, pooled %.4f; want the mean 0.8 and the pooled 10/12", f.Precision, f.PooledPrecision)
	}
	if none := summarize("m", 2, []foldScore{{p: 1}, {p: 1}}); none.PooledPrecision != 1 {
		t.Errorf("nothing accepted in any fold: pooled %v, want 1 (as a fold's precision)", none.PooledPrecision)
	}
}

// TestInnerSplits: every candidate training pair is judged in the inner
// split that holds its group and fitted on in the others; test pairs
// never appear, and pairs that are not candidates are neither fitted nor
// judged, only counted as missed when they are duplicates.
func TestInnerSplits(t *testing.T) {
	var webPairs, otherPairs []ScoredPair
	for i := range 30 {
		webPairs = append(webPairs, ScoredPair{Label: i % 4, Candidate: i%7 != 0, Scores: similarity.Scores{LCS: float64(i)}})
		otherPairs = append(otherPairs, ScoredPair{Label: i % 4, Candidate: true, Scores: similarity.Scores{LCS: float64(100 + i)}})
	}
	web := NewCVSet("web", &Set{Mode: PairMode}, &Report{Scored: webPairs})
	other := NewCVSet("other", &Set{Mode: PairMode}, &Report{Scored: otherPairs})
	// Pairs 0-5 are the outer test part.
	var trainIdx [][]int
	for range 2 {
		var idx []int
		for i := 6; i < 30; i++ {
			idx = append(idx, i)
		}
		trainIdx = append(trainIdx, idx)
	}
	const k = 5
	splits := innerSplits([]*CVSet{web, other}, trainIdx, Truths()[0], k, rand.New(rand.NewPCG(1, 2)))
	if len(splits) != k {
		t.Fatalf("%d splits, want %d", len(splits), k)
	}
	judged := map[int]int{}
	for g, sp := range splits {
		fitted := map[float64]bool{}
		for _, i := range sp.fitOn[0] {
			p := &web.Scored[i]
			if !p.Candidate {
				t.Errorf("split %d fits on a pair that is not a candidate (LCS %v)", g, p.Scores.LCS)
			}
			fitted[p.Scores.LCS] = true
		}
		for _, i := range sp.judge[0] {
			judged[i]++
			if i < 6 {
				t.Errorf("split %d judges outer test pair %d", g, i)
			}
			if fitted[float64(i)] {
				t.Errorf("split %d fits on pair %d, which it judges", g, i)
			}
		}
		if len(sp.fitOn[1])+len(sp.judge[1]) != 24 || len(sp.judge[1]) == 0 {
			t.Errorf("split %d fits on %d and judges %d of the other set's 24 training pairs, want each once and some judged", g, len(sp.fitOn[1]), len(sp.judge[1]))
		}
		if len(sp.fitOn[1]) == 0 || len(sp.fitOn[1]) >= 24 {
			t.Errorf("split %d fits on %d of the other set's 24 training pairs, want some held out", g, len(sp.fitOn[1]))
		}
		for _, i := range sp.fitOn[1] {
			p := &other.Scored[i]
			if p.Scores.LCS < 106 {
				t.Errorf("split %d fits on the other set's outer test pair (LCS %v)", g, p.Scores.LCS)
			}
		}
	}
	missed := 0
	for _, sp := range splits {
		missed += sp.missed[0]
	}
	for i := 6; i < 30; i++ {
		want := 1
		if i%7 == 0 {
			want = 0 // not a candidate: counted as missed, never judged
		}
		if judged[i] != want {
			t.Errorf("training pair %d judged %d times, want %d", i, judged[i], want)
		}
	}
	// Pairs 7, 14 and 21 are duplicates (labels 3, 2, 1) that are not
	// candidates; 28 (label 0) is not a duplicate.
	if missed != 3 {
		t.Errorf("%d duplicates counted missed, want 3", missed)
	}
}

// TestInnerSplitsCorpus: in corpus mode a pair joins two pages, and it is
// judged in the inner fold of each (twice when they fall apart) and
// fitted on in every other fold; a duplicate that is not a candidate is
// counted missed each time it is judged.
func TestInnerSplitsCorpus(t *testing.T) {
	cs := &CVSet{Name: "corpus", Mode: CorpusMode, groups: 12}
	for a := range 12 {
		for b := a + 1; b < 12; b++ {
			i := len(cs.Scored)
			cs.Scored = append(cs.Scored, ScoredPair{Label: (a + b) % 2, Candidate: i%5 != 0, Scores: similarity.Scores{LCS: float64(i)}})
			cs.groupA, cs.groupB = append(cs.groupA, a), append(cs.groupB, b)
		}
	}
	var idx []int
	for i := range cs.Scored {
		idx = append(idx, i)
	}
	splits := innerSplits([]*CVSet{cs}, [][]int{idx}, Truths()[0], innerFolds, rand.New(rand.NewPCG(5, 6)))
	judged, fitted := map[int]int{}, map[int]int{}
	missed, wantMissed, twice := 0, 0, 0
	for _, sp := range splits {
		for _, i := range sp.judge[0] {
			judged[i]++
		}
		for _, i := range sp.fitOn[0] {
			p := &cs.Scored[i]
			fitted[int(p.Scores.LCS)]++
		}
		missed += sp.missed[0]
	}
	for i, sp := range cs.Scored {
		if !sp.Candidate {
			if judged[i]+fitted[i] != 0 {
				t.Errorf("pair %d is not a candidate but judged %d and fitted %d times", i, judged[i], fitted[i])
			}
			continue
		}
		if judged[i] < 1 || judged[i] > 2 || judged[i]+fitted[i] != innerFolds {
			t.Errorf("pair %d judged %d and fitted %d times, want judged once or twice and fitted in every other of %d folds", i, judged[i], fitted[i], innerFolds)
		}
		if judged[i] == 2 {
			twice++
		}
	}
	if twice == 0 {
		t.Error("no pair judged twice, want the pairs whose pages fall in two folds")
	}
	// Each non-candidate duplicate is counted once per fold that judges
	// it: once or twice.
	for _, sp := range cs.Scored {
		if !sp.Candidate && sp.Label == 1 {
			wantMissed++
		}
	}
	if missed < wantMissed || missed > 2*wantMissed {
		t.Errorf("%d missed judgings of %d non-candidate duplicates, want each counted once or twice", missed, wantMissed)
	}
}

// TestNestedOwnConfidence: the floor is read on the first set's
// out-of-fold judgements only, and F1 on every set's: distinct pairs
// another set holds at the duplicates' scores move the fit and that
// set's F1, not the precision the floor bounds; a set whose F1 asks for
// a higher confidence moves the choice; and duplicates that are not
// candidates count as missed.
func TestNestedOwnConfidence(t *testing.T) {
	type group struct {
		lcs          float64
		label, n     int
		notCandidate bool
	}
	mk := func(name string, gs ...group) *CVSet {
		var pairs []ScoredPair
		for _, g := range gs {
			for range g.n {
				pairs = append(pairs, ScoredPair{Label: g.label, Candidate: !g.notCandidate, Scores: similarity.Scores{LCS: g.lcs, HasLCS: true}})
			}
		}
		return NewCVSet(name, &Set{Mode: PairMode}, &Report{Scored: pairs})
	}
	all := func(sets []*CVSet) [][]int {
		idx := make([][]int, len(sets))
		for si, s := range sets {
			for i := range s.Scored {
				idx[si] = append(idx[si], i)
			}
		}
		return idx
	}
	fs := []similarity.Feature{similarity.FeatureLCS}
	truth := Truths()[0]
	run := func(sets []*CVSet) ([][]CVFigure, float64) {
		splits := innerSplits(sets, all(sets), truth, innerFolds, rand.New(rand.NewPCG(3, 4)))
		return nestedFigures(sets, splits, fs, false, truth, FitPenalty), nestedOwnConfidence(sets, splits, fs, false, truth, FitPenalty)
	}
	dups, distinct := group{lcs: 0.95, label: 3, n: 20}, group{lcs: 0.1, label: 0, n: 20}

	// The web pairs separate cleanly; the other set's three distinct
	// pairs among its duplicates hold its precision at 20 in 23 but not
	// the web's, so the smallest confidence that keeps the distinct web
	// pairs out holds the floor.
	sets := []*CVSet{mk("web", dups, distinct), mk("other", dups, distinct, group{lcs: 0.95, label: 0, n: 3})}
	figs, got := run(sets)
	if got >= 0.9 {
		t.Errorf("nestedOwnConfidence with separable web pairs = %v, want a low confidence", got)
	}
	if p := figs[0][0].PooledPrecision; p != 1 {
		t.Errorf("web pooled precision at %v = %v, want 1", Confidences[0], p)
	}
	if p := figs[1][0].PooledPrecision; math.Abs(p-20.0/23) > 1e-9 {
		t.Errorf("other set's pooled precision at %v = %v, want 20/23", Confidences[0], p)
	}

	// Three distinct web pairs among the duplicates' 20: precision 0.87
	// wherever a duplicate is accepted, so no confidence reaches the
	// floor and the rule falls back to the last.
	sets = []*CVSet{mk("web", dups, distinct, group{lcs: 0.95, label: 0, n: 3}), mk("other", dups, distinct)}
	if _, got := run(sets); got != Confidences[len(Confidences)-1] {
		t.Errorf("nestedOwnConfidence with web precision 0.87 = %v, want the last, %v", got, Confidences[len(Confidences)-1])
	}

	// Five web duplicates that are not candidates: missed at every
	// confidence, recall 20 in 25.
	sets = []*CVSet{mk("web", dups, distinct, group{lcs: 0.95, label: 3, n: 5, notCandidate: true}), mk("other", dups, distinct)}
	if figs, _ := run(sets); math.Abs(figs[0][0].Recall-0.8) > 0.05 {
		t.Errorf("web recall with 5 of 25 duplicates not candidates = %v, want about 0.8", figs[0][0].Recall)
	}

	// The other set's distinct pairs at a high ratio (0.85) ask for a
	// higher confidence than the web pairs, which separate anywhere
	// between: the choice is the other set's.
	sets = []*CVSet{mk("web", dups, distinct), mk("other", dups, group{lcs: 0.85, label: 0, n: 20})}
	figs, got = run(sets)
	webOnly := Confidences[OwnConfidence(figs[:1])]
	t.Logf("web alone %v, both %v", webOnly, got)
	if got <= webOnly {
		t.Errorf("nestedOwnConfidence = %v, want above %v, the web pairs' own choice, where the other set's F1 is lower", got, webOnly)
	}
}

// TestInnerFoldsAreNotOuterFolds: the inner folds of an outer fold's
// training part are dealt afresh, so every inner fold judges some of its
// pairs; dealt by the outer stream again, one inner fold would hold only
// the outer test part's groups and judge nothing.
func TestInnerFoldsAreNotOuterFolds(t *testing.T) {
	const k, seed = 5, 7
	web := synthSet("web", 200, 3)
	for r := range 3 {
		folds := web.folds(k, outerRand(seed, r))
		for f := range k {
			trainIdx, _ := splitFold([]*CVSet{web}, [][]int{folds}, f)
			for g, sp := range innerSplits([]*CVSet{web}, trainIdx, Truths()[0], innerFolds, innerRand(seed, r, k, f)) {
				if len(sp.judge[0]) == 0 {
					t.Errorf("repeat %d, fold %d: inner fold %d judges none of the %d training pairs", r, f, g, len(trainIdx[0]))
				}
			}
		}
	}
}

// TestSplitFold checks the outer split: a pair is tested when either of
// its groups is in the fold, trained on when neither is, and every pair
// is one or the other.
func TestSplitFold(t *testing.T) {
	s := &CVSet{Name: "web", Mode: PairMode, groups: 3}
	for i, g := range [][2]int{{0, 0}, {0, 1}, {1, 2}, {2, 2}} {
		s.Scored = append(s.Scored, ScoredPair{A: 2 * i, B: 2*i + 1, Label: i})
		s.groupA, s.groupB = append(s.groupA, g[0]), append(s.groupB, g[1])
	}
	folds := [][]int{{0, 1, 1}} // group 0 in fold 0, groups 1 and 2 in fold 1
	trainIdx, tests := splitFold([]*CVSet{s}, folds, 0)
	if !slices.Equal(tests[0], []int{0, 1}) || !slices.Equal(trainIdx[0], []int{2, 3}) {
		t.Errorf("fold 0: tested %v, trained on %v; want [0 1] and [2 3]", tests[0], trainIdx[0])
	}
	trainIdx, tests = splitFold([]*CVSet{s}, folds, 1)
	if !slices.Equal(tests[0], []int{1, 2, 3}) || !slices.Equal(trainIdx[0], []int{0}) {
		t.Errorf("fold 1: tested %v, trained on %v; want [1 2 3] and [0]", tests[0], trainIdx[0])
	}
}
