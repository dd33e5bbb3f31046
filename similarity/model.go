package similarity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Purpose is what a [Decision] decides: which pairs count as duplicates.
// The zero value is PurposeGroup.
type Purpose uint8

// Purposes, after the labels of webis-ecir20 (Fröbe et al., ECIR 2020)
// and CopyCat, on a 0–3 scale.
const (
	// PurposeGroup decides near-duplicates (label >= 1: the same page,
	// perhaps edited or in another template), for grouping and
	// annotating results.
	PurposeGroup Purpose = iota
	// PurposeRemove decides content-equivalence (label 3: a reader loses
	// nothing if one of the two is hidden), for removing results and for
	// what an offline run may delete.
	PurposeRemove
)

// String returns "group" or "remove".
func (p Purpose) String() string {
	switch p {
	case PurposeGroup:
		return "group"
	case PurposeRemove:
		return "remove"
	}
	return "purpose(" + strconv.Itoa(int(p)) + ")"
}

// Definition returns the labels the purpose counts as duplicates:
// "near-duplicate" or "content-equivalent".
func (p Purpose) Definition() string {
	if p == PurposeRemove {
		return "content-equivalent"
	}
	return "near-duplicate"
}

// Feature is one input of a [Model], a number in [0, 1] taken from
// [Scores].
type Feature uint8

// Features. Each is in [0, 1]; a feature whose score was not computed
// takes the value that argues least for a duplicate (0 for similarities,
// 1 for divergence), so a missing score never raises a probability.
const (
	// FeatureLCS is the LCS ratio of the word sequences (Huang); an LCS
	// cut early counts at its upper bound.
	FeatureLCS Feature = iota
	// FeatureDivergence is [Scores.Divergence]: the largest share of
	// unmatched tokens in a window, high when one block of content
	// differs inside a shared template.
	FeatureDivergence
	// FeatureJaccard is the min-hash Jaccard estimate.
	FeatureJaccard
	// FeatureLengthRatio is the smaller token count over the larger.
	FeatureLengthRatio
	// FeatureContainment is max(ContainAB, ContainBA).
	FeatureContainment
	// FeatureSimhash is the simhash distance over 64.
	FeatureSimhash
	// FeatureCentral is the central LCS ratio times the smaller coverage.
	FeatureCentral
	// FeatureLCSGap is the LCS ratio r on a log scale of its gap to 1,
	// ln(1.01/(1.01-r))/ln 101: 0 at r = 0, 0.5 at r = 0.9, 0.85 at
	// r = 0.99, 1 at r = 1. It spreads the last percent, where a
	// content-equivalent copy and an edited one differ.
	FeatureLCSGap
	// FeatureBagGap is [Scores.Bag], the word-multiset overlap, on the
	// scale of FeatureLCSGap: content in another order (a re-sorted
	// listing) keeps it high where the LCS ratio falls.
	FeatureBagGap
	// FeaturePageDivergence is [Scores.PageDivergence]: the divergence
	// over a window that grows with the page (a twentieth of it), so one
	// rewritten section of a long manual weighs as the small part of it
	// that it is. A -cv candidate (docs/decisions.md), not in a default model.
	FeaturePageDivergence
	// FeatureWholePage is 1 when the central part of the alignment
	// ([CentralLCS]) spans one of the two pages whole, so that page lies
	// coherently inside the other (a copy, or one page under the same
	// template), else 0. A -cv candidate (docs/decisions.md), not in a default
	// model: on the dev sets no web pair of label 0 has it, but it
	// hinges on a page's last few tokens.
	FeatureWholePage
	// FeatureNumbers is 1 − 2^−n for n numbers that differ
	// ([Scores.NumbersDiffer]): 0 when every number is the same, 0.5 for
	// one, 0.75 for two; 1 when the numbers were not compared. The word
	// sequence holds every number as one token, so two pages that differ
	// only in prices or counts have LCS ratio 1; this reads what they
	// say. A -cv candidate for the remove decision (docs/calibration.md).
	FeatureNumbers
	// FeatureLinks is [Scores.LinksDiffer], the share of the link
	// targets (relative, as written) of the page with fewer that the
	// other page lacks: 0 when they link to the same places (a mirror
	// copies the HTML; a syndicated copy's absolute links are left out),
	// or when either has no relative link; 1 when the links were not
	// compared. What a page links to is not its visible text, but a page
	// rewritten for another release may rename every target its tables
	// point to. A -cv candidate for the remove decision that did not win
	// (docs/calibration.md, "Link targets"); signatures do not carry
	// links, so only package eval computes it.
	FeatureLinks
	numFeatures
)

