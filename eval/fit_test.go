package eval

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// TestFitLogistic fits data drawn from a known logistic model and checks
// the coefficients come back within 4 standard errors or so (20,000
// draws; the tolerance is stated, the seed fixed).
func TestFitLogistic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	want := []float64{-3, 6, -2} // intercept, x1, x2
	var ex []fitExample
	for range 20000 {
		x := []float64{r.Float64(), r.Float64()}
		z := want[0] + want[1]*x[0] + want[2]*x[1]
		ex = append(ex, fitExample{x: x, y: r.Float64() < 1/(1+math.Exp(-z)), w: 1})
	}
	got := fitLogistic(ex, 2, 0)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 0.3 {
			t.Errorf("coefficient %d = %.3f, want %.1f ± 0.3", i, got[i], want[i])
		}
	}
	// The penalty shrinks the weights, not the intercept's role.
	pen := fitLogistic(ex, 2, 2000)
	if math.Abs(pen[1]) >= math.Abs(got[1]) || math.Abs(pen[2]) >= math.Abs(got[2]) {
		t.Errorf("penalized weights %v not smaller than %v", pen, got)
	}
}

func TestFoldsStratified(t *testing.T) {
	var scored []ScoredPair
	for i := range 103 {
		scored = append(scored, ScoredPair{Label: i % 4})
	}
	cs := &CVSet{Name: "t", Mode: PairMode, Scored: scored, groups: len(scored)}
	cs.groupA = make([]int, len(scored))
	cs.groupB = make([]int, len(scored))
	for i := range scored {
		cs.groupA[i], cs.groupB[i] = i, i
	}
	f := cs.folds(5, rand.New(rand.NewPCG(3, 4)))
	count := map[[2]int]int{}
	for i, sp := range scored {
		count[[2]int{sp.Label, f[i]}]++
	}
	for l := range 4 {
		lo, hi := 1<<30, 0
		for k := range 5 {
			lo, hi = min(lo, count[[2]int{l, k}]), max(hi, count[[2]int{l, k}])
		}
		if hi-lo > 1 {
			t.Errorf("label %d spread over folds %d..%d, want within 1", l, lo, hi)
		}
	}
}

// devSets loads and scores the three dev sets, or skips when one is
// absent. llvm-docs is built by ../shared/eval/llvm-docs/build.py into
// $WINNOW_LLVM_DOCS or /tmp/llvm-docs.
func devSets(t *testing.T) []*CVSet {
	t.Helper()
	if testing.Short() {
		t.Skip("signs and scores the three dev sets (about a minute)")
	}
	llvm := os.Getenv("WINNOW_LLVM_DOCS")
	if llvm == "" {
		llvm = "/tmp/llvm-docs"
	}
	dirs := []string{"../../shared/eval/webis-ecir20-dev", "../../shared/eval/copycat-dev", llvm}
	var sets []*CVSet
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err != nil {
			t.Skipf("dev set %s absent: %v", dir, err)
		}
		set, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		// The signer of winnow's default configuration (canon.content main).
		sg := page.Signer{Canon: canon.Options{Content: canon.ContentMain}, Signature: similarity.Options{}.WithDefaults()}
		rep, err := Run(context.Background(), set, Options{Signer: sg})
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, NewCVSet(filepath.Base(dir), set, rep))
	}
	return sets
}

// TestFittedModels refits the default decisions' models on the dev sets
// and checks similarity carries the same coefficients.
func TestFittedModels(t *testing.T) {
	sets := devSets(t)
	for _, truth := range Truths() {
		got := FitDefault(sets, truth, FitPenalty)
		want := similarity.DefaultModel(truth.Purpose)
		check := func(name string, g, w similarity.Model) {
			if len(g.Features) != len(w.Features) {
				t.Fatalf("%s %s: features %v, similarity has %v", truth.Name, name, g.Features, w.Features)
			}
			if math.Abs(g.Intercept-w.Intercept) > 1e-3 {
				t.Errorf("%s %s: intercept refitted %.4f, similarity has %.4f", truth.Name, name, g.Intercept, w.Intercept)
			}
			for i := range g.Weights {
				if g.Features[i] != w.Features[i] || math.Abs(g.Weights[i]-w.Weights[i]) > 1e-3 {
					t.Errorf("%s %s: %v %.4f refitted, similarity has %v %.4f", truth.Name, name, g.Features[i], g.Weights[i], w.Features[i], w.Weights[i])
				}
			}
		}
		check("seq", got.Seq, want.Seq)
		check("noseq", got.NoSeq, want.NoSeq)
		if math.Abs(got.NonCandidate-want.NonCandidate) > 1e-3 {
			t.Errorf("%s: non-candidate rate %.4f, similarity has %.4f", truth.Name, got.NonCandidate, want.NonCandidate)
		}
	}
}

