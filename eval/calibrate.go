package eval

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/winnow-search/winnow/similarity"
)

// CalibratePenalty is the L2 penalty that holds a calibration's refitted
// weights to the shipped ones ([CalibrateOptions.Penalty]): ten times
// [FitPenalty], and on the distance from the shipped coefficients, not
// from zero, so a few dozen pairs move a model little.
const CalibratePenalty = 1.0

// CalibrateOptions sets a calibration ([Calibrate]).
type CalibrateOptions struct {
	// Purpose is the decision calibrated.
	Purpose similarity.Purpose
	// MinPrecision is the precision the calibrated decision must hold
	// under cross-validation, pooled over the test folds (`winnow
	// calibrate` gives the remove decision [PrecisionFloor], 0.95, by
	// default); zero means none: the best F1.
	MinPrecision float64
	// Folds and Repeats: repeated stratified k-fold; zero means 5 and 10.
	Folds, Repeats int
	// Seed seeds the fold shuffles.
	Seed uint64
	// Penalty is the refit's L2 penalty toward Start's weights; zero
	// means [CalibratePenalty].
	Penalty float64
	// Start is the decision's model before calibration; nil means
	// similarity.DefaultModel(Purpose).
	Start *similarity.PurposeModel
}

// Calibration is the outcome of [Calibrate]: the cross-validated figures
// of the shipped decision, of each way to fit it to the pairs, and of the
// LCS ratio at its own threshold, all on the same folds, and the chosen
// decision.
type Calibration struct {
	Purpose string  `json:"purpose"`
	Target  float64 `json:"target_precision"`
	Folds   int     `json:"folds"`
	Repeats int     `json:"repeats"`
	// Pairs, Duplicates and Candidates count the pairs of every set, the
	// duplicates among them under the purpose's definition, and the pairs
	// that pass the candidate test (the only ones a model can accept).
	Pairs, Duplicates, Candidates int
	// Shipped is the start model at its own min_confidence.
	Shipped CVFigure `json:"shipped"`
	// Confidence is the start model with its confidence chosen on each
	// training part (the best mean F1 whose pooled precision there holds
	// the target) and applied to the test part.
	Confidence CVFigure `json:"calibrated_confidence"`
	// Refit is the start model's features refitted on each training part
	// toward the start coefficients, its confidence chosen by an inner
	// cross-validation of the training part.
	Refit CVFigure `json:"refit"`
	// Veto is the start model with the numbers veto and its own
	// confidence (remove only; zero otherwise).
	Veto *CVFigure `json:"numbers_veto,omitempty"`
	// CutRefused is the start model refusing the pairs whose word
	// sequence was cut ([similarity.PurposeModel.RefuseSeqCut]), its
	// confidence chosen on each training part as Confidence's (remove
	// only, when some pair has a cut sequence; nil otherwise).
	CutRefused *CVFigure `json:"cut_sequences_refused,omitempty"`
	// LinksRefused is the start model refusing the pairs whose link
	// targets differ by more than every content-equivalent pair's of the
	// training part ([similarity.PurposeModel.RefuseLinks]: the widest
	// limit that costs the training part nothing), its confidence chosen
	// on each training part as Confidence's with that refusal (remove
	// only, when some candidate pair's links differ; nil otherwise).
	LinksRefused *CVFigure `json:"links_refused,omitempty"`
	// LCS is the LCS ratio with its threshold chosen on each training
	// part (best F1); LCSAtTarget the same held to the target (the best
	// F1 among the thresholds whose precision there, at the lower end of
	// its Wilson interval, reaches it; the strictest threshold when none
	// does), nil without a target.
	LCS         CVFigure  `json:"lcs_ratio"`
	LCSAtTarget *CVFigure `json:"lcs_ratio_at_target,omitempty"`
	// RefitVsConfidence and VetoVsConfidence pair the refit and the veto
	// with the calibrated confidence, fold by fold.
	RefitVsConfidence Paired  `json:"refit_vs_confidence"`
	VetoVsConfidence  *Paired `json:"veto_vs_confidence,omitempty"`
	// ChosenVsLCS pairs the chosen decision with the LCS ratio at its
	// own threshold, fold by fold: whether its F1 reaches the ratio's.
	ChosenVsLCS Paired `json:"chosen_vs_lcs_ratio"`
	// ChosenVsLCSAtTarget pairs it with the LCS ratio held to the same
	// target, the fair comparison under a precision target (nil without
	// one).
	ChosenVsLCSAtTarget *Paired `json:"chosen_vs_lcs_ratio_at_target,omitempty"`
	// Chosen names the row chosen: "shipped", "calibrated confidence",
	// "refit", "numbers veto", "cut sequences refused" or "link targets
	// refused"; ChosenFigure is its figures.
	Chosen       string   `json:"chosen"`
	ChosenFigure CVFigure `json:"chosen_figure"`
	// MinConfidence is the chosen decision's confidence: the start
	// model's when Chosen is "shipped", else chosen on every pair the way
	// each training part chose it.
	MinConfidence float64 `json:"min_confidence"`
	// Model is the chosen decision's model (the start model, refitted on
	// every pair when Chosen is "refit", with NumbersVeto when "numbers
	// veto").
	Model similarity.Model `json:"model"`
	// RefuseSeqCut reports that the chosen decision refuses the pairs
	// whose word sequence was cut (Chosen "cut sequences refused").
	RefuseSeqCut bool `json:"refuse_cut_sequences"`
	// RefuseLinks is the chosen decision's limit on the share of link
	// targets that differ (Chosen "link targets refused": the largest
	// share among every content-equivalent candidate pair); 0 otherwise.
	RefuseLinks float64 `json:"refuse_links_above"`
	// HoldsTarget reports that the chosen decision's pooled
	// cross-validated precision reaches the target.
	HoldsTarget bool `json:"holds_target"`
	// Warnings say why the figures cannot be trusted (too few pairs) or
	// why the target is out of reach.
	Warnings []string `json:"warnings"`
}

