package similarity

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestModelContributions(t *testing.T) {
	m := DefaultModel(PurposeGroup).Seq
	s := Scores{LCS: 0.8, Divergence: 0.3, Jaccard: 0.5}
	z := m.Intercept
	for _, c := range m.Contributions(&s) {
		z += c.LogOdds()
	}
	if got := m.Logit(&s); math.Abs(got-z) > 1e-12 {
		t.Errorf("Logit = %g, intercept + contributions = %g", got, z)
	}
	if p := m.Probability(&s); math.Abs(p-1/(1+math.Exp(-z))) > 1e-12 || p <= 0 || p >= 1 {
		t.Errorf("Probability = %g, want sigmoid(%g)", p, z)
	}
	if got, want := m.Explain(&s), "lcs 0.80 (+6.9), divergence 0.30 (-0.6), intercept -5.0"; got != want {
		t.Errorf("Explain = %q, want %q", got, want)
	}
	// Missing scores never argue for a duplicate.
	nan := Scores{LCS: math.NaN(), Divergence: math.NaN()}
	if FeatureLCS.Value(&nan) != 0 || FeatureDivergence.Value(&nan) != 1 {
		t.Errorf("NaN scores: lcs %g, divergence %g; want 0, 1", FeatureLCS.Value(&nan), FeatureDivergence.Value(&nan))
	}
}

// TestModelMonotone: a higher LCS ratio never lowers a probability, more
// divergence never raises it, under both purposes; and the remove model
// is stricter than the group model wherever a pair can be either (LCS
// ratio >= 0.5; below, both give less than 0.02).
func TestModelMonotone(t *testing.T) {
	for _, p := range []Purpose{PurposeGroup, PurposeRemove} {
		m := DefaultModel(p).Seq
		for d := 0.0; d <= 1; d += 0.1 {
			prev := -1.0
			for l := 0.0; l <= 1; l += 0.05 {
				s := Scores{LCS: l, Divergence: d}
				pr := m.Probability(&s)
				if pr < prev {
					t.Errorf("%v: P(lcs %.2f, div %.1f) = %g < P at lower lcs %g", p, l, d, pr, prev)
				}
				prev = pr
				worse := Scores{LCS: l, Divergence: min(d+0.1, 1)}
				if m.Probability(&worse) > pr {
					t.Errorf("%v: more divergence raised P at lcs %.2f", p, l)
				}
				if p == PurposeRemove && l >= 0.5 && pr > DefaultModel(PurposeGroup).Seq.Probability(&s) {
					t.Errorf("P(content-equivalent) %g > P(near-duplicate) at lcs %.2f div %.1f", pr, l, d)
				}
			}
		}
	}
}

// TestModelEarlyExit checks that the LCS cut-off of a model decision never
// changes a verdict: on real pages edited at rates from 0 to 60 %, the
// verdict equals the model's decision on the full alignment.
func TestModelEarlyExit(t *testing.T) {
	gpl := lcsReadWords(t, "gpl-3.txt", 1300)
	apache := lcsReadWords(t, "apache-2.0.txt", 1300)
	page := clSign(gpl)
	r := rand.New(rand.NewPCG(5, 6))
	cut := 0
	for _, p := range []Purpose{PurposeGroup, PurposeRemove} {
		d := Decision{Purpose: p}
		pm := DefaultModel(p)
		for i := range 40 {
			rate := float64(i) / 40 * 0.6
			other := clSign(lcsEditWords(r, gpl, rate, apache))
			v := d.Decide(page, other)
			if v.Step != StepVerify {
				continue
			}
			full := Compare(page, other, CompareOptions{LCS: true})
			want := pm.Seq.Probability(&full) >= pm.MinConfidence
			if v.Duplicate != want {
				t.Errorf("%v, %.0f%% edited: Duplicate = %v, full alignment says %v: %s", p, 100*rate, v.Duplicate, want, v.Explain())
			}
			if v.Verify.Cut {
				cut++
				if v.Probability < pm.Seq.Probability(&full) {
					t.Errorf("%v: cut probability %g below the full one %g: not an upper bound", p, v.Probability, pm.Seq.Probability(&full))
				}
				if !strings.Contains(v.Explain(), "LCS exited early") {
					t.Errorf("cut verdict explained as %q", v.Explain())
				}
			} else if math.Abs(v.Probability-pm.Seq.Probability(&full)) > 1e-9 {
				t.Errorf("%v: Probability %g, full alignment %g", p, v.Probability, pm.Seq.Probability(&full))
			}
		}
	}
	if cut == 0 {
		t.Error("no LCS exited early: the test does not reach the cut-off")
	}
}