// TestOwnConfidence checks the rule that set the shipped confidences:
// among the confidences that accept a pair on the first set at a pooled
// precision that reaches the floor, the one of best F1 averaged over the
// sets; the strictest when none reaches the floor.
func TestOwnConfidence(t *testing.T) {
	figs := func(ps ...float64) []CVFigure {
		out := make([]CVFigure, len(ps))
		for i, p := range ps {
			out[i] = CVFigure{Precision: p, PooledPrecision: p, Recall: 0.5, F1: 0.5}
		}
		return out
	}
	withF1 := func(fs []CVFigure, f1 ...float64) []CVFigure {
		for i := range fs {
			fs[i].F1 = f1[i]
		}
		return fs
	}
	foldMeanAbove := figs(0.9, 0.94, 0.97)
	foldMeanAbove[1].Precision = 0.96 // folds that accept nothing count 1 in the mean
	acceptsNothing := figs(0.9, 1, 0.97)
	acceptsNothing[1].Recall = 0 // precision 1 by convention
	for _, c := range []struct {
		name  string
		bySet [][]CVFigure
		want  int
	}{
		{"equal F1: the first to reach the floor", [][]CVFigure{figs(0.8, 0.94, 0.95, 0.97, 0.99)}, 2},
		{"the best F1 above the floor", [][]CVFigure{withF1(figs(0.8, 0.95, 0.96, 0.97), 0.9, 0.7, 0.8, 0.75)}, 2},
		{"not the best F1 under the floor", [][]CVFigure{withF1(figs(0.94, 0.96, 0.99), 0.9, 0.7, 0.6)}, 1},
		{"F1 averaged over the sets", [][]CVFigure{
			withF1(figs(0.96, 0.97, 0.99), 0.80, 0.78, 0.70),
			withF1(figs(0.5, 0.5, 0.5), 0.60, 0.66, 0.90),
		}, 2},
		{"the other sets' precision does not bound it", [][]CVFigure{figs(0.96, 0.99), figs(0.2, 0.3)}, 0},
		{"precision may fall again", [][]CVFigure{withF1(figs(0.9, 0.96, 0.93, 1), 0.9, 0.8, 0.9, 0.6)}, 1},
		{"none reaches it", [][]CVFigure{figs(0.5, 0.7, 0.9)}, 2},
		{"the pooled precision, not the fold mean", [][]CVFigure{foldMeanAbove}, 2},
		{"a confidence that accepts nothing is not at the floor", [][]CVFigure{acceptsNothing}, 2},
	} {
		if got := OwnConfidence(c.bySet); got != c.want {
			t.Errorf("%s: OwnConfidence = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestCrossValidate runs the whole selection on the small test sets: every
// candidate is scored on every set and truth, on the same folds.
func TestCrossValidate(t *testing.T) {
	sets := smallSets(t)
	rep := CrossValidate(sets, CVOptions{Folds: 2, Repeats: 2, Seed: 1})
	if len(rep.Tables) != 4 || len(rep.Fitted) != 2 {
		t.Fatalf("CrossValidate: %d tables, %d fitted models; want 2 sets × 2 truths and one model per truth", len(rep.Tables), len(rep.Fitted))
	}
	want := len(Methods()) + 1 + len(ModelCandidates())
	for _, tab := range rep.Tables {
		if len(tab.Figures) != want || len(tab.Confidence) != len(Confidences) {
			t.Errorf("%s, %s: %d figures, %d confidence rows; want %d, %d", tab.Set, tab.Truth, len(tab.Figures), len(tab.Confidence), want, len(Confidences))
		}
		for _, f := range tab.Figures {
			if math.IsNaN(f.F1) || f.F1 < 0 || f.F1 > 1 || f.Candidate == "lcs" && (f.DeltaF1 != 0 || f.SDDelta != 0) {
				t.Errorf("%s, %s, %s: %+v", tab.Set, tab.Truth, f.Candidate, f)
			}
		}
		// At the shipped confidence the shipped model is the reference
		// (ΔF1 0) and scores what its confidence row says.
		if len(tab.AtShipped) != len(ModelCandidates()) {
			t.Fatalf("%s, %s: %d rows at the shipped confidence, want one per model", tab.Set, tab.Truth, len(tab.AtShipped))
		}
		ci := slices.Index(Confidences, tab.ShippedConfidence)
		matched := 0
		for _, f := range tab.AtShipped {
			if f.DeltaF1 == 0 && f.SDDelta == 0 && ci >= 0 && f.F1 == tab.Confidence[ci].F1 && f.Precision == tab.Confidence[ci].Precision {
				matched++
			}
		}
		if ci < 0 || matched == 0 {
			t.Errorf("%s, %s: no model at the shipped confidence %.2f is the reference with its confidence row's figures", tab.Set, tab.Truth, tab.ShippedConfidence)
		}
		// At its own operating point every model sits at the confidence
		// the rule picks from its figures on the sets; the shipped
		// model's row is its confidence table's row there.
		if len(tab.AtOwn) != len(ModelCandidates()) || len(tab.OwnConfidences) != len(tab.AtOwn) {
			t.Fatalf("%s, %s: %d rows at their own confidence (%d confidences), want one per model", tab.Set, tab.Truth, len(tab.AtOwn), len(tab.OwnConfidences))
		}
		for i, f := range tab.AtOwn {
			if !slices.Contains(Confidences, tab.OwnConfidences[i]) || math.IsNaN(f.F1) || f.F1 < 0 || f.F1 > 1 {
				t.Errorf("%s, %s, %s: at its own confidence %v: %+v", tab.Set, tab.Truth, f.Candidate, tab.OwnConfidences[i], f)
			}
		}
		own := 0
		for i, f := range tab.AtOwn {
			ki := slices.Index(Confidences, tab.OwnConfidences[i])
			if f.DeltaF1 == 0 && f.SDDelta == 0 && ki >= 0 && f.F1 == tab.Confidence[ki].F1 && f.Precision == tab.Confidence[ki].Precision && f.Recall == tab.Confidence[ki].Recall {
				own++
			}
		}
		if own == 0 {
			t.Errorf("%s, %s: no model at its own confidence is the reference with its confidence row's figures", tab.Set, tab.Truth)
		}
	}
	// The held-out protocol's rows: one per model, paired with the paper
	// LCS ratio on the same folds.
	for _, tab := range rep.Tables {
		if len(tab.InFold) != len(ModelCandidates()) {
			t.Fatalf("%s, %s: %d in-fold rows, want one per model", tab.Set, tab.Truth, len(tab.InFold))
		}
		for _, f := range tab.InFold {
			if len(f.FoldF1) != rep.Folds*rep.Repeats || math.IsNaN(f.F1) || f.F1 < 0 || f.F1 > 1 || math.IsNaN(f.SDDelta) {
				t.Errorf("%s, %s, %s in-fold: %+v", tab.Set, tab.Truth, f.Candidate, f)
			}
		}
	}
	// Every table of one truth puts each model at the same confidence:
	// one confidence for every set, as a decision ships. Tables run
	// truth by truth, set by set.
	for i, tab := range rep.Tables {
		first := rep.Tables[i-i%len(sets)]
		if !slices.Equal(first.OwnConfidences, tab.OwnConfidences) {
			t.Errorf("%s and %s, %s: own confidences %v and %v differ", first.Set, tab.Set, tab.Truth, first.OwnConfidences, tab.OwnConfidences)
		}
	}
	// The spread of the shipped features' coefficients over the 4
	// training parts: one mean and sd per coefficient. (How near the
	// means lie to the fit on everything is checked on data where every
	// coefficient is determined, TestCrossValidateOwnConfidence: in these
	// few pairs the LCS gap and the Jaccard nearly move together.)
	checkCoefSpread(t, rep, false)
	// The selection rule chose one model per truth, among the candidates,
	// at one of the confidences.
	if len(rep.Selected) != len(Truths()) {
		t.Errorf("%d selections, want one per truth (%d)", len(rep.Selected), len(Truths()))
	}
	for _, sel := range rep.Selected {
		if !slices.ContainsFunc(ModelCandidates(), func(c Candidate) bool { return c.Name == sel.Candidate }) || !slices.Contains(Confidences, sel.MinConfidence) {
			t.Errorf("selection %+v: not a candidate at one of the confidences", sel)
		}
	}
	// `winnow eval -cv -json` writes the report: NaN figures (a paper
	// method's ECE) become null.
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatalf("the report does not marshal to JSON: %v", err)
	}
	var back struct {
		Tables []struct {
			Figures []map[string]any `json:"figures"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Tables) != len(rep.Tables) {
		t.Fatalf("the report's JSON does not read back: %v", err)
	}
	if f := back.Tables[0].Figures[0]; f["ece"] != nil || f["candidate"] != rep.Tables[0].Figures[0].Candidate {
		t.Errorf("a paper method's figures in JSON: %v, want its name and a null ece", f)
	}
	again := CrossValidate(sets, CVOptions{Folds: 2, Repeats: 2, Seed: 1})
	if a, b := again.Tables[0].Figures[len(Methods())+1], rep.Tables[0].Figures[len(Methods())+1]; a.F1 != b.F1 || !slices.Equal(a.FoldF1, b.FoldF1) {
		t.Error("CrossValidate with the same seed gave other figures")
	}
}

func TestCoefSpread(t *testing.T) {
	fits := []similarity.Model{
		{Weights: []float64{8, -2}, Intercept: -5},
		{Weights: []float64{10, -2}, Intercept: -3},
	}
	got := coefSpread(fits)
	wantMean, wantSD := []float64{-4, 9, -2}, []float64{math.Sqrt2, math.Sqrt2, 0}
	for i := range wantMean {
		if math.Abs(got.Mean[i]-wantMean[i]) > 1e-12 || math.Abs(got.SD[i]-wantSD[i]) > 1e-12 {
			t.Errorf("coefficient %d: %.4f ± %.4f, want %.4f ± %.4f", i, got.Mean[i], got.SD[i], wantMean[i], wantSD[i])
		}
	}
	if s := coefSpread(nil); s.Mean != nil || s.SD != nil {
		t.Errorf("coefSpread(nil) = %+v, want empty", s)
	}
}

// synthSet is a pair-mode set of n candidate pairs whose LCS ratio sets
// the odds of their label (0, 1 or 3) with noise, so that a fitted
// model's precision rises with its confidence over the whole range.
func synthSet(name string, n int, seed uint64) *CVSet {
	rng := rand.New(rand.NewPCG(seed, 1))
	cs := &CVSet{Name: name, Mode: PairMode, groups: n}
	for i := range n {
		lcs := rng.Float64()
		div := rng.Float64() * (1 - lcs)
		label := 0
		if u := rng.Float64(); u < 1/(1+math.Exp(-30*(lcs-0.6))) {
			label = 1
			if rng.Float64() < lcs*lcs {
				label = 3
			}
		}
		jac := min(1, max(0, lcs-0.15+0.3*rng.Float64())) // a score of its own, not a function of the LCS
		s := similarity.Scores{LCS: lcs, Divergence: div, PageDivergence: div, Central: lcs, Jaccard: jac, LengthRatio: 1, ContainAB: lcs, ContainBA: lcs, Bag: lcs}
		cs.Scored = append(cs.Scored, ScoredPair{A: 2 * i, B: 2*i + 1, Label: label, Scores: s, Candidate: true})
		cs.groupA, cs.groupB = append(cs.groupA, i), append(cs.groupB, i)
	}
	return cs
}

// TestCrossValidateOwnConfidence checks each model's own operating point
// where the rule has a choice to make: the shipped model's is the one
// OwnConfidence picks from its figures on the sets, strictly inside
// the range, and its row there is its confidence table's.
func TestCrossValidateOwnConfidence(t *testing.T) {
	sets := []*CVSet{synthSet("first", 400, 1), synthSet("second", 300, 2)}
	rep := CrossValidate(sets, CVOptions{Folds: 3, Repeats: 2, Seed: 1})
	for ti, tab := range rep.Tables {
		first := rep.Tables[ti-ti%len(sets)]
		shipped := slices.IndexFunc(ModelCandidates(), func(c Candidate) bool {
			return slices.Equal(c.Features, similarity.DefaultModel(purposeOf(t, tab.Truth)).Seq.Features)
		})
		var bySet [][]CVFigure
		for _, other := range rep.Tables[ti-ti%len(sets) : ti-ti%len(sets)+len(sets)] {
			bySet = append(bySet, other.Confidence)
		}
		ki := OwnConfidence(bySet)
		if ki == 0 || ki == len(Confidences)-1 {
			var ps []float64
			for _, f := range first.Confidence {
				ps = append(ps, f.PooledPrecision)
			}
			t.Fatalf("%s, %s: the rule picks confidence %v from precisions %.3f; the test needs a set where it has a choice", tab.Set, tab.Truth, Confidences[ki], ps)
		}
		if got := tab.OwnConfidences[shipped]; got != Confidences[ki] {
			t.Errorf("%s, %s: the shipped model's own confidence %v, want %v (the rule on %s)", tab.Set, tab.Truth, got, Confidences[ki], first.Set)
		}
		if f, c := tab.AtOwn[shipped], tab.Confidence[ki]; f.F1 != c.F1 || f.Precision != c.Precision || f.Recall != c.Recall || f.DeltaF1 != 0 {
			t.Errorf("%s, %s: the shipped model at its own confidence %+v, want its confidence row %+v and ΔF1 0", tab.Set, tab.Truth, f, c)
		}
		// Folds better and worse, counted from the per-fold F1 against
		// the shipped model's.
		ref := tab.AtOwn[shipped].FoldF1
		for _, f := range tab.AtOwn {
			better, worse := 0, 0
			for i, v := range f.FoldF1 {
				if v > ref[i]+1e-12 {
					better++
				} else if v < ref[i]-1e-12 {
					worse++
				}
			}
			if f.Better != better || f.Worse != worse {
				t.Errorf("%s, %s, %s: folds better/worse %d/%d, the folds say %d/%d", tab.Set, tab.Truth, f.Candidate, f.Better, f.Worse, better, worse)
			}
			if better+worse == 0 && f.Candidate != tab.AtOwn[shipped].Candidate && f.DeltaF1 != 0 {
				t.Errorf("%s, %s, %s: ΔF1 %v with no fold better or worse", tab.Set, tab.Truth, f.Candidate, f.DeltaF1)
			}
		}
	}
	checkCoefSpread(t, rep, true)
}

// checkCoefSpread checks the spread of the shipped features' coefficients
// over the training parts: one mean and sd per coefficient and, when near
// is set, the means near the fit on everything (the training parts hold
// most of it).
func checkCoefSpread(t *testing.T, rep *CVReport, near bool) {
	t.Helper()
	for _, fm := range rep.Fitted {
		sp := fm.SeqFolds
		if len(sp.Mean) != 1+len(fm.Seq.Weights) || len(sp.SD) != len(sp.Mean) {
			t.Fatalf("%s: coefficient spread %+v, want %d coefficients", fm.Truth, sp, 1+len(fm.Seq.Weights))
		}
		all := append([]float64{fm.Seq.Intercept}, fm.Seq.Weights...)
		for i, m := range sp.Mean {
			if !(sp.SD[i] >= 0) || math.IsNaN(m) || near && math.Abs(m-all[i]) > 4*sp.SD[i]+1 {
				t.Errorf("%s coefficient %d: %.3f ± %.3f over the training parts, %.3f on everything", fm.Truth, i, m, sp.SD[i], all[i])
			}
		}
	}
}

// purposeOf returns the purpose of the truth a table is scored under.
func purposeOf(t *testing.T, truth string) similarity.Purpose {
	for _, tr := range Truths() {
		if strings.HasPrefix(truth, tr.Name) {
			return tr.Purpose
		}
	}
	t.Fatalf("no truth named %q", truth)
	return 0
}

// TestCrossValidateHeldOut checks the held-out protocol's wiring inside
// CrossValidate, fold by fold: the shipped model's held-out F1 on each
// test fold is the one of the model fitted on that fold's training part
// at the confidence the rule sets on an inner cross-validation of that
// training part alone (innerFolds folds from innerRand), not the in-fold
// F1-best confidence, not inner folds over the test part too.
func TestCrossValidateHeldOut(t *testing.T) {
	const k, repeats, seed = 3, 2, 1
	sets := []*CVSet{synthSet("first", 400, 1), synthSet("second", 300, 2)}
	rep := CrossValidate(sets, CVOptions{Folds: k, Repeats: repeats, Seed: seed})
	for ti, truth := range Truths() {
		shipped := shippedIndex(ModelCandidates(), truth.Purpose)
		fs := ModelCandidates()[shipped].Features
		differs := 0 // folds where the held-out confidence is not the in-fold one
		for r := range repeats {
			rng := outerRand(seed, r)
			folds := dealFolds(sets, k, rng)
			for f := range k {
				trainIdx, tests := splitFold(sets, folds, f)
				m := shippedRules(fitPooled(sets, trainIdx, fs, truth, FitPenalty), truth, false)
				inner := innerSplits(sets, trainIdx, truth, innerFolds, innerRand(seed, r, k, f))
				held := nestedOwnConfidence(sets, inner, fs, false, truth, FitPenalty)
				if held != chooseConfidence(sets, trainIdx, m, truth) {
					differs++
				}
				for si, s := range sets {
					isDup := s.isDup(truth)
					pred, gold := make([]bool, len(tests[si])), make([]bool, len(tests[si]))
					for j, i := range tests[si] {
						sp := &s.Scored[i]
						gold[j] = isDup(sp)
						pred[j] = sp.Candidate && m.Probability(&sp.Scores) >= held
					}
					want := Verdicts(pred, gold).F1
					tab := rep.Tables[ti*len(sets)+si]
					if got := tab.InFold[shipped].FoldF1[r*k+f]; got != want {
						t.Errorf("%s, %s, repeat %d fold %d: held-out F1 %.4f, want %.4f (the model of the training part at the inner cross-validation's confidence %.2f)", tab.Set, tab.Truth, r, f, got, want, held)
					}
				}
			}
		}
		// Without folds where the two confidences differ, the test could
		// not tell the held-out confidence from the in-fold one.
		if differs == 0 {
			t.Errorf("%s: the inner cross-validation's confidence is the in-fold one in every fold; the test needs data where they differ", truth.Name)
		}
	}
}

// TestCrossValidateRefitsNumbersOnly: `winnow eval -cv` judges each
// refitted model as the decision it would ship as, with the shipped
// remove decision's numbers-only rule. Pairs that agree word for word
// and differ in a number of note, none content-equivalent, are refused
// by every refit: the remove truth's figures gain precision over the
// same pairs without their numbers, and the group truth's do not move.
func TestCrossValidateRefitsNumbersOnly(t *testing.T) {
	if similarity.DefaultModel(similarity.PurposeRemove).Seq.NumbersOnly == 0 {
		t.Skip("the shipped remove model has no numbers-only rule")
	}
	plain, marked := synthSet("plain", 400, 3), synthSet("marked", 400, 3)
	n := 0
	for i := range marked.Scored {
		sp := &marked.Scored[i]
		if sp.Scores.LCS < 0.7 || sp.Label == 3 {
			continue
		}
		for _, s := range []*similarity.Scores{&sp.Scores, &plain.Scored[i].Scores} {
			s.LCS, s.HasLCS, s.HasNumbers = 1, true, true
		}
		sp.Scores.NumbersDiffer, sp.Scores.NumbersOfNote = 1, 1
		n++
	}
	if n < 5 {
		t.Fatalf("only %d pairs marked", n)
	}
	o := CVOptions{Folds: 3, Repeats: 2, Seed: 1}
	before, after := CrossValidate([]*CVSet{plain}, o), CrossValidate([]*CVSet{marked}, o)
	for ti, tab := range after.Tables {
		// The same coefficients (the numbers are no feature of the
		// shipped models), judged with and without the rule, confidence
		// by confidence.
		gained := false
		for ki, a := range tab.Confidence {
			b := before.Tables[ti].Confidence[ki]
			switch {
			case purposeOf(t, tab.Truth) != similarity.PurposeRemove:
				if a.PooledPrecision != b.PooledPrecision || a.F1 != b.F1 {
					t.Errorf("%s, %s: the group figures moved with the numbers: P %.3f → %.3f, F1 %.3f → %.3f", tab.Truth, a.Candidate, b.PooledPrecision, a.PooledPrecision, b.F1, a.F1)
				}
			case a.PooledPrecision < b.PooledPrecision:
				t.Errorf("%s, %s: pooled precision %.3f with the numbers, %.3f without", tab.Truth, a.Candidate, a.PooledPrecision, b.PooledPrecision)
			case a.PooledPrecision > b.PooledPrecision:
				gained = true
			}
		}
		if purposeOf(t, tab.Truth) == similarity.PurposeRemove && !gained {
			t.Errorf("%s: no confidence gains precision from refusing %d numbers-only pairs: the refit does not carry the rule", tab.Truth, n)
		}
	}
}