// NewPairCVSet returns a set of independent scored pairs (pair mode:
// every pair its own fold group), for pairs that come without a data set
// folder: a list of labelled page pairs or the search page's feedback.
func NewPairCVSet(name string, scored []ScoredPair) *CVSet {
	cs := &CVSet{Name: name, Mode: PairMode, Scored: scored, groups: len(scored)}
	cs.groupA = make([]int, len(scored))
	cs.groupB = make([]int, len(scored))
	for i := range scored {
		cs.groupA[i], cs.groupB[i] = i, i
	}
	return cs
}

// minCalibrationPairs is the fewest duplicates, and the fewest other
// pairs, per fold of a calibration below which its figures move more
// from fold to fold than any fit could gain: 5 folds want 25 of each.
const minCalibrationPairs = 5

// Calibrate fits a decision to the labelled pairs of sets, as `winnow
// calibrate` does. Under repeated stratified k-fold cross-validation
// (the folds of [CrossValidate]: [CVSet]'s groups, [splitFold]) it reads
// on the same test folds: the start model at its own confidence; the
// start model at the confidence chosen on each training part; the start
// features refitted on each training part toward the start coefficients
// (penalty Penalty), with the confidence chosen by an inner
// cross-validation there ([innerSplits]); for the remove decision the
// start model with the numbers veto; and the LCS ratio at its training
// parts' F1-best threshold. A confidence is chosen as the shipped ones
// are ([OwnConfidence]), with the target for the floor: among
// [Confidences] ([RemoveConfidences] for the remove decision) whose
// accepted pairs' precision reaches it (at the lower end of its Wilson
// interval, [wilsonLower]), the best F1 averaged over the sets. The shipped decision stays unless another row holds the
// target and beats it by more than the fold-to-fold spread (where it
// does not hold the target itself, the best F1 that does); the refit and
// the veto are never chosen with fewer than 5 duplicates and 5 other
// pairs a fold: the coefficients move only where the pairs can tell.
func Calibrate(sets []*CVSet, o CalibrateOptions) (*Calibration, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("eval: calibrate: no pairs")
	}
	k := cmp.Or(o.Folds, 5)
	repeats := cmp.Or(o.Repeats, 10)
	floor := o.MinPrecision
	penalty := cmp.Or(o.Penalty, CalibratePenalty)
	start := o.Start
	if start == nil {
		start = similarity.DefaultModel(o.Purpose)
	}
	truth := Truths()[0]
	if o.Purpose == similarity.PurposeRemove {
		truth = Truths()[1]
	}
	c := &Calibration{Purpose: o.Purpose.String(), Target: floor, Folds: k, Repeats: repeats}
	for _, s := range sets {
		isDup := s.isDup(truth)
		for i := range s.Scored {
			c.Pairs++
			if isDup(&s.Scored[i]) {
				c.Duplicates++
			}
			if s.Scored[i].Candidate {
				c.Candidates++
			}
		}
	}
	if c.Duplicates == 0 || c.Duplicates == c.Pairs {
		return nil, fmt.Errorf("eval: calibrate: %d pairs, %d of them %s: both kinds are needed", c.Pairs, c.Duplicates, o.Purpose.Definition())
	}
	enough := c.Duplicates >= minCalibrationPairs*k && c.Pairs-c.Duplicates >= minCalibrationPairs*k
	if !enough {
		c.Warnings = append(c.Warnings, fmt.Sprintf("too few pairs to tell: %d %s and %d others, %d of each wanted for %d folds; the coefficients stay the shipped ones and the figures are rough",
			c.Duplicates, o.Purpose.Definition(), c.Pairs-c.Duplicates, minCalibrationPairs*k, k))
	}
	lcs := Methods()[slices.IndexFunc(Methods(), func(m Method) bool { return m.Name == "lcs" })]
	veto := start.Seq
	veto.NumbersVeto = true
	withVeto := o.Purpose == similarity.PurposeRemove && !start.Seq.NumbersVeto
	withCut := false
	for _, s := range sets {
		withCut = withCut || o.Purpose == similarity.PurposeRemove && !start.RefuseSeqCut && slices.ContainsFunc(s.Scored, func(sp ScoredPair) bool { return sp.SeqCut && sp.Candidate })
	}
	withLinks := o.Purpose == similarity.PurposeRemove && start.RefuseLinks == 0
	anyLinks := false
	for _, s := range sets {
		anyLinks = anyLinks || slices.ContainsFunc(s.Scored, func(sp ScoredPair) bool { return sp.Candidate && sp.Scores.HasLinks && sp.Scores.LinksDiffer > 0 })
	}
	withLinks = withLinks && anyLinks
	var shipped, conf, refit, vetoed, cutRefused, linksRefused, ratio, ratioFloor []foldScore
	eachFold(sets, k, repeats, o.Seed, truth, func(trainIdx, tests [][]int, inner []innerSplit) {
		cConf, _ := confidenceAtFloor(sets, trainIdx, start.Seq, truth, floor, false)
		cCut := 0.0
		if withCut {
			cCut, _ = confidenceAtFloor(sets, trainIdx, start.Seq, truth, floor, true)
		}
		fitted := fitToward(sets, trainIdx, start.Seq, truth, penalty)
		cRefit := innerConfidence(sets, inner, start.Seq, truth, penalty, floor, false)
		cVeto := 0.0
		if withVeto {
			cVeto, _ = confidenceAtFloor(sets, trainIdx, veto, truth, floor, false)
		}
		lLinks, cLinks := 0.0, 0.0
		if withLinks {
			lLinks = linksLimit(sets, trainIdx, truth)
			cLinks, _ = confidenceRefusing(sets, trainIdx, start.Seq, truth, floor, func(sp *ScoredPair) bool { return linksOver(sp, lLinks) })
		}
		for si, s := range sets {
			isDup := s.isDup(truth)
			js := make([]Judged, len(trainIdx[si]))
			for j, i := range trainIdx[si] {
				js[j] = Judged{Score: lcs.Score(&s.Scored[i].Scores), Dup: isDup(&s.Scored[i])}
			}
			curve := Curve(js, false)
			t := Best(curve).Threshold
			tf := atFloor(curve, floor)
			n := len(tests[si])
			gold := make([]bool, n)
			pS, pC, pR, pV, pL, pF := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
			pK, pN := make([]bool, n), make([]bool, n)
			for j, i := range tests[si] {
				sp := &s.Scored[i]
				gold[j] = isDup(sp)
				v := lcs.Score(&sp.Scores)
				pL[j] = !math.IsNaN(v) && v >= t
				pF[j] = !math.IsNaN(v) && v >= tf
				if !sp.Candidate || o.Purpose == similarity.PurposeRemove && sp.Remove.Refused {
					continue
				}
				p := start.Seq.Probability(&sp.Scores)
				pS[j] = p >= start.MinConfidence
				pC[j] = p >= cConf
				pR[j] = fitted.Probability(&sp.Scores) >= cRefit
				pV[j] = withVeto && veto.Probability(&sp.Scores) >= cVeto
				pK[j] = withCut && !sp.SeqCut && p >= cCut
				pN[j] = withLinks && !linksOver(sp, lLinks) && p >= cLinks
			}
			add := func(dst *[]foldScore, pred []bool) {
				pt := Verdicts(pred, gold)
				*dst = append(*dst, foldScore{pt.Precision, pt.Recall, pt.F1, pt.TP, pt.FP})
			}
			add(&shipped, pS)
			add(&conf, pC)
			add(&refit, pR)
			add(&vetoed, pV)
			add(&cutRefused, pK)
			add(&linksRefused, pN)
			add(&ratio, pL)
			add(&ratioFloor, pF)
		}
	})
	c.Shipped = summarize(fmt.Sprintf("shipped (min_confidence %.2f)", start.MinConfidence), len(start.Seq.Features)+1, shipped)
	c.Confidence = summarize("calibrated confidence", len(start.Seq.Features)+2, conf)
	c.Refit = summarize("refit coefficients", 2*len(start.Seq.Features)+2, refit)
	c.LCS = summarize("LCS ratio (own threshold)", 1, ratio)
	if floor > 0 {
		f := summarize("LCS ratio (held to the target)", 1, ratioFloor)
		c.LCSAtTarget = &f
	}
	c.RefitVsConfidence = *paired(refit, conf)
	if withVeto {
		v := summarize("numbers veto", len(start.Seq.Features)+2, vetoed)
		c.Veto = &v
		c.VetoVsConfidence = paired(vetoed, conf)
	}
	if withCut {
		f := summarize("cut sequences refused", len(start.Seq.Features)+2, cutRefused)
		c.CutRefused = &f
	}
	if withLinks {
		f := summarize("link targets refused", len(start.Seq.Features)+3, linksRefused)
		c.LinksRefused = &f
	}
	all := make([][]int, len(sets))
	for si, s := range sets {
		all[si] = make([]int, len(s.Scored))
		for i := range all[si] {
			all[si][i] = i
		}
	}
	// The rows in order of how much they change: the shipped decision
	// stays unless another row holds the target and beats it by more
	// than the fold-to-fold spread (the rule of [Select]); where the
	// shipped one does not hold the target, the best F1 among the rows
	// that do, else the most precise.
	type row struct {
		name  string
		fig   CVFigure
		folds []foldScore
		ok    bool // may be chosen at all
	}
	rows := []row{
		{"shipped", c.Shipped, shipped, true},
		{"calibrated confidence", c.Confidence, conf, true},
		{"refit", c.Refit, refit, enough},
	}
	if withVeto {
		rows = append(rows, row{"numbers veto", *c.Veto, vetoed, enough})
	}
	if withCut {
		rows = append(rows, row{"cut sequences refused", *c.CutRefused, cutRefused, true})
	}
	if withLinks {
		rows = append(rows, row{"link targets refused", *c.LinksRefused, linksRefused, true})
	}
	holds := func(f CVFigure) bool { return f.Recall > 0 && f.PooledPrecision >= floor }
	best := 0
	if holds(rows[0].fig) {
		for i, r := range rows[1:] {
			if r.ok && holds(r.fig) && paired(r.folds, rows[best].folds).Beyond() {
				best = i + 1
			}
		}
	} else {
		best = -1
		for i, r := range rows {
			if r.ok && holds(r.fig) && (best < 0 || r.fig.F1 > rows[best].fig.F1) {
				best = i
			}
		}
		if best < 0 {
			best = 0
			for i, r := range rows {
				if r.ok && r.fig.PooledPrecision > rows[best].fig.PooledPrecision {
					best = i
				}
			}
		}
	}
	c.Chosen, c.ChosenFigure = rows[best].name, rows[best].fig
	c.ChosenVsLCS = *paired(rows[best].folds, ratio)
	if floor > 0 {
		c.ChosenVsLCSAtTarget = paired(rows[best].folds, ratioFloor)
	}
	switch c.Chosen {
	case "shipped":
		c.MinConfidence, c.Model = start.MinConfidence, start.Seq
	case "calibrated confidence":
		c.Model = start.Seq
		c.MinConfidence, _ = confidenceAtFloor(sets, all, start.Seq, truth, floor, false)
	case "cut sequences refused":
		c.Model, c.RefuseSeqCut = start.Seq, true
		c.MinConfidence, _ = confidenceAtFloor(sets, all, start.Seq, truth, floor, true)
	case "refit":
		c.Model = fitToward(sets, all, start.Seq, truth, penalty)
		inner := innerSplits(sets, all, truth, innerFolds, innerRand(o.Seed, repeats, k, 0))
		c.MinConfidence = innerConfidence(sets, inner, start.Seq, truth, penalty, floor, false)
	case "link targets refused":
		c.Model, c.RefuseLinks = start.Seq, linksLimit(sets, all, truth)
		c.MinConfidence, _ = confidenceRefusing(sets, all, start.Seq, truth, floor, func(sp *ScoredPair) bool { return linksOver(sp, c.RefuseLinks) })
	case "numbers veto":
		c.Model = veto
		c.MinConfidence, _ = confidenceAtFloor(sets, all, veto, truth, floor, false)
	}
	c.HoldsTarget = holds(c.ChosenFigure)
	if !c.HoldsTarget {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the target precision %.3f does not hold under cross-validation: pooled precision %.3f at recall %.3f; the decision is flagged wherever it is applied",
			floor, c.ChosenFigure.PooledPrecision, c.ChosenFigure.Recall))
	}
	return c, nil
}

