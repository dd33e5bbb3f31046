package eval

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/winnow-search/winnow/similarity"
)

// NumbersOnlyRatios are the LCS ratios at which [NumbersOnlyCV] tries
// the numbers-only rule ([similarity.Model.NumbersOnly]), widest first.
var NumbersOnlyRatios = []float64{0.97, 0.98, 0.99, 0.995, 1}

// NumbersOnlyOptions sets a [NumbersOnlyCV].
type NumbersOnlyOptions struct {
	// Folds and Repeats: repeated stratified k-fold; zero means 5 and 10.
	Folds, Repeats int
	// Seed seeds the fold shuffles, as [CalibrateOptions.Seed].
	Seed uint64
	// Start is the remove decision without the rule; nil means
	// similarity.DefaultModel(PurposeRemove) with its NumbersOnly off.
	Start *similarity.PurposeModel
}

// NumbersOnlyRow is one rule's figures on one set: the cross-validated
// figures, and its F1 and precision against the start decision's on the
// same folds (mean and spread of the fold-by-fold difference).
type NumbersOnlyRow struct {
	Rule   string   `json:"rule"`
	Figure CVFigure `json:"figure"`
	// VsStart pairs the F1 with the start decision's; DeltaP and SDDeltaP
	// do the same for the precision.
	VsStart  Paired  `json:"vs_start"`
	DeltaP   float64 `json:"delta_precision"`
	SDDeltaP float64 `json:"sd_delta_precision"`
}

// Holds reports the selection rule: the row's precision ties or wins
// within the fold-to-fold spread, and its F1 loses no more than the
// spread.
func (r *NumbersOnlyRow) Holds() bool {
	return r.DeltaP >= -r.SDDeltaP && r.VsStart.DeltaF1 >= -r.VsStart.SD
}

// NumbersOnlyTable is every rule's row on one set.
type NumbersOnlyTable struct {
	Set  string           `json:"set"`
	Rows []NumbersOnlyRow `json:"rows"`
}

// NumbersOnlyReport is the outcome of [NumbersOnlyCV].
type NumbersOnlyReport struct {
	Folds, Repeats int
	MinConfidence  float64
	Tables         []NumbersOnlyTable `json:"tables"`
	// Nested counts how often each ratio was chosen on a training part
	// ("off" when none held there).
	Nested map[string]int `json:"nested_choices"`
}

