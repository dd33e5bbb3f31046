package similarity

// Models of the default decisions, fitted by `winnow eval -fit` (package
// eval, [eval.Fit]) on the three dev sets of ../shared/eval: webis-ecir20-dev,
// copycat-dev and llvm-docs, each set weighted equally, L2 penalty
// eval.FitPenalty. The features and the default confidences were chosen
// by repeated, stratified 5-fold cross-validation (`winnow eval -cv`,
// README.md): LCS ratio and divergence beat every single score and every
// larger feature set by more than the fold-to-fold spread or tied with
// fewer parameters. eval's TestFittedModels refits them from the data
// and fails when they drift.

// PurposeModel is what the default decision of one [Purpose] uses.
type PurposeModel struct {
	// Seq decides a candidate pair whose sides both carry a token
	// sequence.
	Seq Model
	// NoSeq decides a candidate pair when a side has no sequence (pages
	// signed with MaxSeq < 0, a cluster service without keep_seq): it
	// reads the cheap scores only.
	NoSeq Model
	// MinConfidence is the default probability a pair needs to be
	// decided a duplicate.
	MinConfidence float64
	// NonCandidate is the probability given to a pair that fails the
	// candidate test: the share of duplicates among such pairs of the
	// dev sets, each set weighted equally.
	NonCandidate float64
}

// DefaultModel returns the fitted models of the purpose p.
func DefaultModel(p Purpose) *PurposeModel {
	if p == PurposeRemove {
		return &removeModel
	}
	return &groupModel
}

// groupModel: `winnow eval -cv` (README.md) on the three dev sets. Its
// min_confidence is the smallest of eval.Confidences whose
// cross-validated precision on webis-ecir20-dev is at least 0.95.
var groupModel = PurposeModel{
	Seq: Model{
		Features:  []Feature{FeatureLCS, FeatureDivergence},
		Weights:   []float64{7.9884, -2.2375},
		Intercept: -4.3286,
	},
	NoSeq: Model{
		Features:  []Feature{FeatureJaccard},
		Weights:   []float64{8.6059},
		Intercept: -5.2704,
	},
	MinConfidence: 0.7,
	NonCandidate:  0.0613,
}

// removeModel: as groupModel, for label 3 against every other label
// (llvm-docs' duplicates, one source in two templates, count as
// content-equivalent). The model never exceeds 0.92: about one pair in
// ten that no score tells from an exact copy was judged merely
// near-duplicate (an edited price, a comment).
var removeModel = PurposeModel{
	Seq: Model{
		Features:  []Feature{FeatureLCS, FeatureDivergence},
		Weights:   []float64{10.6710, -4.9653},
		Intercept: -8.3103,
	},
	NoSeq: Model{
		Features:  []Feature{FeatureJaccard},
		Weights:   []float64{12.3269},
		Intercept: -10.0357,
	},
	MinConfidence: 0.9,
	NonCandidate:  0,
}