// confidenceAtFloor returns the confidence (of [calibrationConfidences])
// at which the model m, judged on the given pairs of every set (indexes
// into its Scored), has the best F1 averaged over the sets among those
// whose precision over all sets' accepted pairs reaches floor, and
// whether one does; else the last confidence. With cut, the pairs whose
// word sequence was cut are refused
// ([similarity.PurposeModel.RefuseSeqCut]).
func confidenceAtFloor(sets []*CVSet, pairs [][]int, m similarity.Model, t Truth, floor float64, cut bool) (float64, bool) {
	return confidenceRefusing(sets, pairs, m, t, floor, func(sp *ScoredPair) bool { return cut && sp.SeqCut })
}

// confidenceRefusing is confidenceAtFloor with the remove decision
// refusing the candidate pairs refuse reports besides those it always
// refuses.
func confidenceRefusing(sets []*CVSet, pairs [][]int, m similarity.Model, t Truth, floor float64, refuse func(*ScoredPair) bool) (float64, bool) {
	judged := make([]judgedPairs, len(sets))
	dups := make([]int, len(sets))
	for si, s := range sets {
		isDup := s.isDup(t)
		judged[si], dups[si] = judgeCandidates(len(pairs[si]), func(j int) (*ScoredPair, bool) {
			sp := &s.Scored[pairs[si][j]]
			return judgedRefusing(sp, t, refuse(sp)), isDup(sp)
		}, &m)
	}
	return pickAtFloor(judged, dups, floor, calibrationConfidences(t))
}

