package similarity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DecisionSettings is a decision as an operator or a client writes it:
// config keys decision.method, decision.threshold and
// decision.min_confidence.*, the same keys given by -set, or the request
// parameters winnow_method, winnow_threshold and winnow_min_confidence.
// An empty string is unset.
type DecisionSettings struct {
	// Method is "default" (or "model"; "" is the same): the purpose's
	// fitted model, or a single paper method ("simhash", "bloom",
	// "containment", "supershingles", "jaccard", "fingerprints", "lcs",
	// "lcs-central", "lcs-local").
	Method string
	// Threshold is a single method's threshold in its unit: a Hamming
	// distance 0..64 for simhash, a count 0..6 for supershingles, a
	// count for fingerprints, a ratio in [0, 1] otherwise. Unset: the
	// paper's ([Method.DefaultThreshold]). The model decision has none.
	Threshold string
	// MinConfidence is the probability in (0, 1) a pair needs under the
	// model decision. Unset: the purpose's [PurposeModel.MinConfidence].
	// A single method has no calibrated probability and takes none.
	MinConfidence string
}

// DecisionFields names the settings in error messages, e.g.
// "decision.threshold" or "winnow_threshold".
type DecisionFields struct {
	Method, Threshold, MinConfidence string
}

// DecisionMethods lists the names [ParseDecision] accepts as a method.
func DecisionMethods() []string {
	names := []string{"default"}
	for m := MethodSimhash; m <= MethodModel; m++ {
		names = append(names, m.String())
	}
	return names
}

// DecisionSpec is a decision with typed values, as the configuration
// holds it (decision.method, decision.threshold,
// decision.min_confidence.*): [NewDecision] builds it without a detour
// through text.
type DecisionSpec struct {
	// Method is as [DecisionSettings.Method].
	Method string
	// Threshold is a single method's threshold, used when HasThreshold.
	Threshold    float64
	HasThreshold bool
	// MinConfidence is the model decision's confidence, used when
	// HasMinConfidence.
	MinConfidence    float64
	HasMinConfidence bool
}

// ParseDecision returns the decision for purpose p that the settings s
// name, as a client writes them (request parameters): the numbers are
// parsed, then [NewDecision] checks and builds it, so a method and a
// threshold mean the same wherever they are written. A value that is not
// a number is an error naming the field by f. minTokens is passed through
// to [Decision.MinTokens].
func ParseDecision(p Purpose, s DecisionSettings, f DecisionFields, minTokens int) (Decision, error) {
	spec := DecisionSpec{Method: s.Method}
	if !isModelMethod(s.Method) {
		if _, err := ParseMethod(strings.TrimSpace(s.Method)); err != nil {
			return Decision{}, fmt.Errorf("%s: %q is not one of %s", f.Method, s.Method, strings.Join(DecisionMethods(), ", "))
		}
	}
	if t := strings.TrimSpace(s.Threshold); t != "" {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsNaN(v) {
			if isModelMethod(s.Method) {
				return Decision{}, fmt.Errorf("%s: %q does not apply to the default decision, a fitted model whose one knob is %s", f.Threshold, s.Threshold, f.MinConfidence)
			}
			return Decision{}, fmt.Errorf("%s: %q is not a number", f.Threshold, s.Threshold)
		}
		spec.Threshold, spec.HasThreshold = v, true
	}
	if c := strings.TrimSpace(s.MinConfidence); c != "" {
		v, err := strconv.ParseFloat(c, 64)
		if err != nil {
			if !isModelMethod(s.Method) {
				m, _ := ParseMethod(strings.TrimSpace(s.Method))
				return Decision{}, fmt.Errorf("%s: %q does not apply to method %s, which gives no calibrated probability; its knob is %s", f.MinConfidence, s.MinConfidence, m, f.Threshold)
			}
			return Decision{}, fmt.Errorf("%s: %q is not a probability in (0, 1)", f.MinConfidence, s.MinConfidence)
		}
		spec.MinConfidence, spec.HasMinConfidence = v, true
	}
	return NewDecision(p, spec, f, minTokens)
}

// isModelMethod reports whether a method name means the fitted models.
func isModelMethod(method string) bool {
	m := strings.TrimSpace(method)
	return m == "" || m == "default" || m == "model"
}

// NewDecision returns the decision for purpose p that s names. A setting
// that cannot apply (a threshold for the model decision, a confidence for
// a single method, a value out of its method's range) is an error naming
// the field by f, never ignored. minTokens is passed through to
// [Decision.MinTokens].
func NewDecision(p Purpose, s DecisionSpec, f DecisionFields, minTokens int) (Decision, error) {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if isModelMethod(s.Method) {
		if s.HasThreshold {
			return Decision{}, fmt.Errorf("%s: %q does not apply to the default decision, a fitted model whose one knob is %s", f.Threshold, num(s.Threshold), f.MinConfidence)
		}
		d := Decision{Purpose: p, MinTokens: minTokens}
		if s.HasMinConfidence {
			c := s.MinConfidence
			if !(c > 0 && c < 1) {
				return Decision{}, fmt.Errorf("%s: %q is not a probability in (0, 1)", f.MinConfidence, num(c))
			}
			if top := DefaultModel(p).Ceiling(); c > top {
				return Decision{}, fmt.Errorf("%s: %q is above %s, the highest probability the %s model gives any pair: no pair would be a duplicate",
					f.MinConfidence, num(c), strconv.FormatFloat(math.Floor(top*1e4)/1e4, 'f', 4, 64), p.Definition())
			}
			d.Verify = Test{Method: MethodModel, Threshold: c}
		}
		return d, nil
	}
	m, err := ParseMethod(strings.TrimSpace(s.Method))
	if err != nil {
		return Decision{}, fmt.Errorf("%s: %q is not one of %s", f.Method, s.Method, strings.Join(DecisionMethods(), ", "))
	}
	if s.HasMinConfidence {
		return Decision{}, fmt.Errorf("%s: %q does not apply to method %s, which gives no calibrated probability; its knob is %s", f.MinConfidence, num(s.MinConfidence), m, f.Threshold)
	}
	t := m.DefaultThreshold()
	if s.HasThreshold {
		t = s.Threshold
		if math.IsNaN(t) {
			return Decision{}, fmt.Errorf("%s: %q is not a number", f.Threshold, num(t))
		}
		if lo, hi, integer := m.thresholdRange(); t < lo || t > hi || integer && t != math.Trunc(t) {
			kind := "a number"
			if integer {
				kind = "an integer"
			}
			return Decision{}, fmt.Errorf("%s: %q is not %s in [%g, %g], the range of method %s", f.Threshold, num(t), kind, lo, hi, m)
		}
	}
	d := SingleMethod(m, t)
	d.Purpose, d.MinTokens = p, minTokens
	return d, nil
}

// thresholdRange returns the values a threshold of m may take.
func (m Method) thresholdRange() (lo, hi float64, integer bool) {
	switch m {
	case MethodSimhash:
		return 0, 64, true
	case MethodSupershingles:
		return 0, DefaultSupershingles, true
	case MethodFingerprints:
		return 0, MaxFingerprints, true
	case MethodModel:
		return math.SmallestNonzeroFloat64, 1 - 1e-9, false
	}
	return 0, 1, false
}
