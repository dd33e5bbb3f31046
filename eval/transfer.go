package eval

// TransferThresholds gives every paper method of r the figures it reaches
// at the threshold chosen on another set, dev: the threshold of best F1
// there ([MethodResult.Best]), applied unchanged to r
// ([MethodResult.Transferred]). This is how a held-out check scores a
// method: thresholds chosen on a development split, then applied to pages
// nobody tuned on, so that a method is not credited with the best
// threshold of the very set it is scored on (Best is such an oracle).
// A result is matched to dev's by its definition ("label >= 1",
// "label = 3", "dup"), a method by its name; results without a match keep
// Transferred nil.
//
// Each mode decision likewise gets the figures at the min_confidence of
// best F1 on dev ([Result.DecisionsTransferred]; of equal F1, the higher
// confidence, which removes less), so that a held-out check can score
// the decisions as it scores the paper methods: each knob set on the
// development split. It returns how many methods and decisions it set.
func (r *Report) TransferThresholds(dev *Report) int {
	n := 0
	lower := map[string]bool{}
	for _, m := range Methods() {
		lower[m.Name] = m.LowerIsDup
	}
	for i := range r.Results {
		res := &r.Results[i]
		d := dev.result(res.Definition)
		if d == nil {
			continue
		}
		res.ThresholdsFrom = dev.Dir
		for j := range res.Methods {
			m := &res.Methods[j]
			dm := d.method(m.Name)
			if dm == nil || dm.Best.F1 == 0 { // no threshold was chosen there
				continue
			}
			p := atCurve(m.Curve, dm.Best.Threshold, lower[m.Name], res.Positives)
			m.Transferred = &p
			n++
		}
		for mode, dc := range d.Confidence {
			c, ok := bestConfidence(dc)
			if !ok {
				continue
			}
			for _, p := range res.Confidence[mode] {
				if p.Threshold == c {
					if res.DecisionsTransferred == nil {
						res.DecisionsTransferred = map[string]Point{}
					}
					res.DecisionsTransferred[mode] = p
					n++
					break
				}
			}
		}
	}
	return n
}

// bestConfidence returns the min_confidence of best F1 among points, the
// highest of equal F1; false when no point has an F1 above 0.
func bestConfidence(points []Point) (float64, bool) {
	best := -1
	for i, p := range points {
		if p.F1 > 0 && (best < 0 || p.F1 > points[best].F1 || p.F1 == points[best].F1 && p.Threshold > points[best].Threshold) {
			best = i
		}
	}
	if best < 0 {
		return 0, false
	}
	return points[best].Threshold, true
}

// result returns the result of the given definition, nil if r has none.
func (r *Report) result(definition string) *Result {
	for i := range r.Results {
		if r.Results[i].Definition == definition {
			return &r.Results[i]
		}
	}
	return nil
}

// method returns the method result of the given name, nil if there is
// none.
func (r *Result) method(name string) *MethodResult {
	for i := range r.Methods {
		if r.Methods[i].Name == name {
			return &r.Methods[i]
		}
	}
	return nil
}

// atCurve returns the point of threshold t from a [Curve] of a set with
// the given number of positives, as [At] would compute it from the pairs:
// the pairs predicted at t are those of the loosest curve point still at
// least as strict as t (its threshold >= t, or <= t when lowerIsDup), and
// none when every score is looser. A curve holds no NaN threshold.
func atCurve(curve []Point, t float64, lowerIsDup bool, positives int) Point {
	p := pointOf(t, 0, 0, positives)
	for _, c := range curve { // strictest first
		if lowerIsDup && c.Threshold > t || !lowerIsDup && c.Threshold < t {
			break
		}
		p = c
	}
	p.Threshold = t
	return p
}