// linksLimit returns the largest share of link targets that differ
// ([similarity.Scores.LinksDiffer]) among the duplicates under t of the
// given pairs that are candidates: refusing the pairs above it costs
// those pairs nothing.
func linksLimit(sets []*CVSet, pairs [][]int, t Truth) float64 {
	limit := 0.0
	for si, s := range sets {
		isDup := s.isDup(t)
		for _, i := range pairs[si] {
			if sp := &s.Scored[i]; sp.Candidate && sp.Scores.HasLinks && isDup(sp) {
				limit = max(limit, sp.Scores.LinksDiffer)
			}
		}
	}
	return limit
}

// linksOver reports whether the pair's link targets differ by more than
// limit, as [similarity.PurposeModel.RefuseLinks] refuses it.
func linksOver(sp *ScoredPair, limit float64) bool {
	return sp.Scores.HasLinks && sp.Scores.LinksDiffer > limit
}

// judgedAs returns sp as a confidence is chosen on it under t: a pair the
// remove decision refuses at any confidence ([ModeVerdict.Refused], and
// with cut a pair whose word sequence was cut) is no candidate of a
// remove decision, so it cannot hold a confidence back.
func judgedAs(sp *ScoredPair, t Truth, cut bool) *ScoredPair {
	return judgedRefusing(sp, t, cut && sp.SeqCut)
}

