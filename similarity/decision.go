package similarity

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Thresholds of the default [Decision], in one place so they can be tuned
// on labelled data. The candidate test is an OR of cheap tests chosen for
// recall; the verification is precise and costly.
const (
	// DefaultCandidateSimhash is the largest simhash distance of a
	// candidate pair (Moz uses 5 as a final test; a candidate test can be
	// looser).
	DefaultCandidateSimhash = 16
	// DefaultCandidateContain is the smallest chance-corrected Bloom
	// containment, either direction, of a candidate pair. The test is
	// part of the default candidate test only with
	// [Decision.Containment]: otherwise a pair found by containment alone
	// is one page inside a much longer one, whose LCS ratio (at most the
	// ratio of the lengths) fails the verification anyway.
	DefaultCandidateContain = 0.5
	// DefaultCandidateSupershingles is the fewest matching supershingles
	// of a candidate pair.
	DefaultCandidateSupershingles = 1
	// DefaultCandidateJaccard is the smallest min-hash Jaccard estimate of
	// a candidate pair.
	DefaultCandidateJaccard = 0.3
	// DefaultVerifyCentral is the smallest LCS central ratio of a verified
	// pair.
	DefaultVerifyCentral = 0.7
	// DefaultCentralCoverage is the smallest fraction of each document
	// that the central part must span for the central ratio to count.
	DefaultCentralCoverage = 0.5
	// DefaultGateSimhash is the largest simhash distance of any candidate
	// pair, checked before the candidate tests: unrelated texts lie at
	// 32 ± 3 bits of 64, the farthest near-duplicate of both dev sets at
	// 26, and the gate spares the other tests for most unrelated pairs.
	DefaultGateSimhash = 30
	// DefaultVerifyLCS is the smallest LCS ratio of a pair verified by
	// [MethodLCSLocal], the default verification, when its divergence is
	// at most DefaultMaxDivergence. Tuned on webis-ecir20-dev and
	// llvm-docs (dev splits): see docs/quality.md.
	DefaultVerifyLCS = 0.56
	// DefaultStrongLCS is the LCS ratio from which a pair is verified
	// whatever its divergence.
	DefaultStrongLCS = 0.77
	// DefaultMaxDivergence is the largest divergence (share of unmatched
	// tokens in the densest window, [Scores.Divergence]) of a pair
	// verified below DefaultStrongLCS.
	DefaultMaxDivergence = 0.40
	// DefaultVerifyJaccard is the smallest min-hash Jaccard estimate of a
	// pair verified without token sequences.
	DefaultVerifyJaccard = 0.7
	// DefaultAcceptJaccard is the smallest min-hash Jaccard estimate of a
	// candidate pair accepted as a duplicate without verification (see
	// [Decision.Accept]). On both dev sets (webis-ecir20-dev, llvm-docs)
	// no pair at or above it is labelled distinct except pairs that every
	// method calls duplicate.
	DefaultAcceptJaccard = 0.9
	// DefaultModelAccept is the probability of the cheap-score model
	// ([PurposeModel.NoSeq]) from which a model decision accepts a
	// candidate pair without the LCS (unless Accept is MethodNone): the
	// exact and near-exact mirrors of a page, whose alignment would cost
	// a pass over both texts to confirm what min-hash already says. For
	// the group decision it is min-hash Jaccard >= 0.955; the remove
	// decision's cheap model never reaches it.
	DefaultModelAccept = 0.95
	// DefaultDecisionMinTokens is the fewest tokens a document needs to be
	// compared at all: below it, simhash and min-hash carry too little to
	// judge and a match would be noise.
	DefaultDecisionMinTokens = 10
)

// Thresholds of the paper methods, for single-method decisions.
const (
	// PaperSimhash is Moz's largest simhash distance, 5 of 64 bits.
	PaperSimhash = 5
	// PaperBloom is Jain's Bloom match ratio, 70%.
	PaperBloom = 0.70
	// PaperSupershingles is Fetterly's "very similar": 2 of 6.
	PaperSupershingles = 2
)

// Method is one similarity test. The zero value, MethodDefault, stands for
// the default test of the place where it is used.
type Method uint8

// Methods. Each compares one score of [Scores] with a threshold.
const (
	// MethodDefault selects the default test of a [Decision] field.
	MethodDefault Method = iota
	// MethodNone is no test: as a candidate test every pair passes; as a
	// verification the candidate test alone decides; as a fallback a pair
	// that cannot be verified is not a duplicate.
	MethodNone
	// MethodSimhash: SimhashDistance <= threshold (Moz: 5).
	MethodSimhash
	// MethodBloom: max(BloomAB, BloomBA) >= threshold (Jain: 0.70).
	MethodBloom
	// MethodContainment: max(ContainAB, ContainBA) >= threshold, the
	// chance-corrected Bloom containment.
	MethodContainment
	// MethodSupershingles: Supershingles >= threshold (Fetterly: 2).
	MethodSupershingles
	// MethodJaccard: Jaccard >= threshold.
	MethodJaccard
	// MethodFingerprints: Fingerprints >= threshold (Huang's
	// perhaps-similar sets).
	MethodFingerprints
	// MethodLCS: LCS ratio >= threshold (Huang); needs Seq on both sides.
	MethodLCS
	// MethodLCSCentral: central LCS ratio >= threshold with both
	// coverages >= [Decision.MinCoverage]; needs Seq on both sides.
	MethodLCSCentral
	// MethodLCSLocal: LCS ratio >= [Decision.StrongLCS], or LCS ratio >=
	// threshold with divergence <= [Decision.MaxDivergence]: a pair whose
	// differences are spread thin (edits, another head and tail) needs a
	// lower ratio than one whose differences form one block inside a
	// shared frame (another article in the same template). Needs Seq on
	// both sides. The default verification until the fitted models.
	MethodLCSLocal
	// MethodModel: the probability of the decision's [Model] (see
	// [Decision.Purpose]) >= threshold, a confidence in (0, 1). The
	// default verification: its threshold is the purpose's
	// [PurposeModel.MinConfidence] unless set.
	MethodModel
)

