package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/similarity"
)

func TestWilsonLower(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want float64
	}{{30, 30, 0.9917}, {29, 30, 0.9460}, {1, 1, 0.8}, {0, 10, 0}} {
		if got := wilsonLower(c.k, c.n); math.Abs(got-c.want) > 5e-4 {
			t.Errorf("wilsonLower(%d, %d) = %.4f, want %.4f", c.k, c.n, got, c.want)
		}
	}
}

// TestCalibrateKeepsShippedWhereItHolds: on pairs like the dev sets'
// (synthSet), the group decision's rows are read on the same folds, and
// the chosen one holds the target whenever the shipped one does.
func TestCalibrateKeepsShippedWhereItHolds(t *testing.T) {
	sets := []*CVSet{synthSet("site", 400, 3)}
	c, err := Calibrate(sets, CalibrateOptions{Purpose: similarity.PurposeGroup, MinPrecision: 0.9, Folds: 5, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	if c.Pairs != 400 || c.Duplicates == 0 || c.Candidates != 400 {
		t.Errorf("counts %d pairs, %d duplicates, %d candidates", c.Pairs, c.Duplicates, c.Candidates)
	}
	for _, f := range []CVFigure{c.Shipped, c.Confidence, c.Refit, c.LCS} {
		if len(f.FoldF1) != 10 {
			t.Errorf("%s: %d folds read, want 10 (5 folds x 2 repeats)", f.Candidate, len(f.FoldF1))
		}
	}
	if c.Veto != nil {
		t.Error("a group calibration has a numbers veto row; the veto is a remove candidate")
	}
	if c.Shipped.PooledPrecision >= 0.9 && !c.HoldsTarget {
		t.Errorf("shipped holds the target (%.3f) but the chosen %s does not (%.3f)", c.Shipped.PooledPrecision, c.Chosen, c.ChosenFigure.PooledPrecision)
	}
	if len(c.Warnings) != 0 && c.HoldsTarget {
		t.Errorf("warnings %q with 400 pairs that hold the target", c.Warnings)
	}
}

// TestCalibrateRaisesAConfidenceThatFails: a start model whose
// confidence is far too low for the target is replaced by a row that
// holds it, at a higher confidence.
func TestCalibrateRaisesAConfidenceThatFails(t *testing.T) {
	start := *similarity.DefaultModel(similarity.PurposeGroup)
	start.MinConfidence = 0.3
	sets := []*CVSet{synthSet("site", 400, 4)}
	c, err := Calibrate(sets, CalibrateOptions{Purpose: similarity.PurposeGroup, MinPrecision: 0.95, Repeats: 2, Start: &start})
	if err != nil {
		t.Fatal(err)
	}
	if c.Shipped.PooledPrecision >= 0.95 {
		t.Fatalf("the fixture's premise: the start model at 0.3 holds precision %.3f", c.Shipped.PooledPrecision)
	}
	if c.Chosen == "shipped" || c.MinConfidence <= 0.3 || c.ChosenFigure.PooledPrecision <= c.Shipped.PooledPrecision {
		t.Errorf("chosen %s at %.2f, precision %.3f (start %.3f); want a higher confidence and precision", c.Chosen, c.MinConfidence,
			c.ChosenFigure.PooledPrecision, c.Shipped.PooledPrecision)
	}
}

// numbersSet is a remove-purpose set where pages alike but for their
// numbers are judged near-duplicates, not content-equivalent: only the
// numbers tell label 3 from label 1.
func numbersSet(n int) *CVSet {
	var sp []ScoredPair
	for i := range n {
		s := similarity.Scores{LCS: 1, Divergence: 0, Jaccard: 0.95, LengthRatio: 1, HasLCS: true, HasNumbers: true}
		label := 3
		switch i % 3 {
		case 1:
			s.NumbersDiffer, label = 1+i%4, 1
		case 2:
			s.LCS, s.Jaccard, s.Divergence, label = 0.4, 0.3, 0.8, 0
		}
		sp = append(sp, ScoredPair{Label: label, Scores: s, Candidate: true})
	}
	return NewPairCVSet("catalogue", sp)
}

func TestCalibrateChoosesNumbersVeto(t *testing.T) {
	c, err := Calibrate([]*CVSet{numbersSet(300)}, CalibrateOptions{Purpose: similarity.PurposeRemove, MinPrecision: 0.95, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	if c.Chosen != "numbers veto" || !c.Model.NumbersVeto || !c.HoldsTarget {
		t.Errorf("chosen %s (veto %v, holds %v): shipped P %.3f, veto P %.3f R %.3f; want the numbers veto",
			c.Chosen, c.Model.NumbersVeto, c.HoldsTarget, c.Shipped.PooledPrecision, c.Veto.PooledPrecision, c.Veto.Recall)
	}
}

func TestCalibrateTooFewPairs(t *testing.T) {
	c, err := Calibrate([]*CVSet{numbersSet(30)}, CalibrateOptions{Purpose: similarity.PurposeRemove, MinPrecision: 0.95, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) == 0 || !strings.Contains(c.Warnings[0], "too few pairs") {
		t.Errorf("warnings %q, want too few pairs", c.Warnings)
	}
	if c.Chosen == "refit" || c.Chosen == "numbers veto" {
		t.Errorf("chosen %s with 10 pairs of each kind; the coefficients must stay", c.Chosen)
	}
	if _, err := Calibrate([]*CVSet{NewPairCVSet("one kind", []ScoredPair{{Label: 0}, {Label: 0}})}, CalibrateOptions{}); err == nil {
		t.Error("Calibrate on pairs of one kind: no error")
	}
}

// TestCalibrateChoosesCutRefusal: a remove set whose only pairs judged
// otherwise among the likely ones have a cut word sequence: refusing cut
// sequences lets the confidence come down, and calibrate chooses it.
func TestCalibrateChoosesCutRefusal(t *testing.T) {
	var sp []ScoredPair
	for i := range 300 {
		s := similarity.Scores{LCS: 0.97 - 0.1*float64(i%5)/4, Divergence: 0, Jaccard: 0.9, LengthRatio: 1, HasLCS: true}
		label, cut := 3, false
		switch i % 6 {
		case 1:
			label, cut = 0, true // alike in its first words, apart after them
		case 2:
			s.LCS, s.Jaccard, s.Divergence, label = 0.4, 0.3, 0.8, 0
		}
		sp = append(sp, ScoredPair{Label: label, Scores: s, Candidate: true, SeqCut: cut})
	}
	c, err := Calibrate([]*CVSet{NewPairCVSet("manuals", sp)}, CalibrateOptions{Purpose: similarity.PurposeRemove, MinPrecision: 0.99, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	if c.CutRefused == nil || c.Chosen != "cut sequences refused" || !c.RefuseSeqCut || !c.HoldsTarget {
		t.Errorf("chosen %s (refuse %v, holds %v); want cut sequences refused", c.Chosen, c.RefuseSeqCut, c.HoldsTarget)
	}
}

// TestCalibrateChoosesLinksRefusal: a remove set whose only pairs judged
// otherwise among the likely ones link elsewhere (their link targets
// differ by more than any content-equivalent pair's): refusing them lets
// the confidence come down, and calibrate chooses it, at the largest
// share among the content-equivalent pairs.
func TestCalibrateChoosesLinksRefusal(t *testing.T) {
	var sp []ScoredPair
	for i := range 300 {
		s := similarity.Scores{LCS: 0.97 - 0.1*float64(i%5)/4, Divergence: 0, Jaccard: 0.9, LengthRatio: 1, HasLCS: true,
			HasLinks: true, LinksDiffer: 0.3 * float64(i%4) / 3}
		label := 3
		switch i % 6 {
		case 1:
			label, s.LinksDiffer = 0, 0.6 // the same text linking elsewhere
		case 2:
			s.LCS, s.Jaccard, s.Divergence, label = 0.4, 0.3, 0.8, 0
		}
		sp = append(sp, ScoredPair{Label: label, Scores: s, Candidate: true})
	}
	c, err := Calibrate([]*CVSet{NewPairCVSet("manuals", sp)}, CalibrateOptions{Purpose: similarity.PurposeRemove, MinPrecision: 0.99, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	if c.LinksRefused == nil || c.Chosen != "link targets refused" || c.RefuseLinks != 0.3 || !c.HoldsTarget {
		t.Errorf("chosen %s (refuse links above %v, holds %v); want link targets refused above 0.3", c.Chosen, c.RefuseLinks, c.HoldsTarget)
	}
}