// judgedRefusing is judgedAs with refused telling whether the decision
// refuses sp besides the pairs it always refuses.
func judgedRefusing(sp *ScoredPair, t Truth, refused bool) *ScoredPair {
	if t.Purpose != similarity.PurposeRemove || !(sp.Remove.Refused || refused) || !sp.Candidate {
		return sp
	}
	c := *sp
	c.Candidate = false
	return &c
}

// RemoveConfidences are the confidences a calibration of the remove
// decision chooses among: [Confidences] and, below them, 0.01, 0.02,
// 0.05, 0.1 and 0.2 (a group calibration keeps [Confidences]). On a site
// whose candidate pairs are nearly all content-equivalent the best F1
// that holds the target lies under 0.3: on llvm-docs, with the cut word
// sequences refused, no candidate pair between 0.01 and 0.3 is distinct
// and 62 are content-equivalent (docs/calibration.md); where that is not
// so, the target keeps the choice above.
var RemoveConfidences = append([]float64{0.01, 0.02, 0.05, 0.1, 0.2}, Confidences...)

// calibrationConfidences returns the confidences a calibration under t
// chooses among.
func calibrationConfidences(t Truth) []float64 {
	if t.Purpose == similarity.PurposeRemove {
		return RemoveConfidences
	}
	return Confidences
}

