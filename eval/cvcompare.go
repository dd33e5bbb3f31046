package eval

import (
	"errors"
	"fmt"
	"math"
)

// CVDelta is one candidate's change between two cross-validations on the
// same folds, the after run's figures minus the before run's, fold by
// fold.
type CVDelta struct {
	Set   string `json:"set"`
	Truth string `json:"truth"`
	// Section is the table part the candidate stands in: "figures" (each
	// at its threshold or confidence chosen in-fold),
	// "at_shipped_confidence" or "confidence" (the shipped model at one
	// min_confidence).
	Section   string `json:"section"`
	Candidate string `json:"candidate"`
	// Folds is the number of test folds paired.
	Folds int `json:"folds"`
	// PrecisionBefore and the rest are the two runs' means over the folds.
	PrecisionBefore float64 `json:"precision_before"`
	PrecisionAfter  float64 `json:"precision_after"`
	F1Before        float64 `json:"f1_before"`
	F1After         float64 `json:"f1_after"`
	// DeltaF1 and SDDelta are the mean and sample standard deviation
	// across the folds of F1 after minus F1 before; DeltaPrecision is the
	// mean change of precision.
	DeltaF1        float64 `json:"delta_f1"`
	SDDelta        float64 `json:"sd_delta"`
	DeltaPrecision float64 `json:"delta_precision"`
	// Worse counts the folds whose F1 fell.
	Worse int `json:"worse_folds"`
}

// Beyond reports whether the change exceeds its fold-to-fold spread, the
// bar a rule must clear to be kept (docs/quality.md, "Cross-validated").
func (d CVDelta) Beyond() bool { return math.Abs(d.DeltaF1) > d.SDDelta }

// ErrOtherFolds is returned by [CompareCV] for two reports whose folds
// differ, so no fold of one tests the pairs of a fold of the other.
var ErrOtherFolds = errors.New("eval: the two cross-validations ran on other folds")

// CompareCV pairs the per-fold figures of two reports of [CrossValidate]
// (e.g. `winnow eval -cv -json` of two builds on the same sets) and
// returns, for every candidate of every table both hold, the paired
// change of F1 and precision: the selection rule for changes one run
// cannot hold as two candidates (a new canonical form, another score).
// The reports must share folds, repeats and seed ([ErrOtherFolds]) and
// carry per-fold figures; tables or candidates in one report only are
// left out.
func CompareCV(before, after *CVReport) ([]CVDelta, error) {
	if before.Folds != after.Folds || before.Repeats != after.Repeats || before.Seed != after.Seed {
		return nil, fmt.Errorf("%w: %d×%d folds, seed %d, against %d×%d, seed %d", ErrOtherFolds,
			before.Repeats, before.Folds, before.Seed, after.Repeats, after.Folds, after.Seed)
	}
	var out []CVDelta
	tables := 0
	for _, ta := range after.Tables {
		tb := findTable(before, ta.Set, ta.Truth)
		if tb == nil {
			continue
		}
		tables++
		for _, sec := range []struct {
			name          string
			before, after []CVFigure
		}{
			{"figures", tb.Figures, ta.Figures},
			{"at_shipped_confidence", tb.AtShipped, ta.AtShipped},
			{"at_own_confidence", tb.AtOwn, ta.AtOwn},
			{"confidence", tb.Confidence, ta.Confidence},
		} {
			for _, fa := range sec.after {
				fb := findFigure(sec.before, fa.Candidate)
				if fb == nil {
					continue
				}
				d, err := pairFigures(fb, &fa)
				if err != nil {
					return nil, fmt.Errorf("%s, %s, %s: %w", ta.Set, ta.Truth, fa.Candidate, err)
				}
				d.Set, d.Truth, d.Section, d.Candidate = ta.Set, ta.Truth, sec.name, fa.Candidate
				out = append(out, d)
			}
		}
	}
	if tables == 0 {
		return nil, errors.New("eval: the two cross-validations share no set and definition")
	}
	return out, nil
}

// pairFigures compares one candidate's folds.
func pairFigures(b, a *CVFigure) (CVDelta, error) {
	n := len(a.FoldF1)
	if n == 0 || len(b.FoldF1) == 0 {
		return CVDelta{}, errors.New("no per-fold figures (fold_f1): written by a build before they were recorded")
	}
	if len(b.FoldF1) != n || len(a.FoldPrecision) != n || len(b.FoldPrecision) != n {
		return CVDelta{}, fmt.Errorf("%w: %d test folds against %d", ErrOtherFolds, len(b.FoldF1), n)
	}
	d := CVDelta{Folds: n, PrecisionBefore: b.Precision, PrecisionAfter: a.Precision, F1Before: b.F1, F1After: a.F1}
	df, dp := make([]float64, n), make([]float64, n)
	for i := range n {
		df[i], dp[i] = a.FoldF1[i]-b.FoldF1[i], a.FoldPrecision[i]-b.FoldPrecision[i]
		if df[i] < 0 {
			d.Worse++
		}
	}
	d.DeltaF1, d.SDDelta = meanSD(df)
	d.DeltaPrecision, _ = meanSD(dp)
	return d, nil
}

func findTable(r *CVReport, set, truth string) *CVTable {
	for i := range r.Tables {
		if r.Tables[i].Set == set && r.Tables[i].Truth == truth {
			return &r.Tables[i]
		}
	}
	return nil
}

func findFigure(fs []CVFigure, candidate string) *CVFigure {
	for i := range fs {
		if fs[i].Candidate == candidate {
			return &fs[i]
		}
	}
	return nil
}