var methodNames = [...]string{"default", "none", "simhash", "bloom", "containment", "supershingles", "jaccard", "fingerprints", "lcs", "lcs-central", "lcs-local", "model"}

// String returns the method's short name, e.g. "simhash", "lcs-central".
func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return "method(" + strconv.Itoa(int(m)) + ")"
}

// ParseMethod returns the method with the given short name ("simhash",
// "bloom", "supershingles", "jaccard", "lcs", "lcs-central", "model",
// ...).
func ParseMethod(name string) (Method, error) {
	for i, n := range methodNames {
		if n == name && i != int(MethodDefault) && i != int(MethodNone) {
			return Method(i), nil
		}
	}
	return MethodDefault, fmt.Errorf("similarity: unknown method %q", name)
}

// DefaultThreshold is the threshold of a single-method decision by m when
// none is given: the paper's where it publishes one (Moz, Jain,
// Fetterly), else the threshold m has in the default decision.
func (m Method) DefaultThreshold() float64 {
	switch m {
	case MethodSimhash:
		return PaperSimhash
	case MethodBloom:
		return PaperBloom
	case MethodSupershingles:
		return PaperSupershingles
	case MethodContainment:
		return DefaultCandidateContain
	case MethodJaccard:
		return DefaultVerifyJaccard
	case MethodFingerprints:
		return 1
	case MethodLCS:
		return DefaultStrongLCS
	case MethodLCSCentral:
		return DefaultVerifyCentral
	case MethodLCSLocal:
		return DefaultVerifyLCS
	case MethodModel:
		return groupModel.MinConfidence
	}
	return 0
}

// needsSeq reports whether the method compares token sequences.
// MethodModel does not: it falls back to its cheap-score model by itself.
func (m Method) needsSeq() bool {
	return m == MethodLCS || m == MethodLCSCentral || m == MethodLCSLocal
}

// Test is a method with its threshold. The threshold is used as given,
// zero included.
type Test struct {
	Method    Method
	Threshold float64
}

// TestResult is the outcome of one [Test] on one pair.
type TestResult struct {
	Test
	// Value is the score the test compared; for MethodLCSCentral Coverage
	// holds min(CoverageA, CoverageB) and MinCoverage its threshold.
	Value                 float64
	Coverage, MinCoverage float64
	// For MethodLCSLocal: the divergence, its bound, and the strong
	// ratio that passes whatever the divergence.
	Divergence, MaxDivergence, Strong float64
	// Pass reports that the test passed.
	Pass bool
	// Cut reports an LCS that exited early: Value is an upper bound.
	Cut bool
	// Fallback reports a verification by the fallback test because a
	// side had no token sequence.
	Fallback bool
	// Purpose is the definition of a duplicate a MethodModel test
	// decided; Value is then its probability.
	Purpose Purpose
}