var featureNames = [...]string{"lcs", "divergence", "jaccard", "length_ratio", "containment", "simhash", "central", "lcs_gap", "bag_gap", "page_divergence", "whole_page", "numbers", "links"}

// String returns the feature's short name, e.g. "lcs", "divergence".
func (f Feature) String() string {
	if int(f) < len(featureNames) {
		return featureNames[f]
	}
	return "feature(" + strconv.Itoa(int(f)) + ")"
}

// MarshalText returns the feature's name, so a model's features read as
// names in JSON (["lcs","divergence"]), not as the base64 of their bytes.
func (f Feature) MarshalText() ([]byte, error) {
	if int(f) >= len(featureNames) {
		return nil, fmt.Errorf("similarity: unknown feature %d", f)
	}
	return []byte(featureNames[f]), nil
}

// UnmarshalText reads a feature's name, as MarshalText writes it.
func (f *Feature) UnmarshalText(b []byte) error {
	i := slices.Index(featureNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("similarity: unknown feature %q", b)
	}
	*f = Feature(i)
	return nil
}

// Features returns every feature, in order.
func Features() []Feature {
	fs := make([]Feature, numFeatures)
	for i := range fs {
		fs[i] = Feature(i)
	}
	return fs
}

// needsSeq reports whether the feature comes from the LCS alignment.
func (f Feature) needsSeq() bool {
	return f == FeatureLCS || f == FeatureDivergence || f == FeatureCentral || f == FeatureLCSGap || f == FeatureBagGap || f == FeaturePageDivergence || f == FeatureWholePage
}

// lcsGap maps an LCS ratio onto FeatureLCSGap's scale; lcsFromGap is its
// inverse.
func lcsGap(r float64) float64     { return math.Log(1.01/(1.01-r)) / math.Log(101) }
func lcsFromGap(v float64) float64 { return 1.01 * (1 - math.Pow(101, -v)) }

// Value returns the feature's value for the scores s.
func (f Feature) Value(s *Scores) float64 {
	var v float64
	switch f {
	case FeatureLCS:
		v = s.LCS
	case FeatureDivergence:
		v = s.Divergence
		if math.IsNaN(v) {
			return 1
		}
	case FeatureJaccard:
		v = s.Jaccard
	case FeatureLengthRatio:
		v = s.LengthRatio
	case FeatureContainment:
		v = max(s.ContainAB, s.ContainBA)
	case FeatureSimhash:
		return float64(s.SimhashDistance) / 64
	case FeatureCentral:
		v = s.Central * min(s.CoverageA, s.CoverageB)
	case FeatureLCSGap:
		if math.IsNaN(s.LCS) {
			return 0
		}
		return lcsGap(min(max(s.LCS, 0), 1))
	case FeaturePageDivergence:
		v = s.PageDivergence
		if math.IsNaN(v) {
			return 1
		}
	case FeatureBagGap:
		if math.IsNaN(s.Bag) {
			return 0
		}
		return lcsGap(min(max(s.Bag, 0), 1))
	case FeatureNumbers:
		if !s.HasNumbers {
			return 1
		}
		return 1 - math.Ldexp(1, -min(s.NumbersDiffer, 60))
	case FeatureLinks:
		if !s.HasLinks {
			return 1
		}
		v = s.LinksDiffer
	case FeatureWholePage:
		// A coverage is a span over the sequence's length, 1 exactly
		// when the span is the whole sequence; NaN (no LCS) is not 1.
		if max(s.CoverageA, s.CoverageB) == 1 {
			return 1
		}
		return 0
	}
	if math.IsNaN(v) {
		return 0
	}
	return min(max(v, 0), 1)
}