// NumbersOnlyCV reads, under repeated stratified k-fold cross-validation
// on the folds of [Calibrate], the remove decision at its own
// min_confidence with and without the numbers-only rule: at each ratio
// of [NumbersOnlyRatios]; at the ratio chosen on each training part by
// an inner cross-validation there (the widest ratio whose precision and
// F1 over the inner folds lose no more than their fold-to-fold spread
// against the decision without it on every set; off when none); the
// blanket numbers veto at the same confidence; the refusal of pairs
// whose word sequence was cut ([similarity.Verdict.SeqCut]), alone and
// with the numbers-only rule at ratio 1; and the LCS ratio at its
// training parts' F1-best threshold. "without" is the decision with
// neither rule (a page cut at the signing caps refused, as always).
// Duplicates are label 3 (corpus mode: the set's own).
func NumbersOnlyCV(sets []*CVSet, o NumbersOnlyOptions) *NumbersOnlyReport {
	k, repeats := cmp.Or(o.Folds, 5), cmp.Or(o.Repeats, 10)
	start := o.Start
	if start == nil {
		start = similarity.DefaultModel(similarity.PurposeRemove)
	}
	base := start.Seq
	base.NumbersOnly, base.NumbersVeto = 0, false
	conf := start.MinConfidence
	truth := Truths()[1]
	lcs := Methods()[slices.IndexFunc(Methods(), func(m Method) bool { return m.Name == "lcs" })]
	rules := []similarity.Model{base}
	names := []string{"without"}
	for _, r := range NumbersOnlyRatios {
		m := base
		m.NumbersOnly = r
		rules = append(rules, m)
		names = append(names, fmt.Sprintf("numbers-only, LCS >= %g", r))
	}
	veto := base
	veto.NumbersVeto = true
	rules = append(rules, veto)
	names = append(names, "numbers veto")
	// The rows that also refuse a pair whose word sequence was cut.
	cutFrom := len(rules)
	withRatio := base
	withRatio.NumbersOnly = 1
	rules = append(rules, base, withRatio)
	names = append(names, "cut sequences refused", "numbers-only, LCS >= 1, and cut sequences refused")
	nested, ratio := len(rules), len(rules)+1
	names = append(names, "numbers-only, nested", "LCS ratio (own threshold)")
	rep := &NumbersOnlyReport{Folds: k, Repeats: repeats, MinConfidence: conf, Nested: map[string]int{}}
	folds := make([][][]foldScore, len(sets)) // [set][row][fold]
	for si := range sets {
		folds[si] = make([][]foldScore, len(names))
	}
	accepts := func(m *similarity.Model, sp *ScoredPair) bool {
		return sp.Candidate && !sp.Capped && m.Probability(&sp.Scores) >= conf
	}
	eachFold(sets, k, repeats, o.Seed, truth, func(trainIdx, tests [][]int, inner []innerSplit) {
		chosen := chooseNumbersOnly(sets, inner, rules[:len(NumbersOnlyRatios)+1], accepts, truth)
		rep.Nested[ratioName(chosen.NumbersOnly)]++
		for si, s := range sets {
			isDup := s.isDup(truth)
			js := make([]Judged, len(trainIdx[si]))
			for j, i := range trainIdx[si] {
				js[j] = Judged{Score: lcs.Score(&s.Scored[i].Scores), Dup: isDup(&s.Scored[i])}
			}
			t := Best(Curve(js, false)).Threshold
			n := len(tests[si])
			gold := make([]bool, n)
			pred := make([][]bool, len(names))
			for ri := range pred {
				pred[ri] = make([]bool, n)
			}
			for j, i := range tests[si] {
				sp := &s.Scored[i]
				gold[j] = isDup(sp)
				for ri := range rules {
					pred[ri][j] = accepts(&rules[ri], sp) && (ri < cutFrom || !sp.SeqCut)
				}
				pred[nested][j] = accepts(&chosen, sp)
				v := lcs.Score(&sp.Scores)
				pred[ratio][j] = !math.IsNaN(v) && v >= t
			}
			for ri := range names {
				pt := Verdicts(pred[ri], gold)
				folds[si][ri] = append(folds[si][ri], foldScore{pt.Precision, pt.Recall, pt.F1, pt.TP, pt.FP})
			}
		}
	})
	for si, s := range sets {
		tab := NumbersOnlyTable{Set: s.Name}
		for ri, name := range names {
			row := NumbersOnlyRow{Rule: name, Figure: summarize(name, 0, folds[si][ri]), VsStart: *paired(folds[si][ri], folds[si][0])}
			row.DeltaP, row.SDDeltaP = pairedPrecision(folds[si][ri], folds[si][0])
			tab.Rows = append(tab.Rows, row)
		}
		rep.Tables = append(rep.Tables, tab)
	}
	return rep
}

func ratioName(r float64) string {
	if r == 0 {
		return "off"
	}
	return fmt.Sprint(r)
}

// chooseNumbersOnly returns, of rules (rules[0] the decision without the
// rule, then the numbers-only rule at each ratio, widest first), the
// first whose precision and F1 over the inner folds of a training part
// lose no more than their fold-to-fold spread against rules[0] on every
// set ([NumbersOnlyRow.Holds]); rules[0] when none does.
func chooseNumbersOnly(sets []*CVSet, splits []innerSplit, rules []similarity.Model, accepts func(*similarity.Model, *ScoredPair) bool, t Truth) similarity.Model {
	scores := make([][][]foldScore, len(sets)) // [set][rule][inner fold]
	for si := range sets {
		scores[si] = make([][]foldScore, len(rules))
	}
	for _, sp := range splits {
		for si, s := range sets {
			isDup := s.isDup(t)
			for ri := range rules {
				pred := make([]bool, len(sp.judge[si]))
				gold := make([]bool, len(sp.judge[si]))
				for j, i := range sp.judge[si] {
					p := &s.Scored[i]
					gold[j] = isDup(p)
					pred[j] = accepts(&rules[ri], p)
				}
				pt := Verdicts(pred, gold)
				// The judged pairs are the candidates; the duplicates that
				// are not lower the recall whatever the rule.
				pt = pointOf(0, pt.TP, pt.FP, pt.FN+sp.missed[si])
				scores[si][ri] = append(scores[si][ri], foldScore{pt.Precision, pt.Recall, pt.F1, pt.TP, pt.FP})
			}
		}
	}
	for ri := 1; ri < len(rules); ri++ {
		holds := true
		for si := range sets {
			row := NumbersOnlyRow{VsStart: *paired(scores[si][ri], scores[si][0])}
			row.DeltaP, row.SDDeltaP = pairedPrecision(scores[si][ri], scores[si][0])
			holds = holds && row.Holds()
		}
		if holds {
			return rules[ri]
		}
	}
	return rules[0]
}

// pairedPrecision returns the mean and sample standard deviation of a's
// precision minus b's, fold by fold.
func pairedPrecision(a, b []foldScore) (mean, sd float64) {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i].p - b[i].p
	}
	return meanSD(d)
}
