package eval

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// llvmDocs returns the folder of the built llvm-docs dev set
// ($WINNOW_LLVM_DOCS, else /tmp/llvm-docs), and skips tb without it.
func llvmDocs(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("WINNOW_LLVM_DOCS")
	if dir == "" {
		dir = "/tmp/llvm-docs"
	}
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("dev set %s absent: %v", dir, err)
	}
	return dir
}

// TestCalibrateCapNested reads the length of the word sequence
// (signature.max_seq) as a choice of the calibration itself: llvm-docs
// is signed at each cap of a grid, and in each fold of `winnow
// calibrate`'s cross-validation (5 folds x 10 repeats, seed 0) the
// training part chooses the confidence of the remove decision that
// refuses cut word sequences (the best mean F1 whose precision holds
// 0.99, as [Calibrate] chooses a confidence) at each cap, and the cap of
// the best of them, and the test part is judged at each cap and at the
// chosen one, beside the LCS ratio at its own threshold at the default
// cap. It checks the caps under the generated tables' length hold 0.99
// at an F1 no further under the ratio's than its spread
// (docs/calibration.md, "The length of the word sequence").
func TestCalibrateCapNested(t *testing.T) {
	if testing.Short() {
		t.Skip("signs llvm-docs at five caps (about two minutes)")
	}
	dir := llvmDocs(t)
	caps := []int{8192, 12288, 16384, 24576, 32768}
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	byCap := make([]*CVSet, len(caps))
	for ci, c := range caps {
		sg := page.Signer{Canon: canon.Options{Content: canon.ContentMain}, Signature: similarity.Options{MaxSeq: c}.WithDefaults()}
		rep, err := Run(context.Background(), set, Options{Signer: sg})
		if err != nil {
			t.Fatal(err)
		}
		byCap[ci] = NewCVSet("llvm-docs", set, rep)
	}
	const floor = 0.99
	truth := Truths()[1]
	m := similarity.DefaultModel(similarity.PurposeRemove).Seq
	var nested, ratio []foldScore
	fixed := make([][]foldScore, len(caps))
	chosen := map[int]int{}
	eachFold(byCap[:1], 5, 10, 0, truth, func(trainIdx, tests [][]int, _ []innerSplit) {
		judge := func(s *CVSet, conf float64) foldScore {
			n := len(tests[0])
			gold, pred := make([]bool, n), make([]bool, n)
			for j, i := range tests[0] {
				sp := &s.Scored[i]
				gold[j] = sp.Label == 1
				pred[j] = sp.Candidate && !sp.Remove.Refused && !sp.SeqCut && m.Probability(&sp.Scores) >= conf
			}
			pt := Verdicts(pred, gold)
			return foldScore{pt.Precision, pt.Recall, pt.F1, pt.TP, pt.FP}
		}
		best, bestF1, bestConf := -1, -1.0, 0.0
		for ci, s := range byCap {
			c, ok := confidenceAtFloor([]*CVSet{s}, trainIdx, m, truth, floor, true)
			fixed[ci] = append(fixed[ci], judge(s, c))
			if !ok {
				continue
			}
			judged, dups := judgeCandidates(len(trainIdx[0]), func(j int) (*ScoredPair, bool) {
				sp := &s.Scored[trainIdx[0][j]]
				return judgedAs(sp, truth, true), sp.Label == 1
			}, &m)
			if f1 := judged.at(c, dups).F1; f1 > bestF1 {
				best, bestF1, bestConf = ci, f1, c
			}
		}
		if best < 0 {
			best, bestConf = 0, 1
		}
		chosen[caps[best]]++
		nested = append(nested, judge(byCap[best], bestConf))
		// The LCS ratio at its own threshold at the default cap, on the
		// same folds.
		d := byCap[0]
		js := make([]Judged, len(trainIdx[0]))
		lcs := Methods()[0]
		for _, mm := range Methods() {
			if mm.Name == "lcs" {
				lcs = mm
			}
		}
		for j, i := range trainIdx[0] {
			js[j] = Judged{Score: lcs.Score(&d.Scored[i].Scores), Dup: d.Scored[i].Label == 1}
		}
		th := Best(Curve(js, false)).Threshold
		gold, pred := make([]bool, len(tests[0])), make([]bool, len(tests[0]))
		for j, i := range tests[0] {
			gold[j] = d.Scored[i].Label == 1
			pred[j] = lcs.Score(&d.Scored[i].Scores) >= th
		}
		pt := Verdicts(pred, gold)
		ratio = append(ratio, foldScore{pt.Precision, pt.Recall, pt.F1, pt.TP, pt.FP})
	})
	r := summarize("LCS ratio", 1, ratio)
	t.Logf("LCS ratio at its own threshold (max_seq 8192): P %.3f ± %.3f (pooled %.3f), R %.3f, F1 %.3f ± %.3f", r.Precision, r.SDP, r.PooledPrecision, r.Recall, r.F1, r.SDF1)
	row := func(name string, folds []foldScore) CVFigure {
		f, p := summarize(name, 1, folds), paired(folds, ratio)
		t.Logf("%s: P %.3f ± %.3f (pooled %.3f), R %.3f, F1 %.3f ± %.3f; vs the LCS ratio F1 %+.3f ± %.3f (%d folds better, %d worse)",
			name, f.Precision, f.SDP, f.PooledPrecision, f.Recall, f.F1, f.SDF1, p.DeltaF1, p.SD, p.Better, p.Worse)
		return f
	}
	for ci, c := range caps {
		f := row(fmt.Sprintf("max_seq %d, cut sequences refused, confidence chosen in each training part", c), fixed[ci])
		// The caps under the generated tables' length (16,514–18,960
		// words) hold the target; the default one above the ratio's F1
		// less its spread, the longer ones under the ratio's mean F1.
		if c <= 16384 && (f.PooledPrecision < floor || f.F1 < r.F1-r.SDF1) {
			t.Errorf("max_seq %d: pooled precision %.3f, F1 %.3f; want at least %.2f and the LCS ratio's %.3f less its spread %.3f", c, f.PooledPrecision, f.F1, floor, r.F1, r.SDF1)
		}
	}
	// Logged, not asserted: a training part without the generated
	// tables' pages (one page across releases, so one fold holds all its
	// pairs) has no pair that says reading them whole accepts them, and
	// may choose a cap over their length.
	row("cap and confidence chosen in each training part", nested)
	t.Logf("caps chosen: %v", chosen)
}