func TestVerdictProbability(t *testing.T) {
	page, near, other, _ := clDocs(t)
	var empty Signature
	tests := []struct {
		name   string
		d      Decision
		a, b   *Signature
		lo, hi float64
	}{
		{"group near", Decision{}, page, near, 0.7, 1},
		{"group unrelated", Decision{}, page, other, groupModel.NonCandidate, groupModel.NonCandidate},
		{"remove unrelated", Decision{Purpose: PurposeRemove}, page, other, 0, 0},
		{"too short", Decision{}, page, &empty, 0, 0},
	}
	for _, tt := range tests {
		v := tt.d.Decide(tt.a, tt.b)
		if v.Probability < tt.lo || v.Probability > tt.hi || v.Purpose != tt.d.Purpose {
			t.Errorf("%s: Probability %g purpose %v, want in [%g, %g], %v", tt.name, v.Probability, v.Purpose, tt.lo, tt.hi, tt.d.Purpose)
		}
	}
	if v := SingleMethod(MethodSimhash, 5).Decide(page, near); !math.IsNaN(v.Probability) {
		t.Errorf("single-method Probability = %g, want NaN", v.Probability)
	}
}

// BenchmarkDecidePair measures the decision's cost per candidate pair,
// the hand-tuned decision the models replaced beside them in one run:
// the 10 near-copies of clRanked (3% edited) and of clRankedMirrors
// (0-0.45% edited) against their originals.
func BenchmarkDecidePair(b *testing.B) {
	for _, set := range []struct {
		name string
		sigs func(testing.TB) []*Signature
	}{{"edited", clRanked}, {"mirrors", clRankedMirrors}} {
		sigs := set.sigs(b)
		for _, d := range []struct {
			name string
			d    Decision
		}{{"legacy", legacyDecision}, {"group", Decision{}}, {"remove", Decision{Purpose: PurposeRemove}}} {
			b.Run(set.name+"/"+d.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for i := range 10 {
						if v := d.d.Decide(sigs[3*i], sigs[40+i]); v.Step == StepSkip {
							b.Fatal("skipped")
						}
					}
				}
			})
		}
	}
}

// TestModelBagFeature checks that a model reading FeatureBagGap gets the
// pair's word-multiset overlap from Decide, not the missing-score 0.
func TestModelBagFeature(t *testing.T) {
	page, near, _, _ := clDocs(t)
	bagOnly := &PurposeModel{
		Seq:           Model{Features: []Feature{FeatureBagGap}, Weights: []float64{10}, Intercept: -5},
		NoSeq:         Model{Features: []Feature{FeatureJaccard}, Weights: []float64{1}},
		MinConfidence: 0.5,
	}
	v := Decision{Models: bagOnly}.Decide(page, near)
	want := BagRatio(page.Seq, near.Seq)
	if v.Scores.Bag != want || math.IsNaN(want) {
		t.Fatalf("Scores.Bag = %v, want %v", v.Scores.Bag, want)
	}
	if p := bagOnly.Seq.Probability(&v.Scores); v.Probability != p || p < 0.5 {
		t.Errorf("Probability %v, want the bag model's %v (> 0.5 for a near-copy; 0.007 without the bag score)", v.Probability, p)
	}
}

