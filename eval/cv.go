package eval

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"

	"github.com/winnow-search/winnow/internal/parallel"
	"github.com/winnow-search/winnow/similarity"
)

// Truth is a definition of a duplicate, as the cross-validation scores
// it: the pair-mode label rule and the purpose whose model learns it.
// Corpus-mode duplicates (llvm-docs: the same page source in another
// template) count under both.
type Truth struct {
	Name    string
	Purpose similarity.Purpose
	// Label reports whether a pair-mode label is a duplicate.
	Label func(label int) bool
}

// Truths are the definitions of the issue: label >= 1 (near-duplicate,
// the group decision) and label = 3 against every other label
// (content-equivalent, the remove decision).
func Truths() []Truth {
	return []Truth{
		{Name: "label >= 1", Purpose: similarity.PurposeGroup, Label: func(l int) bool { return l >= 1 }},
		{Name: "label = 3", Purpose: similarity.PurposeRemove, Label: func(l int) bool { return l == 3 }},
	}
}

// CVSet is one scored data set in a cross-validation.
type CVSet struct {
	Name   string
	Mode   Mode
	Scored []ScoredPair
	// groupA and groupB are the fold groups of each pair's documents:
	// the pair itself in pair mode, the page (the document's path
	// without its release folder) in corpus mode, so no page is both
	// trained and tested on in another release.
	groupA, groupB []int
	groups         int
}

// NewCVSet prepares a run's scored pairs for cross-validation.
func NewCVSet(name string, set *Set, rep *Report) *CVSet {
	cs := &CVSet{Name: name, Mode: set.Mode, Scored: rep.Scored}
	cs.groupA = make([]int, len(rep.Scored))
	cs.groupB = make([]int, len(rep.Scored))
	if set.Mode == PairMode {
		for i := range rep.Scored {
			cs.groupA[i], cs.groupB[i] = i, i
		}
		cs.groups = len(rep.Scored)
		return cs
	}
	page := map[string]int{}
	docGroup := make([]int, len(set.Docs))
	for i, d := range set.Docs {
		name := d.ID
		if j := strings.IndexByte(name, '/'); j >= 0 {
			name = name[j+1:]
		}
		g, ok := page[name]
		if !ok {
			g = len(page)
			page[name] = g
		}
		docGroup[i] = g
	}
	for i, sp := range rep.Scored {
		cs.groupA[i], cs.groupB[i] = docGroup[sp.A], docGroup[sp.B]
	}
	cs.groups = len(page)
	return cs
}

func (cs *CVSet) isDup(t Truth) func(*ScoredPair) bool {
	if cs.Mode == CorpusMode {
		return func(sp *ScoredPair) bool { return sp.Label == 1 }
	}
	return func(sp *ScoredPair) bool { return t.Label(sp.Label) }
}

// folds assigns each group of the set to one of k folds, stratified: the
// groups are dealt in turn within each stratum (a pair's label in pair
// mode; whether the page has a duplicate in corpus mode) after a shuffle
// by r.
func (cs *CVSet) folds(k int, r *rand.Rand) []int {
	stratum := make([]int, cs.groups)
	for i, sp := range cs.Scored {
		if cs.Mode == PairMode {
			stratum[cs.groupA[i]] = sp.Label
		} else if sp.Label == 1 {
			stratum[cs.groupA[i]], stratum[cs.groupB[i]] = 1, 1
		}
	}
	order := r.Perm(cs.groups)
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(stratum[a], stratum[b]) })
	fold := make([]int, cs.groups)
	for i, g := range order {
		fold[g] = i % k
	}
	return fold
}

// CVOptions sets a cross-validation.
type CVOptions struct {
	// Folds and Repeats: repeated k-fold; zero means 5 and 20 (at 5
	// repeats the precision the confidence rule reads moves by about
	// 0.005 from one seed to another).
	Folds, Repeats int
	// Seed seeds the shuffles; runs with the same seed are identical.
	Seed uint64
	// Penalty is the models' L2 penalty; zero means FitPenalty.
	Penalty float64
}

// PrecisionFloor is the precision the shipped confidences keep on web
// pages: each default decision's min_confidence is, among the
// [Confidences] whose cross-validated pooled precision on the first set
// (the web pairs, webis-ecir20-dev, in docs/quality.md's command) is at least
// this, the one of best mean F1 over the sets ([OwnConfidence]).
const PrecisionFloor = 0.95

// OwnConfidence applies the rule that set the shipped confidences to one
// model's figures by confidence (bySet[set][i], i in the order of
// [Confidences]; at least one set, the first being the one whose
// precision the floor bounds, each with a figure per confidence): among the confidences that accept a pair on the first set at
// a pooled precision ([CVFigure.PooledPrecision]) of at least
// [PrecisionFloor], the one of best F1 averaged over the sets (the
// smallest of equals), and the last when none reaches the floor.
//
// It reads the pooled precision, not the mean over folds, because near
// the floor many folds accept one or two pairs or none, and a fold that
// accepts none counts as precision 1 in the mean (read as the mean,
// the LCS ratio alone for the remove decision reached 0.954 at 0.85,
// pooled 0.947). It maximizes F1 under the floor instead of taking the
// smallest confidence at it (as it once did), because the smallest sits
// on the edge: chosen on a training part, it fell under the floor on the
// test part (pooled precision 0.947 on the web pairs for the group
// decision, docs/quality.md "Cross-validated"), where the best F1 above the floor
// kept 0.961-0.962 at the same F1.
func OwnConfidence(bySet [][]CVFigure) int {
	best, bestF1 := -1, -1.0
	for i, f := range bySet[0] {
		if !reachesFloor(f) {
			continue
		}
		f1 := 0.0
		for _, figs := range bySet {
			f1 += figs[i].F1
		}
		if f1 /= float64(len(bySet)); f1 > bestF1 {
			best, bestF1 = i, f1
		}
	}
	if best < 0 {
		return len(bySet[0]) - 1
	}
	return best
}