// pickAtFloor is confidenceAtFloor on judged pairs, dups[si] the
// duplicates among set si's pairs (judged or not), the confidence one of
// grid.
func pickAtFloor(judged []judgedPairs, dups []int, floor float64, grid []float64) (float64, bool) {
	best, bestF1 := -1, -1.0
	for ki, c := range grid {
		tp, fp, f1 := 0, 0, 0.0
		for si := range judged {
			pt := judged[si].at(c, dups[si])
			tp += pt.TP
			fp += pt.FP
			f1 += pt.F1 / float64(len(judged))
		}
		if tp == 0 || wilsonLower(tp, tp+fp) < floor {
			continue
		}
		if f1 > bestF1 {
			best, bestF1 = ki, f1
		}
	}
	if best < 0 {
		return grid[len(grid)-1], false
	}
	return grid[best], true
}

// atFloor returns the threshold of curve (a [Curve], loosest last) of
// best F1 among those whose precision, at the lower end of its Wilson
// interval, reaches floor; the strictest threshold when none does.
func atFloor(curve []Point, floor float64) float64 {
	if len(curve) == 0 {
		return math.Inf(1)
	}
	best := -1
	for i, p := range curve {
		if p.TP > 0 && wilsonLower(p.TP, p.TP+p.FP) >= floor && (best < 0 || p.F1 > curve[best].F1) {
			best = i
		}
	}
	if best < 0 {
		return math.Inf(1)
	}
	return curve[best].Threshold
}

// wilsonLower is the lower end of the Wilson score interval of a
// precision of k accepted duplicates in n accepted pairs at half a
// standard error (z = 0.5; Wilson 1927): a confidence whose precision
// only just reaches the target on the pairs it is chosen on falls under
// it on new ones about half the time; one chosen a margin above holds
// more often, and the margin grows as the pairs get fewer (30 of 30
// give 0.992, 29 of 30 0.946). One standard error cost the dev sets
// half their recall.
func wilsonLower(k, n int) float64 {
	const z = 0.5
	p, nf := float64(k)/float64(n), float64(n)
	return (p + z*z/(2*nf) - z*math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))) / (1 + z*z/nf)
}

// innerConfidence chooses a refitted model's confidence on a training
// part: the model is refitted toward prior on each inner split's pairs
// and judges that split's, and the confidence is picked at the floor on
// these out-of-fold judgements together; with cut, the pairs whose word
// sequence was cut are refused.
func innerConfidence(sets []*CVSet, splits []innerSplit, prior similarity.Model, t Truth, penalty, floor float64, cut bool) float64 {
	judged := make([]judgedPairs, len(sets))
	dups := make([]int, len(sets))
	for _, sp := range splits {
		m := fitToward(sets, sp.fitOn, prior, t, penalty)
		for si, s := range sets {
			isDup := s.isDup(t)
			js, d := judgeCandidates(len(sp.judge[si]), func(j int) (*ScoredPair, bool) {
				p := &s.Scored[sp.judge[si][j]]
				return judgedAs(p, t, cut), isDup(p)
			}, &m)
			judged[si] = append(judged[si], js...)
			dups[si] += d + sp.missed[si]
		}
	}
	c, _ := pickAtFloor(judged, dups, floor, calibrationConfidences(t))
	return c
}