// Model is a logistic regression over features of a pair's [Scores]:
// P(duplicate) = 1 / (1 + exp(-(Intercept + Σ Weights[i]·x_i))). Its
// coefficients are fitted by package eval on the labelled dev sets
// (penalized maximum likelihood, every set weighted equally) and written
// into the code; eval's tests refit them from the data and check they
// match. A Model is a value, safe for concurrent use.
type Model struct {
	// Features are the inputs, Weights their coefficients, in order.
	Features []Feature
	Weights  []float64
	// Intercept is the log-odds of a duplicate when every feature is 0.
	Intercept float64
	// NumbersVeto gives probability 0 to a pair whose numbers differ, or
	// were not compared ([Scores.NumbersDiffer]): "numbers differ, so not
	// removable", a fixed rule over the fitted model. A -cv candidate for
	// the remove decision (docs/calibration.md).
	NumbersVeto bool `json:",omitempty"`
	// NumbersOnly, when positive, gives probability 0 to a pair whose
	// word sequences agree to an LCS ratio of at least NumbersOnly and
	// whose numbers differ in one that is not a date, time or counter
	// ([Scores.NumbersOfNote]): two pages that differ only in a price, a
	// stock count, a catalogue number or a version are different items,
	// not one page fetched twice. Narrower than NumbersVeto: a page
	// whose words changed too, or whose clock moved, is left to the
	// model.
	NumbersOnly float64 `json:",omitempty"`
}

// vetoed reports whether the model's NumbersVeto or NumbersOnly refuses s.
func (m *Model) vetoed(s *Scores) bool {
	return m.NumbersVeto && (!s.HasNumbers || s.NumbersDiffer > 0) || m.numbersOnly(s)
}

// numbersOnly reports whether the model's NumbersOnly rule refuses s.
func (m *Model) numbersOnly(s *Scores) bool {
	return m.NumbersOnly > 0 && s.HasNumbers && s.NumbersOfNote > 0 && s.HasLCS && s.LCS >= m.NumbersOnly
}

// mayRefuseNumbers reports whether the model's NumbersOnly rule may
// refuse s once its LCS ratio and its numbers of note are known: a pair
// whose numbers differ is not accepted without the alignment.
func (m *Model) mayRefuseNumbers(s *Scores) bool {
	return m.NumbersOnly > 0 && s.HasNumbers && s.NumbersDiffer > 0
}

// usesNumbers reports whether the model reads [Scores.NumbersDiffer].
func (m *Model) usesNumbers() bool {
	return m.NumbersVeto || m.NumbersOnly > 0 || m.uses(FeatureNumbers)
}

// Logit returns the model's log-odds for s, -Inf when its NumbersVeto
// refuses s.
func (m *Model) Logit(s *Scores) float64 {
	if m.vetoed(s) {
		return math.Inf(-1)
	}
	z := m.Intercept
	for i, f := range m.Features {
		z += m.Weights[i] * f.Value(s)
	}
	return z
}