// Candidate is one decision rule compared under cross-validation.
type Candidate struct {
	Name string
	// Params counts the numbers fitted on the training folds.
	Params int
	// Features are the model's inputs; nil for a paper method or a fixed
	// rule.
	Features []similarity.Feature
	// Veto sets the fitted model's [similarity.Model.NumbersVeto]: a
	// pair whose numbers differ is refused whatever its probability.
	Veto bool
	// method is the paper method, when this is one.
	method *Method
	// fixed is a rule with nothing fitted (the legacy decision).
	fixed func(*ScoredPair) bool
}

// ModelCandidates are the feature sets the cross-validation compares: the
// first two are the default decisions' (near-duplicate and
// content-equivalent); the others add a score that might tell label 3
// from labels 1-2 among near-identical pages (length ratio, containment,
// Jaccard), content in another order (the word-multiset overlap), or
// read the divergence over a window that grows with the page (long
// manuals), and every score at once.
func ModelCandidates() []Candidate {
	f := similarity.Features()
	return []Candidate{
		{Name: "model: lcs + divergence", Params: 3, Features: []similarity.Feature{similarity.FeatureLCS, similarity.FeatureDivergence}},
		{Name: "model: lcs gap + divergence", Params: 3, Features: []similarity.Feature{similarity.FeatureLCSGap, similarity.FeatureDivergence}},
		{Name: "model: lcs", Params: 2, Features: []similarity.Feature{similarity.FeatureLCS}},
		{Name: "model: lcs + divergence + jaccard", Params: 4, Features: []similarity.Feature{similarity.FeatureLCS, similarity.FeatureDivergence, similarity.FeatureJaccard}},
		{Name: "model: lcs gap + divergence + length", Params: 4, Features: []similarity.Feature{similarity.FeatureLCSGap, similarity.FeatureDivergence, similarity.FeatureLengthRatio}},
		{Name: "model: lcs gap + divergence + contain", Params: 4, Features: []similarity.Feature{similarity.FeatureLCSGap, similarity.FeatureDivergence, similarity.FeatureContainment}},
		{Name: "model: lcs gap + divergence + jaccard", Params: 4, Features: []similarity.Feature{similarity.FeatureLCSGap, similarity.FeatureDivergence, similarity.FeatureJaccard}},
		{Name: "model: lcs + divergence + bag gap", Params: 4, Features: []similarity.Feature{similarity.FeatureLCS, similarity.FeatureDivergence, similarity.FeatureBagGap}},
		{Name: "model: lcs gap + divergence + bag gap", Params: 4, Features: []similarity.Feature{similarity.FeatureLCSGap, similarity.FeatureDivergence, similarity.FeatureBagGap}},
		{Name: "model: lcs + page divergence", Params: 3, Features: []similarity.Feature{similarity.FeatureLCS, similarity.FeaturePageDivergence}},
		{Name: "model: lcs + divergence + whole page", Params: 4, Features: []similarity.Feature{similarity.FeatureLCS, similarity.FeatureDivergence, similarity.FeatureWholePage}},
		{Name: "model: lcs gap", Params: 2, Features: []similarity.Feature{similarity.FeatureLCSGap}},
		{Name: "model: lcs + jaccard", Params: 3, Features: []similarity.Feature{similarity.FeatureLCS, similarity.FeatureJaccard}},
		{Name: "model: lcs gap + jaccard", Params: 3, Features: []similarity.Feature{similarity.FeatureLCSGap, similarity.FeatureJaccard}},
		{Name: "model: lcs gap + divergence + jaccard + numbers", Params: 5, Features: []similarity.Feature{similarity.FeatureLCSGap, similarity.FeatureDivergence, similarity.FeatureJaccard, similarity.FeatureNumbers}},
		{Name: "model: lcs gap + divergence + jaccard, numbers veto", Params: 4, Features: []similarity.Feature{similarity.FeatureLCSGap, similarity.FeatureDivergence, similarity.FeatureJaccard}, Veto: true},
		{Name: "model: lcs gap + divergence + jaccard + links", Params: 5, Features: []similarity.Feature{similarity.FeatureLCSGap, similarity.FeatureDivergence, similarity.FeatureJaccard, similarity.FeatureLinks}},
		{Name: "model: every feature", Params: len(f) + 1, Features: f},
	}
}