// TestRemoveRefusesCappedPages checks that a page cut at the signing caps
// is never content-equivalent (its end is unread), while it stays a
// near-duplicate for grouping.
func TestRemoveRefusesCappedPages(t *testing.T) {
	page, _, _, _ := clDocs(t)
	mirror := *page
	capped := *page
	capped.Capped = true
	if v := (Decision{Purpose: PurposeRemove}).Decide(page, &mirror); !v.Duplicate || v.Capped != 0 {
		t.Fatalf("remove, mirror: Duplicate %v Capped %q, want a duplicate", v.Duplicate, v.Capped)
	}
	for _, c := range []struct {
		a, b *Signature
		side byte
	}{{&capped, page, 'a'}, {page, &capped, 'b'}} {
		v := Decision{Purpose: PurposeRemove}.Decide(c.a, c.b)
		if v.Duplicate || v.Capped != c.side || !strings.Contains(v.Explain(), "cut at the size cap") || !strings.Contains(v.String(), "cut at the size cap") {
			t.Errorf("remove, %c capped: Duplicate %v Capped %q, explain %q", c.side, v.Duplicate, v.Capped, v.Explain())
		}
		if g := (Decision{}).Decide(c.a, c.b); !g.Duplicate {
			t.Errorf("group, %c capped: not a duplicate (%s)", c.side, g.Explain())
		}
	}
}

// TestFeatureJSON: a model's features read as names in JSON (winnow eval
// -cv -json prints the fitted models), and read back.
func TestFeatureJSON(t *testing.T) {
	m := Model{Features: []Feature{FeatureLCS, FeatureDivergence}, Weights: []float64{8.5, -2}, Intercept: -5}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"Features":["lcs","divergence"]`) {
		t.Errorf("json.Marshal(model) = %s, want its features by name", b)
	}
	var back Model
	if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back.Features, m.Features) {
		t.Errorf("json.Unmarshal(%s) = %v, %v; want %v", b, back.Features, err, m.Features)
	}
	if err := json.Unmarshal([]byte(`{"Features":["cosine"]}`), &back); err == nil {
		t.Error("json.Unmarshal of an unknown feature: no error")
	}
}

// TestFeatureWholePage: 1 when the alignment's central part spans one
// page whole (a page and the same page inside another template), 0 when
// both pages keep text outside it (one template around two articles),
// when a few tokens at an edge fall outside, and when there is no LCS.
func TestFeatureWholePage(t *testing.T) {
	gpl := lcsReadWords(t, "gpl-3.txt", 1300)
	apache := lcsReadWords(t, "apache-2.0.txt", 1300)
	article, other := gpl[300:900], apache[300:900]
	head, tail := gpl[:150], gpl[1100:1250]
	framed := func(body []string) *Signature {
		return clSign(slices.Concat(apache[:200], body, apache[1000:1200]))
	}
	templated := func(body []string) *Signature { return clSign(slices.Concat(head, body, tail)) }
	o := CompareOptions{LCS: true}
	for _, c := range []struct {
		name string
		a, b *Signature
		want float64
	}{
		{"a page and the page inside another template", clSign(article), framed(article), 1},
		{"one template around two articles", templated(article), templated(other), 0},
	} {
		s := Compare(c.a, c.b, o)
		if got := FeatureWholePage.Value(&s); got != c.want {
			t.Errorf("%s: whole page %v (coverages %.4f, %.4f), want %v", c.name, got, s.CoverageA, s.CoverageB, c.want)
		}
	}
	for _, s := range []Scores{
		{CoverageA: 0.9995, CoverageB: 0.98},
		{CoverageA: math.NaN(), CoverageB: math.NaN()},
	} {
		if got := FeatureWholePage.Value(&s); got != 0 {
			t.Errorf("coverages %v, %v: whole page %v, want 0", s.CoverageA, s.CoverageB, got)
		}
	}
}

// TestAppendFixed: appendFixed prints as fmt's %.2f and %+.1f, signs,
// zeros, rounding and non-finite values included.
func TestAppendFixed(t *testing.T) {
	for _, x := range []float64{0, math.Copysign(0, -1), 0.04, -0.04, -0.05, 0.05, 0.005, -0.005, 0.125, 6.95, -6.95, 1e21, -1e-9, 123.456,
		math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64} {
		for _, c := range []struct {
			prec   int
			plus   bool
			format string
		}{{2, false, "%.2f"}, {1, true, "%+.1f"}, {1, false, "%.1f"}, {2, true, "%+.2f"}} {
			if got, want := string(appendFixed([]byte("x"), x, c.prec, c.plus)), "x"+fmt.Sprintf(c.format, x); got != want {
				t.Errorf("appendFixed(%v, %d, %v) = %q, fmt %s = %q", x, c.prec, c.plus, got, c.format, want)
			}
		}
	}
}