// Probability returns the model's probability that the pair scored s is a
// duplicate.
func (m *Model) Probability(s *Scores) float64 {
	return sigmoid(m.Logit(s))
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// maxProbability returns the highest probability m gives any pair: each
// feature (in [0, 1]) at its most favourable end.
func (m *Model) maxProbability() float64 {
	z := m.Intercept
	for _, w := range m.Weights {
		z += max(w, 0)
	}
	return sigmoid(z)
}

// Ceiling returns the highest probability the purpose's models give any
// pair, with or without a token sequence: a confidence above it accepts
// nothing.
func (pm *PurposeModel) Ceiling() float64 {
	return max(pm.Seq.maxProbability(), pm.NoSeq.maxProbability())
}

// logit is the inverse of sigmoid.
func logit(p float64) float64 { return math.Log(p / (1 - p)) }

// Contribution is one feature's part in a probability: Weight·Value on
// the log-odds scale.
type Contribution struct {
	Feature Feature
	Value   float64
	Weight  float64
}

// LogOdds returns Weight·Value.
func (c Contribution) LogOdds() float64 { return c.Weight * c.Value }

// Contributions returns each feature's part in the log-odds of s, in the
// model's order.
func (m *Model) Contributions(s *Scores) []Contribution {
	cs := make([]Contribution, len(m.Features))
	for i, f := range m.Features {
		cs[i] = Contribution{Feature: f, Value: f.Value(s), Weight: m.Weights[i]}
	}
	return cs
}

// uses reports whether f is among the model's features.
func (m *Model) uses(f Feature) bool {
	return slices.Contains(m.Features, f)
}

// usesSeq reports whether any feature needs the LCS alignment.
func (m *Model) usesSeq() bool {
	for _, f := range m.Features {
		if f.needsSeq() {
			return true
		}
	}
	return false
}

// MinLCS returns the smallest LCS ratio at which the model can reach the
// probability p given the cheap scores of s, with every other alignment
// feature at its most favourable value; 0 when any ratio can, above 1 when
// none can. An LCS below it can be cut early ([CompareOptions.MinRatio]):
// the pair is rejected whatever the alignment.
func (m *Model) MinLCS(s *Scores, p float64) float64 {
	if m.vetoed(s) {
		return 1.01 // unreachable
	}
	need := logit(p) - m.Intercept
	wLCS, wGap := 0.0, 0.0
	for i, f := range m.Features {
		w := m.Weights[i]
		switch {
		case f == FeatureLCS:
			wLCS += w
		case f == FeatureLCSGap:
			wGap += w
		case f.needsSeq():
			need -= max(w, 0) // best case: value 1 for w > 0, 0 for w < 0
		default:
			need -= w * f.Value(s)
		}
	}
	switch {
	case wLCS < 0 || wGap < 0 || wLCS > 0 && wGap > 0:
		return 0 // not monotone in one LCS feature: no cut-off
	case wLCS > 0:
		return max(need/wLCS, 0)
	case wGap > 0:
		v := need / wGap
		if v > 1 {
			return 1.01 // unreachable
		}
		return max(lcsFromGap(v), 0)
	}
	return 0
}

// Explain returns the model's reasoning as the features' contributions to
// the log-odds, largest first, e.g. "lcs 0.93 (+11.2), divergence 0.05
// (-0.4), intercept -8.1".
func (m *Model) Explain(s *Scores) string {
	var b strings.Builder
	cs := m.Contributions(s)
	// Largest magnitude first: the reader sees what decided.
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && math.Abs(cs[j].LogOdds()) > math.Abs(cs[j-1].LogOdds()); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
	// Appended with strconv, as fmt's %.2f and %+.1f print them: fmt's
	// formatting was half of this function, which runs twice for every
	// member of winnow dedup's output.
	buf := make([]byte, 0, 32*len(cs)+16)
	for _, c := range cs {
		buf = append(buf, c.Feature.String()...)
		buf = append(buf, ' ')
		buf = appendFixed(buf, c.Value, 2, false)
		buf = append(buf, " ("...)
		buf = appendFixed(buf, c.LogOdds(), 1, true)
		buf = append(buf, "), "...)
	}
	buf = append(buf, "intercept "...)
	b.Write(appendFixed(buf, m.Intercept, 1, true))
	if m.numbersOnly(s) {
		b.WriteString(", only numbers differ (-Inf)")
	}
	if m.NumbersVeto && m.vetoed(s) {
		b.WriteString(", numbers veto (-Inf)")
	}
	return b.String()
}

// appendFixed appends x with prec decimals as fmt's %.Nf does, or %+.Nf
// with plus.
func appendFixed(b []byte, x float64, prec int, plus bool) []byte {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		if plus {
			return fmt.Appendf(b, "%+.*f", prec, x)
		}
		return fmt.Appendf(b, "%.*f", prec, x)
	}
	if plus && !math.Signbit(x) {
		b = append(b, '+')
	}
	return strconv.AppendFloat(b, x, 'f', prec, 64)
}

// upperBound returns the model's probability for s with every alignment
// feature but the LCS ratio at its most favourable value: a bound for a
// pair whose alignment exited early.
func (m *Model) upperBound(s *Scores) float64 {
	if m.vetoed(s) {
		return 0
	}
	z := m.Intercept
	for i, f := range m.Features {
		w := m.Weights[i]
		switch {
		case f == FeatureLCS || f == FeatureLCSGap:
			z += w * f.Value(s)
		case f.needsSeq():
			z += max(w, 0)
		default:
			z += w * f.Value(s)
		}
	}
	return sigmoid(z)
}