// CVFigure is a candidate's figures on one set under one truth: the mean
// over every test fold of every repeat, and the sample standard deviation
// across those folds.
type CVFigure struct {
	Candidate string  `json:"candidate"`
	Params    int     `json:"params"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	SDF1      float64 `json:"sd_f1"`
	SDP       float64 `json:"sd_precision"`
	// PooledPrecision is the precision of every test fold's predictions
	// taken together (true over all accepted pairs, every repeat), the
	// precision the set as a whole sees. Precision, the mean over folds,
	// counts a fold that accepts nothing as precision 1, which flatters a
	// high-confidence point where many folds accept nothing; the floor
	// rule ([OwnConfidence]) reads this one. 1 when nothing is accepted.
	PooledPrecision float64 `json:"pooled_precision"`
	// DeltaF1 and SDDelta are the mean and standard deviation across the
	// test folds of F1 minus the F1 of the plain LCS ratio (Huang) on
	// the same fold: a rule wins when DeltaF1 > SDDelta.
	DeltaF1 float64 `json:"delta_f1_vs_lcs"`
	SDDelta float64 `json:"sd_delta"`
	// Better and Worse count the test folds whose F1 is above and below
	// the reference's on the same fold (the reference of DeltaF1): a gain
	// inside the spread may still be consistent, fold after fold.
	Better int `json:"folds_better"`
	Worse  int `json:"folds_worse"`
	// ECE is the expected calibration error of a model's out-of-fold
	// probabilities on candidate pairs (10 equal-width bins), NaN for
	// other candidates.
	ECE float64 `json:"ece"`
	// FoldPrecision and FoldF1 are the figures of each test fold, repeat
	// by repeat: two runs on the same sets with the same folds, repeats
	// and seed test the same pairs in each fold, so [CompareCV] pairs
	// them across builds (a change to the signatures or the scores, which
	// one run cannot hold as two candidates).
	FoldPrecision []float64 `json:"fold_precision"`
	FoldF1        []float64 `json:"fold_f1"`
	// VsPaper and VsFloor pair a model at its own confidence (in
	// [CVTable.AtOwn]) with the two readings of the LCS ratio the
	// selection rule compares against ([Select]): the paper method at its
	// F1-best threshold and [FloorReference] at its own confidence.
	VsPaper *Paired `json:"vs_paper_lcs,omitempty"`
	VsFloor *Paired `json:"vs_lcs_at_floor,omitempty"`
}

// Paired is a candidate's F1 against a reference's, fold by fold: the
// mean and standard deviation of the difference, and the folds it is
// better and worse in.
type Paired struct {
	DeltaF1 float64 `json:"delta_f1"`
	SD      float64 `json:"sd"`
	Better  int     `json:"folds_better"`
	Worse   int     `json:"folds_worse"`
}

// Beyond reports whether the gain exceeds the fold-to-fold spread.
func (p *Paired) Beyond() bool { return p.DeltaF1 > p.SD }

// MarshalJSON writes ECE as null when it is NaN (a paper method), which
// JSON has no number for.
func (f CVFigure) MarshalJSON() ([]byte, error) {
	type plain CVFigure
	out := struct {
		plain
		ECE *float64 `json:"ece"`
	}{plain: plain(f)}
	if !math.IsNaN(f.ECE) {
		out.ECE = &f.ECE
	}
	return json.Marshal(out)
}

// corpusSuffix follows the truth's name in a corpus set's [CVTable]: the
// set's own labels (dup) stand for both definitions.
const corpusSuffix = " (corpus: dup)"

// CVTable is the figures of every candidate on one set under one truth.
type CVTable struct {
	Set     string     `json:"set"`
	Truth   string     `json:"truth"`
	Figures []CVFigure `json:"figures"`
	// Confidence holds the shipped model's figures at each min_confidence
	// of [Confidences], the operator's knob.
	Confidence []CVFigure `json:"confidence"`
	// AtShipped holds every candidate model's figures at the shipped
	// min_confidence of the truth's purpose, where the decision works
	// (remove mode at 0.9 is a high-precision point, not the F1 optimum);
	// DeltaF1 and SDDelta are then against the shipped model at the same
	// confidence, fold by fold.
	AtShipped []CVFigure `json:"at_shipped_confidence"`
	// ShippedConfidence is that min_confidence.
	ShippedConfidence float64 `json:"shipped_confidence"`
	// AtOwn holds every candidate model's figures at its own operating
	// point, chosen by the rule that chose the shipped one
	// ([OwnConfidence] on its figures by confidence), so that a model whose
	// probabilities are scaled otherwise is not judged at a confidence
	// chosen for the shipped model; OwnConfidences are those points.
	// DeltaF1 and SDDelta are against the shipped model at its own point,
	// fold by fold.
	AtOwn          []CVFigure `json:"at_own_confidence"`
	OwnConfidences []float64  `json:"own_confidences"`
	// InFold holds every candidate model with its confidence set on each
	// fold's training part by the rule that sets the shipped one
	// ([OwnConfidence], read on an inner 5-fold cross-validation of the
	// training part: [nestedOwnConfidence]) and applied unchanged to the
	// test part: the held-out protocol, fit and operating point both
	// chosen without the pairs scored, where AtOwn reads the operating
	// point off the test folds themselves. DeltaF1 and SDDelta
	// are against the paper LCS ratio at its in-fold threshold, fold by
	// fold, as the held-out table compares them.
	InFold []CVFigure `json:"in_fold_floor"`
	// Reliability is the shipped model's out-of-fold reliability diagram:
	// per bin, the mean probability and the share of duplicates.
	Reliability []ReliabilityBin `json:"reliability"`
}

// ReliabilityBin is one bin of a reliability diagram.
type ReliabilityBin struct {
	Lo, Hi    float64
	Pairs     int
	MeanProb  float64
	DupShare  float64
	Positives int
}

// Confidences are the min_confidence values the cross-validation reports
// and the rule that sets the shipped ones reads ([OwnConfidence]): steps
// of 0.1 to 0.6, then of 0.01 from 0.6 to 0.7 and from 0.8 to 0.95, where
// the models' precision on the web pairs crosses the floor, and of 0.05
// between. The remove model's precision was found crossing the floor
// between two points of a coarser grid (0.948 at 0.9, 0.961 at 0.95) and
// added 0.91–0.94; 0.61–0.69 and 0.81–0.89 were added later, where the
// group models and the LCS ratio alone cross it (the ratio alone, for the
// remove decision, went from pooled precision 0.947 at 0.85 to accepting
// nothing at 0.9).
var Confidences = []float64{0.3, 0.4, 0.5, 0.6, 0.61, 0.62, 0.63, 0.64, 0.65, 0.66, 0.67, 0.68, 0.69, 0.7, 0.75, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86, 0.87, 0.88, 0.89, 0.9, 0.91, 0.92, 0.93, 0.94, 0.95, 0.98}

// CVReport is the outcome of [CrossValidate].
type CVReport struct {
	Folds   int `json:"folds"`
	Repeats int `json:"repeats"`
	// Seed is [CVOptions.Seed]: with the sets, Folds and Repeats it fixes
	// every fold.
	Seed   uint64    `json:"seed"`
	Tables []CVTable `json:"tables"`
	// Fitted are the models fitted on every pair of every set, one per
	// truth, as the default decisions carry them.
	Fitted []FittedModel `json:"fitted"`
	// Selected is the selection rule's choice for each truth ([Select]).
	Selected []Selection `json:"selected"`
	// Across is the selection read over this report's seed and others
	// ([SelectAcross], `winnow eval -cv -seeds N`); nil for one seed.
	Across *AcrossSeeds `json:"across_seeds,omitempty"`
}

// FittedModel is a purpose's model fitted on all the data.
type FittedModel struct {
	Truth        string
	Seq, NoSeq   similarity.Model
	NonCandidate float64
	// SeqFolds is how far the Seq model's coefficients move between the
	// training parts of the cross-validation (every fold of every
	// repeat): a fit that moves little is one a new sample of the same
	// kind would not move either.
	SeqFolds CoefSpread
}

// CoefSpread is the mean and sample standard deviation of a model's
// coefficients over several fits, the intercept first, then the weights
// in the model's order.
type CoefSpread struct {
	Mean []float64 `json:"mean"`
	SD   []float64 `json:"sd"`
}

// coefSpread returns the spread of the fits' coefficients (all over the
// same features).
func coefSpread(fits []similarity.Model) CoefSpread {
	if len(fits) == 0 {
		return CoefSpread{}
	}
	n := 1 + len(fits[0].Weights)
	cs := CoefSpread{Mean: make([]float64, n), SD: make([]float64, n)}
	vals := make([]float64, len(fits))
	for c := range n {
		for i, m := range fits {
			vals[i] = m.Intercept
			if c > 0 {
				vals[i] = m.Weights[c-1]
			}
		}
		cs.Mean[c], cs.SD[c] = meanSD(vals)
	}
	return cs
}

// foldPreds holds a candidate's out-of-fold predictions.
type foldScore struct {
	p, r, f float64
	tp, fp  int
}

// CrossValidate compares the paper methods at thresholds chosen on the
// training folds, the legacy decision, and the candidate models fitted
// on the training folds of every set at once, on the same folds: for each
// repeat, each set's groups are shuffled and dealt into k stratified
// folds; each fold in turn is the test part, and a pair is tested when
// either of its documents' groups is in it and trained on when neither
// is. Paper methods choose their threshold on the set's own training part
// (best F1), as the held-out table does; each model is fitted on
// the training parts of all sets, as the shipped decision is, and applied
// at the confidence of best mean F1 on the training parts
// (chooseConfidence); the confidence table then gives the shipped model's
// figures at every fixed confidence, the operator's knob.
func CrossValidate(sets []*CVSet, o CVOptions) *CVReport {
	k := cmp.Or(o.Folds, 5)
	repeats := cmp.Or(o.Repeats, 20)
	penalty := cmp.Or(o.Penalty, FitPenalty)
	rep := &CVReport{Folds: k, Repeats: repeats, Seed: o.Seed}
	var cands []Candidate
	for _, m := range Methods() {
		m := m
		cands = append(cands, Candidate{Name: m.Name, Params: 1, method: &m})
	}
	cands = append(cands, Candidate{Name: "legacy decision", Params: 0, fixed: func(sp *ScoredPair) bool { return sp.Legacy }})
	models := ModelCandidates()
	cands = append(cands, models...)
	for _, truth := range Truths() {
		// shipped is the model the default decision of this truth uses:
		// the confidence table is its.
		shipped := shippedIndex(models, truth.Purpose)
		shippedFound := shipped >= 0
		shipped = max(shipped, 0)
		// scores[set][candidate] are the per-fold figures.
		scores := make([][][]foldScore, len(sets))
		shippedConf := similarity.DefaultModel(truth.Purpose).MinConfidence
		shippedKI := slices.Index(Confidences, shippedConf)
		byConf := make([][][][]foldScore, len(sets)) // [set][model][confidence]
		inFold := make([][][]foldScore, len(sets))   // [set][model]: the in-fold floor confidence
		oofProb := make([][][]float64, len(sets))    // [set][model][pair], summed over repeats
		for si := range sets {
			scores[si] = make([][]foldScore, len(cands))
			byConf[si] = make([][][]foldScore, len(models))
			inFold[si] = make([][]foldScore, len(models))
			oofProb[si] = make([][]float64, len(models))
			for mi := range models {
				byConf[si][mi] = make([][]foldScore, len(Confidences))
				oofProb[si][mi] = make([]float64, len(sets[si].Scored))
			}
		}
		oofCount := make([][]int, len(sets))
		for si := range sets {
			oofCount[si] = make([]int, len(sets[si].Scored))
		}
		var shippedFits []similarity.Model // the shipped features' fit on each training part
		for r := range repeats {
			rng := outerRand(o.Seed, r)
			folds := dealFolds(sets, k, rng)
			for f := range k {
				trainIdx, tests := splitFold(sets, folds, f)
				inner := innerSplits(sets, trainIdx, truth, innerFolds, innerRand(o.Seed, r, k, f))
				fitted := make([]similarity.Model, len(models))
				conf := make([]float64, len(models))
				heldConf := make([]float64, len(models))
				// The models fit independently, each into its own
				// slots: one goroutine per core (a run of one seed
				// otherwise uses one core; -seeds runs them side by side).
				parallel.For(len(models), runtime.GOMAXPROCS(0), 1, func(mi int) {
					fitted[mi] = shippedRules(fitPooled(sets, trainIdx, models[mi].Features, truth, penalty), truth, models[mi].Veto)
					conf[mi] = chooseConfidence(sets, trainIdx, fitted[mi], truth)
					heldConf[mi] = nestedOwnConfidence(sets, inner, models[mi].Features, models[mi].Veto, truth, penalty)
				})
				shippedFits = append(shippedFits, fitted[shipped])
				for si, s := range sets {
					isDup := s.isDup(truth)
					gold := make([]bool, len(tests[si]))
					for j, i := range tests[si] {
						gold[j] = isDup(&s.Scored[i])
					}
					pred := make([]bool, len(tests[si]))
					held := make([]bool, len(tests[si]))
					mi := 0
					for ci, c := range cands {
						switch {
						case c.method != nil:
							js := make([]Judged, len(trainIdx[si]))
							for j, i := range trainIdx[si] {
								js[j] = Judged{Score: c.method.Score(&s.Scored[i].Scores), Dup: isDup(&s.Scored[i])}
							}
							t := Best(Curve(js, c.method.LowerIsDup)).Threshold
							for j, i := range tests[si] {
								v := c.method.Score(&s.Scored[i].Scores)
								pred[j] = !math.IsNaN(v) && (c.method.LowerIsDup && v <= t || !c.method.LowerIsDup && v >= t)
							}
						case c.fixed != nil:
							for j, i := range tests[si] {
								pred[j] = c.fixed(&s.Scored[i])
							}
						default:
							for j, i := range tests[si] {
								sp := &s.Scored[i]
								p := 0.0
								if sp.Candidate {
									p = fitted[mi].Probability(&sp.Scores)
									oofProb[si][mi][i] += p
									if mi == shipped {
										oofCount[si][i]++
									}
								}
								pred[j] = sp.Candidate && p >= conf[mi]
								held[j] = sp.Candidate && p >= heldConf[mi]
							}
							ht := Verdicts(held, gold)
							inFold[si][mi] = append(inFold[si][mi], foldScore{ht.Precision, ht.Recall, ht.F1, ht.TP, ht.FP})
							for ki, fs := range scoreAtEach(s, tests[si], gold, &fitted[mi]) {
								byConf[si][mi][ki] = append(byConf[si][mi][ki], fs)
							}
							mi++
						}
						pt := Verdicts(pred, gold)
						scores[si][ci] = append(scores[si][ci], foldScore{pt.Precision, pt.Recall, pt.F1, pt.TP, pt.FP})
					}
				}
			}
		}
		// Every model's own operating point, set as the shipped ones are.
		ownKI := make([]int, len(models))
		for mi, m := range models {
			bySet := make([][]CVFigure, len(sets))
			for sj := range sets {
				bySet[sj] = make([]CVFigure, len(Confidences))
				for ki := range Confidences {
					bySet[sj][ki] = summarize(m.Name, m.Params, byConf[sj][mi][ki])
				}
			}
			ownKI[mi] = OwnConfidence(bySet)
		}
		for si, s := range sets {
			tab := CVTable{Set: s.Name, Truth: truth.Name, ShippedConfidence: shippedConf}
			if s.Mode == CorpusMode {
				tab.Truth = truth.Name + corpusSuffix
			}
			isDup := s.isDup(truth)
			mi := 0
			lcs := slices.IndexFunc(cands, func(c Candidate) bool { return c.Name == "lcs" })
			for ci, c := range cands {
				fig := summarize(c.Name, c.Params, scores[si][ci])
				fig.pairTo(scores[si][ci], scores[si][lcs])
				fig.ECE = math.NaN()
				if c.Features != nil {
					bins := reliability(s.Scored, oofProb[si][mi], oofCount[si], isDup)
					fig.ECE = ece(bins)
					if mi == shipped {
						tab.Reliability = bins
					}
					mi++
				}
				tab.Figures = append(tab.Figures, fig)
			}
			if shippedKI >= 0 {
				for mi, m := range models {
					fig := summarize(m.Name, m.Params, byConf[si][mi][shippedKI])
					fig.pairTo(byConf[si][mi][shippedKI], byConf[si][shipped][shippedKI])
					fig.ECE = math.NaN()
					tab.AtShipped = append(tab.AtShipped, fig)
				}
			}
			for ki, c := range Confidences {
				fig := summarize(fmt.Sprintf("min_confidence %.2f", c), models[shipped].Params, byConf[si][shipped][ki])
				fig.ECE = math.NaN()
				tab.Confidence = append(tab.Confidence, fig)
			}
			floor := slices.IndexFunc(models, func(c Candidate) bool { return c.Name == FloorReference })
			for mi, m := range models {
				own := byConf[si][mi][ownKI[mi]]
				fig := summarize(m.Name, m.Params, own)
				fig.pairTo(own, byConf[si][shipped][ownKI[shipped]])
				fig.VsPaper = paired(own, scores[si][lcs])
				if floor >= 0 {
					fig.VsFloor = paired(own, byConf[si][floor][ownKI[floor]])
				}
				fig.ECE = math.NaN()
				tab.AtOwn = append(tab.AtOwn, fig)
				tab.OwnConfidences = append(tab.OwnConfidences, Confidences[ownKI[mi]])
				held := summarize(m.Name, m.Params, inFold[si][mi])
				held.pairTo(inFold[si][mi], scores[si][lcs])
				held.ECE = math.NaN()
				tab.InFold = append(tab.InFold, held)
			}
			rep.Tables = append(rep.Tables, tab)
		}
		fm := FitDefault(sets, truth, penalty)
		if shippedFound {
			fm.SeqFolds = coefSpread(shippedFits)
		}
		rep.Fitted = append(rep.Fitted, fm)
		incumbent := ""
		if shippedFound {
			incumbent = models[shipped].Name
		}
		sel, err := Select(rep.Tables, truth.Name, incumbent)
		if err != nil {
			sel = Selection{Truth: truth.Name, Error: err.Error()}
		}
		rep.Selected = append(rep.Selected, sel)
	}
	return rep
}

// splitFold splits every set's pairs by outer fold f of folds (each
// set's fold per group), as indexes into each set's Scored: a pair is
// tested when either of its documents' groups is in f and trained on
// when neither is.
func splitFold(sets []*CVSet, folds [][]int, f int) (trainIdx, tests [][]int) {
	trainIdx = make([][]int, len(sets))
	tests = make([][]int, len(sets))
	for si, s := range sets {
		for i := range s.Scored {
			if folds[si][s.groupA[i]] == f || folds[si][s.groupB[i]] == f {
				tests[si] = append(tests[si], i)
				continue
			}
			trainIdx[si] = append(trainIdx[si], i)
		}
	}
	return trainIdx, tests
}

// scoreAtEach scores the model m at each confidence of [Confidences] on
// the test pairs of s.
func scoreAtEach(s *CVSet, tests []int, gold []bool, m *similarity.Model) []foldScore {
	js, dups := judgeCandidates(len(tests), func(j int) (*ScoredPair, bool) { return &s.Scored[tests[j]], gold[j] }, m)
	out := make([]foldScore, len(Confidences))
	for ki, c := range Confidences {
		pt := js.at(c, dups)
		out[ki] = foldScore{pt.Precision, pt.Recall, pt.F1, pt.TP, pt.FP}
	}
	return out
}

// judgedPair is a candidate pair's probability under a model and its
// truth.
type judgedPair struct {
	prob float64
	dup  bool
}

// judgedPairs are the candidate pairs of a set of pairs, each probability
// computed once: only candidate pairs can be accepted, so a sweep over
// the confidences reads these alone (on llvm-docs a few thousand of a
// fold's tens of thousands of pairs).
type judgedPairs []judgedPair

// judgeCandidates returns the candidate pairs among n pairs, pair(i)
// giving the i-th and its truth, and the count of duplicates among all n.
func judgeCandidates(n int, pair func(int) (*ScoredPair, bool), m *similarity.Model) (judgedPairs, int) {
	var js judgedPairs
	dups := 0
	for i := range n {
		sp, dup := pair(i)
		if dup {
			dups++
		}
		if sp.Candidate {
			js = append(js, judgedPair{m.Probability(&sp.Scores), dup})
		}
	}
	return js, dups
}

// at returns the figures of accepting the pairs whose probability reaches
// c, of dups duplicates in all.
func (js judgedPairs) at(c float64, dups int) Point {
	tp, fp := 0, 0
	for _, x := range js {
		if x.prob >= c {
			if x.dup {
				tp++
			} else {
				fp++
			}
		}
	}
	return pointOf(c, tp, fp, dups-tp)
}

// FitDefault fits a purpose's models on every pair of the sets, as
// similarity's default decisions carry them: the features of
// similarity.DefaultModel on the alignment, Jaccard alone for pairs
// without a token sequence.
func FitDefault(sets []*CVSet, truth Truth, penalty float64) FittedModel {
	all := make([][]int, len(sets))
	for si, s := range sets {
		all[si] = make([]int, len(s.Scored))
		for i := range all[si] {
			all[si][i] = i
		}
	}
	shipped := similarity.DefaultModel(truth.Purpose)
	seq := shippedRules(fitPooled(sets, all, shipped.Seq.Features, truth, penalty), truth, shipped.Seq.NumbersVeto)
	return FittedModel{
		Truth:        truth.Name,
		Seq:          seq,
		NoSeq:        fitPooled(sets, all, []similarity.Feature{similarity.FeatureJaccard}, truth, penalty),
		NonCandidate: pooledNonCandidate(sets, all, truth),
	}
}

// outerRand is the stream that deals repeat r's outer folds.
func outerRand(seed uint64, r int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(r)))
}

// innerRand is the stream that deals the inner folds of repeat r's outer
// fold f (of k): a stream of its own, so the outer folds are the same as
// without the inner ones, and the inner folds are not the outer ones
// again.
func innerRand(seed uint64, r, k, f int) *rand.Rand {
	return rand.New(rand.NewPCG(^seed, uint64(r*k+f)))
}

// innerFolds is the number of inner folds the held-out protocol deals
// each training part into to set a model's confidence there.
const innerFolds = 5

// innerSplit is one inner fold of a training part: the candidate pairs of
// every set to fit on, each set's candidate pairs to judge (indexes into
// the set's Scored), and the
// duplicates among the pairs it judges that are not candidates (missed
// whatever the confidence).
type innerSplit struct {
	fitOn  [][]int
	judge  [][]int
	missed []int
}

// dealFolds deals each set's pairs into k stratified folds from rng, the
// sets in order, so every caller drawing from the same stream gets the
// same folds.
func dealFolds(sets []*CVSet, k int, rng *rand.Rand) [][]int {
	folds := make([][]int, len(sets))
	for si, s := range sets {
		folds[si] = s.folds(k, rng)
	}
	return folds
}

// eachFold calls fn for each outer fold of each repeat of a repeated
// stratified k-fold cross-validation of sets under seed (the folds of
// [CrossValidate] and [Calibrate]), in order, with the fold's training
// and test parts ([splitFold]) and the inner splits of its training part
// under t ([innerSplits], [innerRand]).
func eachFold(sets []*CVSet, k, repeats int, seed uint64, t Truth, fn func(trainIdx, tests [][]int, inner []innerSplit)) {
	for r := range repeats {
		folds := dealFolds(sets, k, outerRand(seed, r))
		for f := range k {
			trainIdx, tests := splitFold(sets, folds, f)
			fn(trainIdx, tests, innerSplits(sets, trainIdx, t, innerFolds, innerRand(seed, r, k, f)))
		}
	}
}

// innerSplits deals the training part (trainIdx, per set, indexes into
// its Scored) into k inner folds: every group of the set is shuffled and
// dealt as for the outer folds (stratified over the whole set; the outer
// test part's groups go unused), and a pair is judged in each inner fold
// that holds either of its groups and fitted on in the others. Only
// candidate pairs are kept, since only they are fitted and only they can
// be accepted; the others count as missed duplicates under t.
func innerSplits(sets []*CVSet, trainIdx [][]int, t Truth, k int, rng *rand.Rand) []innerSplit {
	folds := dealFolds(sets, k, rng)
	out := make([]innerSplit, k)
	for g := range out {
		out[g].fitOn = make([][]int, len(sets))
		out[g].judge = make([][]int, len(sets))
		out[g].missed = make([]int, len(sets))
	}
	for si, s := range sets {
		isDup := s.isDup(t)
		for _, i := range trainIdx[si] {
			sp := &s.Scored[i]
			fa, fb := folds[si][s.groupA[i]], folds[si][s.groupB[i]]
			for g := range out {
				switch {
				case (fa == g || fb == g) && sp.Candidate:
					out[g].judge[si] = append(out[g].judge[si], i)
				case fa == g || fb == g:
					if isDup(sp) {
						out[g].missed[si]++
					}
				case sp.Candidate:
					out[g].fitOn[si] = append(out[g].fitOn[si], i)
				}
			}
		}
	}
	return out
}

// nestedOwnConfidence sets a model's confidence on a training part the
// way the shipped confidences are set on all the data: [OwnConfidence]
// on the model's out-of-fold figures over the inner splits
// ([nestedFigures]). Read on the pairs the model was fitted on (round
// 10's held-out protocol) the precision is optimistic.
func nestedOwnConfidence(sets []*CVSet, splits []innerSplit, fs []similarity.Feature, veto bool, t Truth, penalty float64) float64 {
	return Confidences[OwnConfidence(nestedFigures(sets, splits, fs, veto, t, penalty))]
}

// nestedFigures fits the model on each inner split's pairs of every set,
// judges that split's pairs, and returns each set's figures at each of
// [Confidences] as the outer cross-validation summarizes its test folds:
// the mean over the inner splits, and the pooled precision.
func nestedFigures(sets []*CVSet, splits []innerSplit, fs []similarity.Feature, veto bool, t Truth, penalty float64) [][]CVFigure {
	byConf := make([][][]foldScore, len(sets)) // [set][confidence][split]
	for si := range sets {
		byConf[si] = make([][]foldScore, len(Confidences))
	}
	for _, sp := range splits {
		m := shippedRules(fitPooled(sets, sp.fitOn, fs, t, penalty), t, veto)
		for si, s := range sets {
			isDup := s.isDup(t)
			judged, dups := judgeCandidates(len(sp.judge[si]), func(j int) (*ScoredPair, bool) {
				p := &s.Scored[sp.judge[si][j]]
				return p, isDup(p)
			}, &m)
			for ki, c := range Confidences {
				pt := judged.at(c, dups+sp.missed[si])
				byConf[si][ki] = append(byConf[si][ki], foldScore{pt.Precision, pt.Recall, pt.F1, pt.TP, pt.FP})
			}
		}
	}
	bySet := make([][]CVFigure, len(sets))
	for si := range sets {
		bySet[si] = make([]CVFigure, len(Confidences))
		for ki := range Confidences {
			bySet[si][ki] = summarize("", len(fs)+1, byConf[si][ki])
		}
	}
	return bySet
}

// chooseConfidence returns the confidence of [Confidences] with the best
// F1 on the training pairs, averaged over the sets: one confidence for
// every set, as the shipped decision has.
func chooseConfidence(sets []*CVSet, train [][]int, m similarity.Model, t Truth) float64 {
	judged := make([]judgedPairs, len(sets))
	dups := make([]int, len(sets))
	for si, s := range sets {
		isDup := s.isDup(t)
		judged[si], dups[si] = judgeCandidates(len(train[si]), func(j int) (*ScoredPair, bool) {
			sp := &s.Scored[train[si][j]]
			return sp, isDup(sp)
		}, &m)
	}
	best, bestF1 := Confidences[0], -1.0
	for _, c := range Confidences {
		f1 := 0.0
		for si := range sets {
			f1 += judged[si].at(c, dups[si]).F1 / float64(len(sets))
		}
		if f1 > bestF1 {
			best, bestF1 = c, f1
		}
	}
	return best
}

// shippedRules returns m, a model fitted under t, with the fixed rules
// the shipped decision of t's purpose carries over its coefficients (the
// numbers-only rule, [similarity.Model.NumbersOnly]) and with the numbers
// veto when veto: a refit is judged as the decision it would ship as.
func shippedRules(m similarity.Model, t Truth, veto bool) similarity.Model {
	m.NumbersOnly = similarity.DefaultModel(t.Purpose).Seq.NumbersOnly
	m.NumbersVeto = veto
	return m
}

// fitPooled fits one model on the given pairs of every set (indexes into
// its Scored), the truth read per set's mode.
func fitPooled(sets []*CVSet, pairs [][]int, fs []similarity.Feature, t Truth, penalty float64) similarity.Model {
	relabelled := make([][]ScoredPair, len(sets))
	for si, s := range sets {
		isDup := s.isDup(t)
		relabelled[si] = make([]ScoredPair, 0, len(pairs[si]))
		for _, i := range pairs[si] {
			sp := s.Scored[i]
			if !sp.Candidate {
				continue
			}
			if isDup(&sp) {
				sp.Label = 1
			} else {
				sp.Label = 0
			}
			relabelled[si] = append(relabelled[si], sp)
		}
	}
	return FitModel(relabelled, fs, func(sp *ScoredPair) bool { return sp.Label == 1 }, penalty)
}

// pooledNonCandidate is [nonCandidateRate] over the given pairs of every
// set (indexes into its Scored), the truth read per set's mode: the share
// of duplicates among the pairs that fail the candidate test.
func pooledNonCandidate(sets []*CVSet, pairs [][]int, t Truth) float64 {
	relabelled := make([][]ScoredPair, len(sets))
	for si, s := range sets {
		isDup := s.isDup(t)
		for _, i := range pairs[si] {
			sp := s.Scored[i]
			if sp.Candidate {
				continue
			}
			dup := isDup(&sp)
			sp.Label = 0
			if dup {
				sp.Label = 1
			}
			relabelled[si] = append(relabelled[si], sp)
		}
	}
	return nonCandidateRate(relabelled, func(sp *ScoredPair) bool { return sp.Label == 1 })
}

// pairedDelta returns the mean and sample standard deviation of a's F1
// minus b's, fold by fold.
func pairedDelta(a, b []foldScore) (mean, sd float64) {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i].f - b[i].f
	}
	return meanSD(d)
}

// pairTo sets f's DeltaF1, SDDelta, Better and Worse against the
// reference's folds ref.
func (f *CVFigure) pairTo(folds, ref []foldScore) {
	f.DeltaF1, f.SDDelta = pairedDelta(folds, ref)
	f.Better, f.Worse = 0, 0
	for i := range folds {
		switch d := folds[i].f - ref[i].f; {
		case d > 1e-12:
			f.Better++
		case d < -1e-12:
			f.Worse++
		}
	}
}

// paired returns folds' F1 against the reference's ref, fold by fold.
func paired(folds, ref []foldScore) *Paired {
	var f CVFigure
	f.pairTo(folds, ref)
	return &Paired{DeltaF1: f.DeltaF1, SD: f.SDDelta, Better: f.Better, Worse: f.Worse}
}

// meanSD returns the mean and the sample standard deviation of xs.
func meanSD(xs []float64) (mean, sd float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x / n
	}
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	if n > 1 {
		sd = math.Sqrt(sd / (n - 1))
	}
	return mean, sd
}

func summarize(name string, params int, fs []foldScore) CVFigure {
	fig := CVFigure{Candidate: name, Params: params}
	n := float64(len(fs))
	tp, fp := 0, 0
	for _, f := range fs {
		tp += f.tp
		fp += f.fp
		fig.Precision += f.p / n
		fig.Recall += f.r / n
		fig.F1 += f.f / n
	}
	fig.PooledPrecision = 1
	if tp+fp > 0 {
		fig.PooledPrecision = float64(tp) / float64(tp+fp)
	}
	fig.FoldPrecision = make([]float64, len(fs))
	fig.FoldF1 = make([]float64, len(fs))
	for i, f := range fs {
		fig.SDF1 += (f.f - fig.F1) * (f.f - fig.F1)
		fig.SDP += (f.p - fig.Precision) * (f.p - fig.Precision)
		fig.FoldPrecision[i], fig.FoldF1[i] = f.p, f.f
	}
	if n > 1 {
		fig.SDF1 = math.Sqrt(fig.SDF1 / (n - 1))
		fig.SDP = math.Sqrt(fig.SDP / (n - 1))
	}
	return fig
}

// reliability bins the out-of-fold probabilities of the candidate pairs
// (mean over the repeats that tested each pair) into 10 equal-width bins.
func reliability(scored []ScoredPair, probSum []float64, count []int, isDup func(*ScoredPair) bool) []ReliabilityBin {
	bins := make([]ReliabilityBin, 10)
	for i := range bins {
		bins[i].Lo, bins[i].Hi = float64(i)/10, float64(i+1)/10
	}
	for i := range scored {
		if !scored[i].Candidate || count[i] == 0 {
			continue
		}
		p := probSum[i] / float64(count[i])
		b := min(int(p*10), 9)
		bins[b].Pairs++
		bins[b].MeanProb += p
		if isDup(&scored[i]) {
			bins[b].Positives++
		}
	}
	for i := range bins {
		if bins[i].Pairs > 0 {
			bins[i].MeanProb /= float64(bins[i].Pairs)
			bins[i].DupShare = float64(bins[i].Positives) / float64(bins[i].Pairs)
		}
	}
	return bins
}

// ece is the expected calibration error: the pair-weighted mean gap
// between a bin's mean probability and its share of duplicates.
func ece(bins []ReliabilityBin) float64 {
	total, sum := 0, 0.0
	for _, b := range bins {
		total += b.Pairs
		sum += float64(b.Pairs) * math.Abs(b.MeanProb-b.DupShare)
	}
	if total == 0 {
		return math.NaN()
	}
	return sum / float64(total)
}