// String returns the result as a phrase, e.g. "simhash distance 3 <= 16"
// or "LCS central ratio 0.91 >= 0.70, coverage 0.95 >= 0.50".
func (r TestResult) String() string {
	cmp := func(pass bool, ge bool) string {
		switch {
		case ge && pass:
			return ">="
		case ge:
			return "<"
		case pass:
			return "<="
		}
		return ">"
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
	d := func(x float64) string { return strconv.Itoa(int(x)) }
	switch r.Method {
	case MethodNone:
		return "no test"
	case MethodSimhash:
		return "simhash distance " + d(r.Value) + " " + cmp(r.Pass, false) + " " + d(r.Threshold)
	case MethodBloom:
		return "bloom match " + f(r.Value) + " " + cmp(r.Pass, true) + " " + f(r.Threshold)
	case MethodContainment:
		return "bloom containment " + f(r.Value) + " " + cmp(r.Pass, true) + " " + f(r.Threshold)
	case MethodSupershingles:
		return "supershingles " + d(r.Value) + " " + cmp(r.Pass, true) + " " + d(r.Threshold)
	case MethodJaccard:
		return "jaccard " + f(r.Value) + " " + cmp(r.Pass, true) + " " + f(r.Threshold)
	case MethodFingerprints:
		return "shared fingerprints " + d(r.Value) + " " + cmp(r.Pass, true) + " " + d(r.Threshold)
	case MethodLCS:
		if r.Cut {
			return "LCS ratio < " + f(r.Threshold) + " (early exit)"
		}
		return "LCS ratio " + f(r.Value) + " " + cmp(r.Pass, true) + " " + f(r.Threshold)
	case MethodLCSLocal:
		switch {
		case r.Cut:
			return "LCS ratio < " + f(r.Threshold) + " (early exit)"
		case r.Value >= r.Strong:
			return "LCS ratio " + f(r.Value) + " >= " + f(r.Strong)
		case r.Value < r.Threshold:
			return "LCS ratio " + f(r.Value) + " < " + f(r.Threshold)
		}
		return "LCS ratio " + f(r.Value) + " >= " + f(r.Threshold) + " (< " + f(r.Strong) + "), divergence " +
			f(r.Divergence) + " " + cmp(r.Pass, false) + " " + f(r.MaxDivergence)
	case MethodModel:
		p := "P(" + r.Purpose.Definition() + ") "
		v, t := probabilityPair(r.Value, r.Threshold)
		if r.Cut {
			return p + "<= " + v + " < " + t + " (LCS exited early)"
		}
		return p + v + " " + cmp(r.Pass, true) + " " + t
	case MethodLCSCentral:
		if r.Cut {
			return "LCS central ratio < " + f(r.Threshold) + " (early exit)"
		}
		ratioOK := r.Value >= r.Threshold
		covOK := r.Coverage >= r.MinCoverage
		return "LCS central ratio " + f(r.Value) + " " + cmp(ratioOK, true) + " " + f(r.Threshold) +
			", coverage " + f(r.Coverage) + " " + cmp(covOK, true) + " " + f(r.MinCoverage)
	}
	return r.Method.String() + " " + f(r.Value)
}

// probabilityPair formats a probability and its threshold with two
// decimals, or as many more as the threshold has (0.925), or as it takes
// for the two to differ when they do (up to six): "0.8997 < 0.90", never
// "0.90 < 0.90".
func probabilityPair(v, t float64) (string, string) {
	f := func(x float64, d int) string { return strconv.FormatFloat(x, 'f', d, 64) }
	td := 2
	if _, frac, ok := strings.Cut(strconv.FormatFloat(t, 'f', -1, 64), "."); ok {
		td = min(max(len(frac), 2), 6)
	}
	d := td
	for ; d < 6 && v != t && f(v, d) == f(t, d); d++ {
	}
	return f(v, d), f(t, td)
}

// testParams are the Decision fields that some tests read besides their
// threshold.
type testParams struct {
	minCov, strong, maxDiv float64
}

// eval runs t on the scores s.
func (t Test) eval(s *Scores, p testParams) TestResult {
	minCov := p.minCov
	r := TestResult{Test: t}
	switch t.Method {
	case MethodNone:
		r.Pass = true
	case MethodSimhash:
		r.Value = float64(s.SimhashDistance)
		r.Pass = r.Value <= t.Threshold
	case MethodBloom:
		r.Value = max(s.BloomAB, s.BloomBA)
	case MethodContainment:
		r.Value = max(s.ContainAB, s.ContainBA)
	case MethodSupershingles:
		r.Value = float64(s.Supershingles)
	case MethodJaccard:
		r.Value = s.Jaccard
	case MethodFingerprints:
		r.Value = float64(s.Fingerprints)
	case MethodLCS:
		r.Value, r.Cut = s.LCS, s.LCSCut
	case MethodLCSLocal:
		r.Value, r.Cut = s.LCS, s.LCSCut
		r.Divergence, r.MaxDivergence, r.Strong = s.Divergence, p.maxDiv, p.strong
		r.Pass = s.HasLCS && !s.LCSCut && (r.Value >= p.strong || r.Value >= t.Threshold && r.Divergence <= p.maxDiv)
		return r
	case MethodLCSCentral:
		r.Value, r.Cut = s.Central, s.LCSCut
		r.Coverage, r.MinCoverage = min(s.CoverageA, s.CoverageB), minCov
		r.Pass = s.HasLCS && !s.LCSCut && r.Value >= t.Threshold && r.Coverage >= minCov
		return r
	}
	if t.Method == MethodModel {
		return r // decided by Decide, which knows the model
	}
	if t.Method != MethodNone && t.Method != MethodSimhash {
		r.Pass = r.Value >= t.Threshold // false for NaN
		if t.Method.needsSeq() && (!s.HasLCS || s.LCSCut) {
			r.Pass = false
		}
	}
	return r
}

// Decision decides whether two signatures are duplicates for a
// [Purpose]: a cheap candidate test (an OR of tests) and, for candidate
// pairs, a verification test, unless a strong-accept test already decides.
// The zero value is the default near-duplicate decision (PurposeGroup): no
// candidate beyond simhash distance [DefaultGateSimhash]; candidate when
// simhash distance <= [DefaultCandidateSimhash], or supershingles >=
// [DefaultCandidateSupershingles], or Jaccard >= [DefaultCandidateJaccard],
// or (with Containment) Bloom containment >= [DefaultCandidateContain];
// then verified by [MethodModel]: the purpose's fitted [Model] over the
// LCS ratio and divergence ([DefaultModel]) gives a probability, and the
// pair is a duplicate when it reaches the purpose's
// [PurposeModel.MinConfidence]. When a side has no Seq the purpose's
// cheap-score model decides instead. Every verdict of a model decision
// carries its probability ([Verdict.Probability]). A Decision is a value;
// it is safe for concurrent use as long as Candidate and Models are not
// modified.
type Decision struct {
	// Purpose is the definition of a duplicate: PurposeGroup
	// (near-duplicates, the zero value) or PurposeRemove
	// (content-equivalent pages). It selects the default models.
	Purpose Purpose
	// Models are the models of [MethodModel]; nil means
	// DefaultModel(Purpose).
	Models *PurposeModel
	// Candidate is the candidate test: a pair is a candidate when any
	// test passes. nil means the default tests above.
	Candidate []Test
	// Accept is the strong-accept test: a candidate pair that passes it
	// is a duplicate without verification, and the Verdict says so
	// ([StepAccept]). It runs on the cheap scores only, so an LCS method
	// here never passes. MethodDefault means Jaccard >=
	// [DefaultAcceptJaccard] for a verification other than MethodModel
	// and none for MethodModel, whose probability needs the alignment;
	// MethodNone disables the shortcut (as [SingleMethod] does). It spares the LCS for most real duplicates,
	// the exact and near-exact mirrors of a page, at no loss: on both dev
	// sets (webis-ecir20-dev, llvm-docs) no pair with min-hash Jaccard >=
	// 0.9 is labelled distinct except pairs that every method calls
	// duplicate. It has no effect when Verify is MethodNone.
	Accept Test
	// Verify is the verification of candidate pairs. MethodDefault means
	// [MethodModel] with the purpose's MinConfidence; MethodNone means
	// none.
	Verify Test
	// Fallback verifies when Verify needs token sequences and a side has
	// none. MethodDefault means Jaccard >= DefaultVerifyJaccard; MethodNone
	// means such a pair is not a duplicate.
	Fallback Test
	// MinTokens is the fewest tokens each document needs; zero means
	// [DefaultDecisionMinTokens]. Empty signatures ([Signature.Empty])
	// never match whatever MinTokens says.
	MinTokens int
	// MinCoverage is the coverage MethodLCSCentral requires; zero means
	// [DefaultCentralCoverage].
	MinCoverage float64
	// Gate is the largest simhash distance of a candidate pair, tested
	// before the candidate tests; zero means [DefaultGateSimhash],
	// negative no gate.
	Gate int
	// StrongLCS and MaxDivergence parameterize MethodLCSLocal; zero means
	// [DefaultStrongLCS] and [DefaultMaxDivergence].
	StrongLCS, MaxDivergence float64
	// Containment makes a detected containment ([Scores.Containment]) of
	// a candidate pair a duplicate, as Jain groups included pages. Off by
	// default: the Verdict reports the relation either way.
	Containment bool
	// MaxD caps the LCS edit distance (see [CompareOptions.MaxD]).
	MaxD int
	// Central sets the central part's parameters.
	Central CentralOptions
	// Exact aligns every verified pair to the end instead of stopping
	// once the LCS ratio can no longer reach the verification's
	// threshold, so that Probability (and Verify.Value) is the pair's,
	// never an upper bound: for reports a person reads (`winnow compare`,
	// `dedup`'s output lines), at the cost of a full alignment for the
	// pairs it rejects. An LCS cut by MaxD is still a bound.
	Exact bool
}

// SingleMethod returns a decision by one test alone, for comparing the
// paper methods: e.g. SingleMethod(MethodSimhash, PaperSimhash),
// SingleMethod(MethodBloom, PaperBloom), SingleMethod(MethodSupershingles,
// PaperSupershingles). LCS methods verify every pair and do not fall back
// to another test when a side has no Seq. No single-method decision has
// the strong-accept shortcut ([Decision.Accept] is MethodNone).
func SingleMethod(m Method, threshold float64) Decision {
	t := Test{Method: m, Threshold: threshold}
	none := Test{Method: MethodNone}
	if m == MethodModel {
		return Decision{Verify: t}
	}
	if m.needsSeq() {
		return Decision{Candidate: []Test{none}, Accept: none, Verify: t, Fallback: none, Gate: -1}
	}
	return Decision{Candidate: []Test{t}, Accept: none, Verify: none, Gate: -1}
}

// defaultCandidate is the default candidate test, cheapest first.
func defaultCandidate(i int) Test {
	switch i {
	case 0:
		return Test{MethodSimhash, DefaultCandidateSimhash}
	case 1:
		return Test{MethodSupershingles, DefaultCandidateSupershingles}
	case 2:
		return Test{MethodJaccard, DefaultCandidateJaccard}
	}
	return Test{MethodContainment, DefaultCandidateContain}
}

const defaultCandidates = 4

func (d *Decision) candidates() int {
	switch {
	case d.Candidate != nil:
		return len(d.Candidate)
	case d.Containment:
		return defaultCandidates
	}
	return defaultCandidates - 1 // containment comes last
}

func (d *Decision) candidate(i int) Test {
	if d.Candidate == nil {
		return defaultCandidate(i)
	}
	return d.Candidate[i]
}

func (d *Decision) accept() Test {
	if d.Accept.Method == MethodDefault {
		if d.verify().Method == MethodModel {
			return Test{Method: MethodNone}
		}
		return Test{MethodJaccard, DefaultAcceptJaccard}
	}
	return d.Accept
}

func (d *Decision) verify() Test {
	if d.Verify.Method == MethodDefault {
		return Test{MethodModel, d.models().MinConfidence}
	}
	return d.Verify
}

func (d *Decision) models() *PurposeModel {
	if d.Models != nil {
		return d.Models
	}
	return DefaultModel(d.Purpose)
}

// PurposeModels returns the models a model decision uses: Models, or
// DefaultModel(Purpose).
func (d Decision) PurposeModels() *PurposeModel { return d.models() }

// IsModel reports whether the decision verifies by a fitted model, so
// its verdicts carry a probability.
func (d Decision) IsModel() bool {
	return d.verify().Method == MethodModel
}

// MinConfidence returns the probability a pair needs under a model
// decision, NaN for another decision.
func (d Decision) MinConfidence() float64 {
	if vt := d.verify(); vt.Method == MethodModel {
		return vt.Threshold
	}
	return math.NaN()
}

func (d *Decision) fallback() Test {
	if d.Fallback.Method == MethodDefault {
		return Test{MethodJaccard, DefaultVerifyJaccard}
	}
	return d.Fallback
}

// IsCandidate reports whether a and b pass the decision's first steps:
// both long enough, within the simhash gate, and the candidate test. It
// costs the cheap scores only.
func (d Decision) IsCandidate(a, b *Signature) bool {
	if d.tooShort(a) || d.tooShort(b) {
		return false
	}
	return d.quickCandidate(a, b, nil, nil)
}

// wantsNumbers reports whether Decide compares the pages' numbers
// ([Scores.NumbersDiffer]) on a candidate pair: for a remove decision,
// whose explanation says what numbers differ, a model that reads them,
// and an Exact decision (reports).
func (d *Decision) wantsNumbers() bool {
	if d.Purpose == PurposeRemove || d.Exact {
		return true
	}
	if d.verify().Method != MethodModel {
		return false
	}
	pm := d.models()
	return pm.Seq.usesNumbers() || pm.NoSeq.usesNumbers()
}

// wantsLinks reports whether Decide compares the pages' link targets
// ([Scores.LinksDiffer]) on a candidate pair: when the purpose's model
// refuses pairs linking elsewhere ([PurposeModel.RefuseLinks]) or reads
// [FeatureLinks].
func (d *Decision) wantsLinks() bool {
	pm := d.models()
	return d.Purpose == PurposeRemove && pm.RefuseLinks > 0 || pm.Seq.uses(FeatureLinks) || pm.NoSeq.uses(FeatureLinks)
}

func (d *Decision) minTokens() int {
	if d.MinTokens <= 0 {
		return DefaultDecisionMinTokens
	}
	return d.MinTokens
}

// gate returns the simhash gate, negative for none.
func (d *Decision) gate() int {
	if d.Gate == 0 {
		return DefaultGateSimhash
	}
	return d.Gate
}

func (d *Decision) params() testParams {
	return testParams{
		minCov: d.minCoverage(),
		strong: cmp.Or(d.StrongLCS, DefaultStrongLCS),
		maxDiv: cmp.Or(d.MaxDivergence, DefaultMaxDivergence),
	}
}

func (d *Decision) minCoverage() float64 {
	if d.MinCoverage <= 0 {
		return DefaultCentralCoverage
	}
	return d.MinCoverage
}

// Step is the step of a decision that decided it.
type Step uint8

// Steps.
const (
	// StepSkip: a side was empty or too short; nothing was compared.
	StepSkip Step = iota
	// StepCandidate: the candidate test decided (it failed, or there is
	// no verification).
	StepCandidate
	// StepVerify: the verification (or its fallback) decided.
	StepVerify
	// StepAccept: the strong-accept test ([Decision.Accept]) passed on a
	// candidate pair, which is a duplicate without verification;
	// [Verdict.Verify] holds the accept test's result.
	StepAccept
)

// String returns "skip", "candidate", "verify" or "accept".
func (s Step) String() string {
	switch s {
	case StepSkip:
		return "skip"
	case StepCandidate:
		return "candidate"
	case StepVerify:
		return "verify"
	case StepAccept:
		return "accept"
	}
	return "step(" + strconv.Itoa(int(s)) + ")"
}

// Verdict is the decision on one pair (a, b) with everything needed to
// explain it.
type Verdict struct {
	// Duplicate reports that a and b are near-duplicates.
	Duplicate bool
	// Relation is RelationDuplicate or RelationNone as Duplicate says,
	// except that a containment detected on a candidate pair is reported
	// as RelationContains or RelationContained whether or not it counts
	// as a duplicate (see [Decision.Containment]).
	Relation Relation
	// Step is the step that decided.
	Step Step
	// Short is non-zero when Step is StepSkip: 'a' or 'b' names the side
	// that was empty or had fewer than MinTokens tokens.
	Short byte
	// ShortTokens is the token count of the short side when Step is
	// StepSkip.
	ShortTokens int
	// MinTokens is the token minimum that was applied.
	MinTokens int
	// Capped is non-zero when a remove decision refused a pair it would
	// have accepted because a side ('a' or 'b') was cut at the signing
	// caps ([Signature.Capped]): its end is unread.
	Capped byte
	// SeqCut is non-zero when a remove decision whose model refuses cut
	// sequences ([PurposeModel.RefuseSeqCut]) refused a pair it would
	// have accepted because the word sequence of a side ('a' or 'b') was
	// cut ([Signature.SeqCut]): its end is not aligned.
	SeqCut byte
	// LinksRefused is non-zero when a remove decision whose model refuses
	// pairs linking elsewhere ([PurposeModel.RefuseLinks]) refused a pair
	// it would have accepted: the limit its link targets differ by more
	// than ([Scores.LinksDiffer]).
	LinksRefused float64
	// Candidates holds the result of each candidate test, in order.
	Candidates []TestResult
	// Verify is the verification result, or the strong-accept test's
	// result when Step is StepAccept; its Method is MethodNone when
	// neither ran.
	Verify TestResult
	// NoSeq reports that verification needed token sequences that a side
	// lacked and no fallback was configured.
	NoSeq bool
	// Gated reports that the pair's simhash distance exceeded the gate
	// ([Decision.Gate]): no candidate test ran.
	Gated bool
	// Gate is the gate that was applied, negative for none.
	Gate int
	// Scores holds the scores; the LCS scores only when verification
	// needed them.
	Scores Scores
	// Purpose is the decision's definition of a duplicate.
	Purpose Purpose
	// Probability is, under a model decision ([MethodModel]), the
	// calibrated probability that the pair is a duplicate by Purpose's
	// definition: the model's for a candidate pair, an upper bound when
	// the LCS exited early (Verify.Cut), the dev sets' share of
	// duplicates among non-candidates for a pair that failed the
	// candidate test, 0 for a pair too short to compare. NaN under a
	// single-method decision, which has no calibrated probability.
	Probability float64
	// Model is the model that gave Probability to a candidate pair, nil
	// otherwise.
	Model *Model
	// Calibration is the model's [PurposeModel.Calibration] under a
	// calibrated model decision, else empty.
	Calibration string
	// NumberPairs are the numbers that differ between the pages
	// ([NumberPairs]), for the explanation: kept by an Exact decision
	// when [Scores.NumbersDiffer] is positive, else nil (the count alone
	// is explained).
	NumberPairs []NumberPair
	// Aligned names the alignment whose LCS scores Scores holds when it
	// ran to its end, for another decision on the same pair to reuse
	// ([Decision.DecideAfter]); its zero value: none did.
	Aligned Alignment
}

// Alignment names an alignment of a pair's word sequences that ran to its
// end ([LCSStageAlignment], not cut), by what shapes its LCS scores: the
// central part's options and the sequences' edit distance. Any other
// alignment of the pair with the same central options that also runs to
// its end gives the same scores: the early-exit bound
// ([CompareOptions.MinRatio], [CompareOptions.MinCoverage],
// [CompareOptions.MaxD]) only stops an alignment whose edit distance
// exceeds it, and the path found below it is a function of the sequences
// and their distance ([lcsScratch.myersRounds], [lcsScratch.bitCount]).
// The zero value (Done false) names no alignment.
type Alignment struct {
	// Done reports a finished alignment.
	Done bool
	// Distance is the edit distance of the two word sequences,
	// |a| + |b| - 2·|LCS|.
	Distance int
	// Central is its [CompareOptions.Central].
	Central CentralOptions
}

// Decide compares a and b and decides whether they are near-duplicates.
// Empty signatures and those with fewer than MinTokens tokens never match
// anything, not even each other; the Verdict says so. Cheap scores are
// always computed; the LCS only when the verification needs it and the
// pair passed the candidate test but not the strong-accept test. Safe for
// concurrent use.
func (d Decision) Decide(a, b *Signature) Verdict {
	return d.decide(a, b, nil, false)
}

// DecideAfter is [Decision.Decide] given prior, a verdict of another
// decision (or of this one) on the same pair in the same order, a and b:
// when prior's alignment ran to its end ([Verdict.Aligned]) with the
// central options this decision aligns with, and this decision's
// early-exit bound would let it run to its end too, its LCS scores are
// taken instead of aligning the pair again. The verdict is Decide's, bit
// for bit. A prior whose cheap scores differ from the pair's (another
// pair, or b and a) is not used. Safe for concurrent use.
func (d Decision) DecideAfter(a, b *Signature, prior *Verdict) Verdict {
	return d.decide(a, b, prior, false)
}

// decide is Decide, reusing prior's alignment when it may (see
// [Decision.DecideAfter]); prior may be nil. sameSeqs reports that the
// caller checked prior to be a verdict of a pair with a's and b's word
// sequences and token counts, in this order, whatever its other scores
// (see [Verdict.align]).
func (d Decision) decide(a, b *Signature, prior *Verdict, sameSeqs bool) Verdict {
	v := Verdict{MinTokens: d.minTokens(), Gate: d.gate(), Verify: TestResult{Test: Test{Method: MethodNone}},
		Purpose: d.Purpose, Probability: math.NaN()}
	vt := d.verify()
	isModel := vt.Method == MethodModel
	if isModel {
		v.Probability = 0
		v.Calibration = d.models().Calibration
	}
	switch {
	case a.Empty() || a.Tokens < v.MinTokens:
		v.Short, v.ShortTokens = 'a', a.Tokens
		v.Scores = nanLCS(Scores{})
		return v
	case b.Empty() || b.Tokens < v.MinTokens:
		v.Short, v.ShortTokens = 'b', b.Tokens
		v.Scores = nanLCS(Scores{})
		return v
	}
	v.Step = StepCandidate
	v.Scores = Compare(a, b, CompareOptions{})
	params := d.params()
	minCov := params.minCov
	if isModel {
		v.Probability = d.models().NonCandidate
	}
	if g := d.gate(); g >= 0 && v.Scores.SimhashDistance > g {
		v.Gated = true
		return v
	}
	v.Candidates = make([]TestResult, d.candidates())
	passed := false
	for i := range v.Candidates {
		v.Candidates[i] = d.candidate(i).eval(&v.Scores, params)
		passed = passed || v.Candidates[i].Pass
	}
	if !passed {
		return v
	}
	v.Relation = v.Scores.Containment
	if d.wantsNumbers() {
		// NumbersOfNote (an alignment of the numbers) waits for the
		// numbers-only rule to need it: verifyByModel, once the LCS
		// ratio reaches the rule's.
		v.Scores.NumbersDiffer, v.Scores.HasNumbers = NumbersDiffer(a, b)
		if d.Exact && v.Scores.NumbersDiffer > 0 {
			v.NumberPairs = NumberPairs(a, b)
		}
	}
	if isModel && d.wantsLinks() {
		v.Scores.LinksDiffer, v.Scores.HasLinks = LinksDiffer(a.Links, b.Links)
	}
	var accept TestResult // Pass only when the strong-accept test ran and passed
	if at := d.accept(); vt.Method != MethodNone && at.Method != MethodNone && !at.Method.needsSeq() {
		accept = at.eval(&v.Scores, params)
	}
	switch {
	case vt.Method == MethodNone:
		v.Duplicate = true
	case accept.Pass:
		v.Step = StepAccept
		v.Verify = accept
		v.Duplicate = true
		v.Probability = math.NaN() // no alignment, no model
	case isModel && d.Accept.Method == MethodDefault && !d.models().Seq.mayRefuseNumbers(&v.Scores) &&
		d.models().NoSeq.Probability(&v.Scores) >= max(vt.Threshold, DefaultModelAccept):
		pm := d.models()
		v.Step = StepAccept
		v.Model = &pm.NoSeq
		v.Probability = pm.NoSeq.Probability(&v.Scores)
		v.Verify = TestResult{Test: Test{Method: MethodModel, Threshold: max(vt.Threshold, DefaultModelAccept)}, Purpose: d.Purpose,
			Value: v.Probability, Pass: true}
		v.Duplicate = true
	case isModel:
		v.Step = StepVerify
		d.verifyByModel(a, b, vt, &v, prior, sameSeqs)
		v.Duplicate = v.Verify.Pass
	case vt.Method.needsSeq() && (len(a.Seq) == 0 || len(b.Seq) == 0):
		v.Step = StepVerify
		ft := d.fallback()
		if ft.Method == MethodNone {
			v.NoSeq = true
			v.Verify = TestResult{Test: vt}
			break
		}
		v.Verify = ft.eval(&v.Scores, params)
		v.Verify.Fallback = true
		v.Duplicate = v.Verify.Pass
	default:
		v.Step = StepVerify
		if vt.Method.needsSeq() {
			o := CompareOptions{LCS: true, MinRatio: vt.Threshold, MaxD: d.MaxD, Central: d.Central}
			if d.Exact {
				o.MinRatio = 0
			}
			if vt.Method == MethodLCSCentral {
				o.MinCoverage = minCov
			}
			v.align(a, b, o, prior, sameSeqs)
		}
		v.Verify = vt.eval(&v.Scores, params)
		v.Duplicate = v.Verify.Pass
	}
	if d.Containment && v.Relation != RelationNone {
		v.Duplicate = true
	}
	if d.Purpose == PurposeRemove && v.Duplicate {
		// A page cut at the size caps was not read to its end: whatever
		// follows may be what a reader would lose, so the pair is never
		// content-equivalent (it stays a near-duplicate for grouping).
		// A calibration may refuse a page whose word sequence was cut:
		// the alignment read its first words only.
		cut := isModel && d.models().RefuseSeqCut
		links := 0.0
		if isModel {
			links = d.models().RefuseLinks
		}
		switch {
		case a.Capped:
			v.Duplicate, v.Capped = false, 'a'
		case b.Capped:
			v.Duplicate, v.Capped = false, 'b'
		case cut && a.SeqCut():
			v.Duplicate, v.SeqCut = false, 'a'
		case cut && b.SeqCut():
			v.Duplicate, v.SeqCut = false, 'b'
		case links > 0 && v.Scores.HasLinks && v.Scores.LinksDiffer > links:
			v.Duplicate, v.LinksRefused = false, links
		}
	}
	if v.Duplicate && v.Relation == RelationNone {
		v.Relation = RelationDuplicate
	}
	return v
}

// verifyByModel fills v's verification by the purpose's models: the Seq
// model on the alignment when both sides have a Seq, else the NoSeq model.
// The LCS exits early once its ratio cannot lift the probability to the
// threshold whatever the rest of the alignment. prior, when not nil, may
// hold the alignment (see [Verdict.align]).
func (d *Decision) verifyByModel(a, b *Signature, vt Test, v *Verdict, prior *Verdict, sameSeqs bool) {
	pm := d.models()
	v.Verify = TestResult{Test: vt, Purpose: d.Purpose}
	if len(a.Seq) == 0 || len(b.Seq) == 0 || !pm.Seq.usesSeq() {
		v.Model = &pm.NoSeq
		v.Verify.Fallback = pm.Seq.usesSeq()
		v.Probability = pm.NoSeq.Probability(&v.Scores)
		v.Verify.Value = v.Probability
		v.Verify.Pass = v.Probability >= vt.Threshold
		return
	}
	v.Model = &pm.Seq
	minLCS := min(pm.Seq.MinLCS(&v.Scores, vt.Threshold), 1)
	if d.Exact {
		minLCS = 0
	}
	central := d.Central
	if pm.Seq.uses(FeaturePageDivergence) {
		central.PageShare = cmp.Or(central.PageShare, DefaultPageShare)
	}
	v.align(a, b, CompareOptions{LCS: true, MinRatio: minLCS, MaxD: d.MaxD, Central: central, Bag: pm.Seq.uses(FeatureBagGap)}, prior, sameSeqs)
	if v.Scores.LCSCut {
		// The alignment was not finished: bound the probability with its
		// other features at their best.
		v.Verify.Cut = true
		v.Probability = pm.Seq.upperBound(&v.Scores)
		v.Verify.Value = v.Probability
		return
	}
	if pm.Seq.mayRefuseNumbers(&v.Scores) && v.Scores.LCS >= pm.Seq.NumbersOnly {
		v.Scores.NumbersOfNote, _ = NumbersOfNote(a, b)
	}
	v.Probability = pm.Seq.Probability(&v.Scores)
	v.Verify.Value = v.Probability
	v.Verify.Pass = v.Probability >= vt.Threshold
}

// align fills the LCS scores of v (HasLCS to Bag) with those of
// Compare(a, b, o), o asking for the LCS, and sets v.Aligned when the
// alignment ran to its end. When prior's alignment ran to its end with
// o's Central, o's bound lets an alignment at its distance run to its
// end too, and prior's cheap scores are v's (the same pair), its scores
// are taken without aligning again (see [Alignment]). sameSeqs stands for
// the last test when the caller checked that prior's pair has a's and b's
// word sequences and token counts, in this order: the alignment's scores
// are a function of those (see [wholeOf] and [Alignment]), so another
// pair of the same texts, whose cheap scores differ (another URL, other
// numbers or links), has them too. The bag ratio, not part of the
// alignment, is taken from prior when it has one, else computed when o
// asks for it.
func (v *Verdict) align(a, b *Signature, o CompareOptions, prior *Verdict, sameSeqs bool) {
	var full Scores
	l := -1
	if p := prior; p != nil && p.Aligned.Done && p.Aligned.Central == o.Central &&
		o.finishes(a, b, p.Aligned.Distance) && (sameSeqs || sameCheap(&p.Scores, &v.Scores)) {
		full, l = p.Scores, (len(a.Seq)+len(b.Seq)-p.Aligned.Distance)/2
		switch {
		case !o.Bag:
			full.Bag = math.NaN()
		case math.IsNaN(full.Bag):
			full.Bag = BagRatio(a.Seq, b.Seq)
		}
	} else {
		full, l = compare(a, b, o)
	}
	v.Scores.HasLCS, v.Scores.LCSCut = full.HasLCS, full.LCSCut
	v.Scores.LCS, v.Scores.Central = full.LCS, full.Central
	v.Scores.CoverageA, v.Scores.CoverageB = full.CoverageA, full.CoverageB
	v.Scores.Divergence, v.Scores.PageDivergence = full.Divergence, full.PageDivergence
	v.Scores.LCSStage = full.LCSStage
	v.Scores.Bag = full.Bag
	if l >= 0 {
		v.Aligned = Alignment{Done: true, Distance: len(a.Seq) + len(b.Seq) - 2*l, Central: o.Central}
	}
}

// sameCheap reports whether x and y hold the same cheap scores (those of
// Compare without options), bit for bit: a prior verdict of the same
// pair in the same order does, one of the reversed pair mostly not (the
// Bloom and containment scores are directed).
func sameCheap(x, y *Scores) bool {
	same := func(p, q float64) bool { return math.Float64bits(p) == math.Float64bits(q) }
	return x.SimhashDistance == y.SimhashDistance && same(x.BloomAB, y.BloomAB) && same(x.BloomBA, y.BloomBA) &&
		same(x.ContainAB, y.ContainAB) && same(x.ContainBA, y.ContainBA) && x.Containment == y.Containment &&
		same(x.Jaccard, y.Jaccard) && x.Supershingles == y.Supershingles && x.Megashingle == y.Megashingle &&
		x.Fingerprints == y.Fingerprints && same(x.LengthRatio, y.LengthRatio)
}

func nanLCS(s Scores) Scores {
	nan := math.NaN()
	s.LCS, s.Central, s.CoverageA, s.CoverageB, s.Bag = nan, nan, nan, nan, nan
	s.Divergence, s.PageDivergence = nan, nan
	return s
}

// String returns a short form of the verdict, e.g.
// "duplicate by lcs-central 0.91" or "none by candidate".
func (v Verdict) String() string {
	rel := v.Relation.String()
	switch {
	case v.Step == StepSkip:
		return rel + " (" + string(v.Short) + " too short)"
	case v.Capped != 0:
		return rel + " (" + string(v.Capped) + " cut at the size cap)"
	case v.SeqCut != 0:
		return rel + " (" + string(v.SeqCut) + "'s word sequence cut)"
	case v.LinksRefused != 0:
		return rel + " (link targets differ)"
	case v.Gated:
		return rel + " (simhash gate)"
	case v.Step == StepVerify && v.NoSeq:
		return rel + " (no sequence to verify)"
	case (v.Step == StepVerify || v.Step == StepAccept) && v.Verify.Method == MethodModel:
		// As the explanation writes it: never "0.90" for a pair rejected
		// at 0.90, and a bound as a bound.
		p, _ := probabilityPair(v.Probability, v.Verify.Threshold)
		if v.Verify.Cut {
			p = "<= " + p
		}
		return rel + " by model, P(" + v.Purpose.Definition() + ") " + p
	case v.Step == StepVerify || v.Step == StepAccept:
		return rel + " by " + v.Verify.Method.String() + " " + strconv.FormatFloat(v.Verify.Value, 'f', 2, 64)
	}
	for _, c := range v.Candidates {
		if c.Pass {
			return rel + " by " + c.Method.String() + " " + strconv.FormatFloat(c.Value, 'f', 2, 64)
		}
	}
	return rel + " by candidate"
}

// Explain returns a one-line explanation of the verdict naming the tests,
// scores and thresholds that decided, e.g.
// "duplicate: simhash distance 3 <= 16 (candidate), LCS central ratio 0.91 >= 0.70, coverage 0.95 >= 0.50 (verified)"
// or "duplicate: simhash distance 2 <= 16 (candidate), jaccard 0.95 >= 0.90 (accepted without LCS)".
func (v Verdict) Explain() string {
	var b strings.Builder
	if v.Duplicate {
		b.WriteString("duplicate: ")
	} else {
		b.WriteString("not duplicate: ")
	}
	if v.Step == StepSkip {
		fmt.Fprintf(&b, "%c has %d tokens, fewer than %d: too short to compare", v.Short, v.ShortTokens, v.MinTokens)
		return b.String()
	}
	if v.Gated {
		fmt.Fprintf(&b, "simhash distance %d > %d: too far apart to be a candidate", v.Scores.SimhashDistance, v.Gate)
		return b.String()
	}
	var first *TestResult
	for i := range v.Candidates {
		if v.Candidates[i].Pass {
			first = &v.Candidates[i]
			break
		}
	}
	if first == nil {
		b.WriteString("no candidate test passed: ")
		for i, c := range v.Candidates {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.String())
		}
		return b.String()
	}
	if first.Method == MethodNone {
		b.WriteString("every pair is a candidate")
	} else {
		b.WriteString(first.String())
		b.WriteString(" (candidate")
		if v.Step == StepCandidate {
			b.WriteString(", no verification")
		}
		b.WriteString(")")
	}
	if v.Step == StepAccept {
		b.WriteString(", ")
		b.WriteString(v.Verify.String())
		if v.Model != nil {
			b.WriteString(" [")
			b.WriteString(v.Model.Explain(&v.Scores))
			b.WriteString("]")
		}
		b.WriteString(" (accepted without LCS)")
	}
	if v.Step == StepVerify {
		b.WriteString(", ")
		switch {
		case v.NoSeq:
			b.WriteString("no token sequence to verify by " + v.Verify.Method.String() + " (rejected)")
		default:
			b.WriteString(v.Verify.String())
			if v.Model != nil && !v.Verify.Cut { // a cut alignment has no contributions to show
				b.WriteString(" [")
				b.WriteString(v.Model.Explain(&v.Scores))
				b.WriteString("]")
			}
			switch {
			case v.Verify.Pass && v.Verify.Fallback:
				b.WriteString(" (verified; no token sequence for LCS)")
			case v.Verify.Pass:
				b.WriteString(" (verified)")
			case v.Verify.Fallback:
				b.WriteString(" (rejected; no token sequence for LCS)")
			default:
				b.WriteString(" (rejected)")
			}
		}
	}
	if v.Scores.HasNumbers && v.Scores.NumbersDiffer > 0 || v.Model != nil && v.Model.vetoed(&v.Scores) {
		b.WriteString("; ")
		b.WriteString(numbersExplained(&v.Scores, v.NumberPairs))
	}
	if v.Calibration != "" && (v.Step == StepVerify || v.Step == StepAccept) {
		b.WriteString("; ")
		b.WriteString(v.Calibration)
	}
	if v.Capped != 0 {
		fmt.Fprintf(&b, "; but %c was cut at the size cap and its end is unread, so it is not content-equivalent", v.Capped)
	}
	if v.SeqCut != 0 {
		fmt.Fprintf(&b, "; but %c's word sequence was cut at signature.max_seq and its end is not aligned, so it is not content-equivalent", v.SeqCut)
	}
	if v.LinksRefused != 0 {
		fmt.Fprintf(&b, "; but %.0f%% of the link targets differ, over the calibration's %.0f%%, so it is not content-equivalent",
			100*v.Scores.LinksDiffer, 100*v.LinksRefused)
	}
	switch v.Relation {
	case RelationContains:
		b.WriteString("; a contains b")
	case RelationContained:
		b.WriteString("; a is contained in b")
	}
	return b.String()
}
