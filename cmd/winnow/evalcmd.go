package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/eval"
	"github.com/winnow-search/winnow/options"
	"github.com/winnow-search/winnow/similarity"
)

func runEval(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	asJSON := fs.Bool("json", false, "print JSON; the default decision's figures stand under \"default\"")
	data := fs.String("data", "", "labelled data `dir` (or give it as the argument)")
	plots := fs.String("plots", "", "write PNG charts (precision-recall curves, Moz-style 2-D histogram) into `dir`")
	histX := fs.String("hist-x", "jaccard", "method on the histogram's x axis")
	histY := fs.String("hist-y", "simhash", "method on the histogram's y axis")
	incremental := fs.Bool("incremental", false, "corpus mode: feed the pages one by one into a cluster service (in memory, cluster.* settings) and compare its groups with a batch clustering")
	scores := fs.String("scores", "", "write every scored pair with all its scores, the decision's verdict and the mode decisions' probabilities (p_group, p_remove) as TSV to `file`, for choosing thresholds")
	cv := fs.Bool("cv", false, "cross-validate the paper methods, the legacy decision and the candidate models on the DIRs given (stratified, repeated k-fold) and print the models refitted on all of them")
	thresholdsFrom := fs.String("thresholds-from", "", "also score each paper method at the threshold of best F1 on the labelled set `dev`, and each mode decision at the min_confidence of best F1 there (applied unchanged: the held-out protocol), beside its best threshold on DIR")
	compare := fs.Bool("compare", false, "-cv: pair the per-fold figures of two `winnow eval -cv -json` outputs BEFORE.json AFTER.json (two builds on the same sets and folds) and print each candidate's change of F1, ± its fold-to-fold spread")
	folds := fs.Int("folds", 5, "-cv: folds")
	repeats := fs.Int("repeats", 20, "-cv: repeats (20: the precision the confidence rule reads moves by about 0.005 between seeds at 5)")
	seed := fs.Uint64("seed", 0, "-cv: seed of the fold shuffles (another seed deals other folds: whether a rule's gain survives it)")
	bound := fs.Bool("bound", false, "on the DIRs given (the first the web pairs, as in -cv): the best in-sample F1 of any rule \"LCS ratio >= f(divergence)\", f nondecreasing, fitted on each set under the targets' precision floors, beside the LCS ratio's best")
	cuts := fs.Bool("cuts", false, "-bound: also widen the rules by one cut on one more score at a time (\"and\" or \"or\" score >= c, 20 cut points per score; 5 s on the three dev sets)")
	seeds := fs.Int("seeds", 1, "-cv: also run the seeds after -seed, N in all, and apply the selection rule across them (the tables are the first seed's)")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: winnow eval [-json] [-plots DIR] [-thresholds-from DEV] DIR\n       winnow eval -cv [-json] [-plots DIR] DIR...\n       winnow eval -cv -compare [-json] BEFORE.json AFTER.json\n       winnow eval -bound [-cuts] [-json] DIR...\n\n"+
			"DIR is a labelled set: pair mode (pairs.tsv + pairs/) or corpus mode (docs.tsv + pairs.tsv + html/).")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if *compare {
		if !*cv || fs.NArg() != 2 || *data != "" {
			return usagef("eval -cv -compare takes two files written by eval -cv -json")
		}
		return runCVCompare(e, fs.Arg(0), fs.Arg(1), *asJSON)
	}
	if *cuts && !*bound {
		return usagef("-cuts widens -bound's rules; give it with -bound")
	}
	if *bound {
		dirs := fs.Args()
		if *data != "" {
			dirs = append([]string{*data}, dirs...)
		}
		if *cv || len(dirs) == 0 {
			return usagef("eval -bound takes one or more data DIRs, the web pairs first")
		}
		return runBound(ctx, e, dirs, *cuts, *asJSON)
	}
	if *cv {
		dirs := fs.Args()
		if *data != "" {
			dirs = append([]string{*data}, dirs...)
		}
		if len(dirs) == 0 {
			return usagef("eval -cv takes one or more data DIRs")
		}
		if *seeds < 1 {
			return usagef("-seeds must be at least 1")
		}
		return runCV(ctx, e, dirs, eval.CVOptions{Folds: *folds, Repeats: *repeats, Seed: *seed}, *seeds, *asJSON, *plots)
	}
	dir := *data
	if dir == "" && fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	if dir == "" || fs.NArg() > 1 || (*data != "" && fs.NArg() > 0) {
		return usagef("eval takes one data DIR")
	}
	o, err := evalOptions(e)
	if err != nil {
		return err
	}
	set, err := eval.Load(dir)
	if err != nil {
		return err
	}
	if *incremental {
		return runIncremental(ctx, e, set, o, *asJSON)
	}
	rep, err := eval.Run(ctx, set, o)
	if err != nil {
		return err
	}
	if *thresholdsFrom != "" {
		if err := transferThresholds(ctx, rep, *thresholdsFrom, o); err != nil {
			return err
		}
	}
	if *plots != "" {
		name := filepath.Base(filepath.Clean(dir))
		files, err := eval.Plot(rep, *plots, name, *histX, *histY)
		if err != nil {
			return err
		}
		for _, f := range files {
			e.log.Info("eval_plot", "file", f)
		}
	}
	if *scores != "" {
		if err := writeScores(*scores, set, rep); err != nil {
			return err
		}
	}
	if *asJSON {
		return writeEvalJSON(e.stdout, rep)
	}
	writeEvalText(e.stdout, rep, e.cfg.Decision.Method, o)
	return nil
}

// evalOptions maps the configuration onto an evaluation's decisions.
func evalOptions(e *env) (eval.Options, error) {
	dec, err := options.Decision(e.cfg)
	if err != nil {
		return eval.Options{}, err
	}
	group, remove, err := options.Decisions(e.cfg)
	if err != nil {
		return eval.Options{}, err
	}
	return eval.Options{Signer: options.Signer(e.cfg), Decision: dec, Group: group, Remove: remove, Workers: e.cfg.Dedup.Workers}, nil
}

// runCV scores every set, cross-validates under seeds seeds from
// cvo.Seed on (concurrently: each reads the sets only) and prints the
// first seed's tables and the selection across them.
func runCV(ctx context.Context, e *env, dirs []string, cvo eval.CVOptions, seeds int, asJSON bool, plots string) error {
	sets, err := loadCVSets(ctx, e, dirs)
	if err != nil {
		return err
	}
	start := time.Now()
	reps := make([]*eval.CVReport, seeds)
	var wg sync.WaitGroup
	for i := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := cvo
			o.Seed = cvo.Seed + uint64(i)
			reps[i] = eval.CrossValidate(sets, o)
		}()
	}
	wg.Wait()
	rep := reps[0]
	if seeds > 1 {
		// A selection that fails under one seed is said, not fatal: the
		// tables still stand.
		across, err := eval.SelectAcross(reps)
		if err != nil {
			e.log.Warn("eval_cv_select_across", "err", err)
		}
		rep.Across = across
	}
	e.log.Info("eval_cv", "sets", len(sets), "folds", rep.Folds, "repeats", rep.Repeats, "seed", rep.Seed, "seeds", seeds, "took", time.Since(start).Round(time.Millisecond))
	if plots != "" {
		files, err := eval.PlotReliability(rep, plots)
		if err != nil {
			return err
		}
		for _, f := range files {
			e.log.Info("eval_plot", "file", f)
		}
	}
	if asJSON {
		return writeIndentedJSON(e.stdout, rep)
	}
	writeCVText(e.stdout, rep)
	return nil
}

// loadCVSets loads and scores every set, named by its folder.
func loadCVSets(ctx context.Context, e *env, dirs []string) ([]*eval.CVSet, error) {
	o, err := evalOptions(e)
	if err != nil {
		return nil, err
	}
	var sets []*eval.CVSet
	for _, dir := range dirs {
		set, err := eval.Load(dir)
		if err != nil {
			return nil, err
		}
		rep, err := eval.Run(ctx, set, o)
		if err != nil {
			return nil, err
		}
		sets = append(sets, eval.NewCVSet(filepath.Base(filepath.Clean(dir)), set, rep))
	}
	return sets, nil
}

// runBound prints, per set and truth, the best in-sample F1 of the
// monotone rules over the LCS ratio and the divergence under the
// targets' floors ([eval.Bounds]).
func runBound(ctx context.Context, e *env, dirs []string, withCuts, asJSON bool) error {
	sets, err := loadCVSets(ctx, e, dirs)
	if err != nil {
		return err
	}
	figs := eval.Bounds(sets)
	var cuts []eval.BoundCut
	if withCuts {
		cuts = eval.BoundCuts(sets)
	}
	if asJSON {
		if !withCuts {
			return writeIndentedJSON(e.stdout, figs)
		}
		return writeIndentedJSON(e.stdout, struct {
			Bounds []eval.BoundFigure `json:"bounds"`
			Cuts   []eval.BoundCut    `json:"cuts"`
		}{figs, cuts})
	}
	writeBoundText(e.stdout, figs)
	if withCuts {
		writeBoundCutsText(e.stdout, figs, cuts)
	}
	return nil
}

// writeIndentedJSON writes v as indented JSON, as every -json of eval does.
func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// runCVCompare pairs two cross-validations fold by fold.
func runCVCompare(e *env, beforePath, afterPath string, asJSON bool) error {
	var reps [2]*eval.CVReport
	for i, p := range []string{beforePath, afterPath} {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		reps[i] = new(eval.CVReport)
		if err := json.Unmarshal(b, reps[i]); err != nil {
			return fmt.Errorf("%s: not the JSON of winnow eval -cv -json: %w", p, err)
		}
	}
	ds, err := eval.CompareCV(reps[0], reps[1])
	if err != nil {
		return err
	}
	if asJSON {
		return writeIndentedJSON(e.stdout, ds)
	}
	w := e.stdout
	fmt.Fprintf(w, "after minus before, paired fold by fold (%d repeats of %d folds; sd = fold-to-fold standard deviation of the change; * beyond it)\n", reps[1].Repeats, reps[1].Folds)
	last := ""
	for _, d := range ds {
		if head := d.Set + ", duplicate = " + d.Truth; head != last {
			fmt.Fprintf(w, "\n%s\n  %-36s %-22s %6s %6s %6s %6s %7s %6s %6s\n", head, "candidate", "section", "P", "P'", "F1", "F1'", "ΔF1", "sd", "worse")
			last = head
		}
		mark := ""
		if d.Beyond() {
			mark = "*"
		}
		fmt.Fprintf(w, "  %-36s %-22s %6.3f %6.3f %6.3f %6.3f %+7.3f %6.3f %3d/%d %s\n", d.Candidate, d.Section, d.PrecisionBefore, d.PrecisionAfter, d.F1Before, d.F1After, d.DeltaF1, d.SDDelta, d.Worse, d.Folds, mark)
	}
	return nil
}

// writeChallenger says when the shipped model stays against the rule's
// choice ([eval.Selection.Challenger]).
func writeChallenger(w io.Writer, s eval.Selection) {
	if s.Challenger == "" {
		return
	}
	fmt.Fprintf(w, "  %-12s   the shipped model stays: %s, the rule's choice before this step, does not beat it by more than the spread on a set without losing to it by more on another\n", "", s.Challenger)
	if !slices.ContainsFunc(s.Eligible, func(e eval.Eligible) bool { return e.Candidate == s.Candidate }) {
		fmt.Fprintf(w, "  %-12s   (%s is not eligible itself here: it stands only because nothing beats it)\n", "", s.Candidate)
	}
}

func writeCVText(w io.Writer, rep *eval.CVReport) {
	fmt.Fprintf(w, "cross-validation: %d repeats of stratified %d-fold (mean over %d test folds; sd = fold-to-fold standard deviation)\n",
		rep.Repeats, rep.Folds, rep.Repeats*rep.Folds)
	if a := rep.Across; a != nil {
		// -seeds N: the tables are the first shuffle's alone; each seed's
		// choice is named in the selection across seeds.
		fmt.Fprintf(w, "the tables below are seed %d's, one of seeds %v; the selection across them is at the end\n", rep.Seed, a.Seeds)
	}
	for _, t := range rep.Tables {
		fmt.Fprintf(w, "\n%s, duplicate = %s\n", t.Set, t.Truth)
		fmt.Fprintf(w, "  %-36s %6s %6s %6s %6s %6s %6s %7s %6s %6s\n", "candidate", "params", "P", "sd", "R", "F1", "sd", "ΔF1 lcs", "sd", "ECE")
		for _, f := range t.Figures {
			fmt.Fprintf(w, "  %-36s %6d %6.3f %6.3f %6.3f %6.3f %6.3f %+7.3f %6.3f %6s\n", f.Candidate, f.Params, f.Precision, f.SDP, f.Recall, f.F1, f.SDF1, f.DeltaF1, f.SDDelta, fmtNaN(f.ECE))
		}
		if len(t.AtShipped) > 0 {
			fmt.Fprintf(w, "  every model at the shipped min_confidence %.2f (ΔF1 against the shipped model, same folds; folds better/worse):\n", t.ShippedConfidence)
			for _, f := range t.AtShipped {
				fmt.Fprintf(w, "  %-36s %6d %6.3f %6.3f %6.3f %6.3f %6.3f %+7.3f %6.3f %3d/%d\n", f.Candidate, f.Params, f.Precision, f.SDP, f.Recall, f.F1, f.SDF1, f.DeltaF1, f.SDDelta, f.Better, f.Worse)
			}
		}
		if len(t.AtOwn) > 0 && len(rep.Tables) > 0 {
			fmt.Fprintf(w, "  every model at its own min_confidence, set by the rule that set the shipped one (of the confidences with pooled P >= %.2f on %s, the one of best F1 averaged over the sets; pooled P is precision over every test fold's accepted pairs together, where P is the mean over folds and counts a fold that accepts nothing as 1); ΔF1 fold by fold against the LCS ratio at its F1-best threshold (paper), against the LCS ratio alone held to the same floor (%s), and against the shipped model at its own (folds better/worse); * beyond the spread:\n", eval.PrecisionFloor, rep.Tables[0].Set, eval.FloorReference)
			fmt.Fprintf(w, "  %-36s %6s %6s %6s %6s %6s %6s %-23s %-23s %s\n", "", "conf", "P", "pooled", "R", "F1", "sd", "vs paper lcs (b/w)", "vs lcs at floor (b/w)", "vs shipped (b/w)")
			for i, f := range t.AtOwn {
				fmt.Fprintf(w, "  %-36s %6.2f %6.3f %6.3f %6.3f %6.3f %6.3f %s %s %+7.3f %6.3f %3d/%d\n", f.Candidate, t.OwnConfidences[i], f.Precision, f.PooledPrecision, f.Recall, f.F1, f.SDF1, fmtPaired(f.VsPaper), fmtPaired(f.VsFloor), f.DeltaF1, f.SDDelta, f.Better, f.Worse)
			}
		}
		if len(t.InFold) > 0 {
			fmt.Fprintf(w, "  every model with its min_confidence set on each fold's training part by the same rule (pooled P >= %.2f on %s, read on an inner 5-fold cross-validation of the training part) and applied unchanged: the held-out protocol (P, its sd, pooled P, R, F1, its sd; ΔF1 against the LCS ratio at its in-fold threshold; folds better/worse):\n", eval.PrecisionFloor, rep.Tables[0].Set)
			for _, f := range t.InFold {
				fmt.Fprintf(w, "  %-36s %6d %6.3f %6.3f %6.3f %6.3f %6.3f %6.3f %+7.3f %6.3f %3d/%d\n", f.Candidate, f.Params, f.Precision, f.SDP, f.PooledPrecision, f.Recall, f.F1, f.SDF1, f.DeltaF1, f.SDDelta, f.Better, f.Worse)
			}
		}
		fmt.Fprintf(w, "  the shipped model by min_confidence (P, its sd, pooled P, R, F1, its sd; * best F1 on this set, the operator's choice for pages like these):\n")
		best := bestF1(t.Confidence)
		for i, f := range t.Confidence {
			mark := ""
			if i == best {
				mark = "*"
			}
			fmt.Fprintf(w, "  %-36s %6s %6.3f %6.3f %6.3f %6.3f %6.3f %6.3f\n", f.Candidate, mark, f.Precision, f.SDP, f.PooledPrecision, f.Recall, f.F1, f.SDF1)
		}
	}
	if len(rep.Selected) > 0 {
		fmt.Fprintf(w, "\nthe selection rule (a model must beat the LCS ratio, read either way, by more than the spread on a set and lose to it by more on none; fewest parameters, then more sets beaten, then mean F1; a larger model must beat the chosen one in turn; the shipped model stays unless the choice beats it by more than the spread on a set and loses to it by more on none):\n")
	}
	for _, s := range rep.Selected {
		if s.Error != "" {
			fmt.Fprintf(w, "  %-12s the rule could not be applied: %s\n", s.Truth, s.Error)
			continue
		}
		fmt.Fprintf(w, "  %-12s selects %s (%d parameters) at min_confidence %.2f\n", s.Truth, s.Candidate, s.Params, s.MinConfidence)
		for _, e := range s.Eligible {
			fmt.Fprintf(w, "  %-12s   eligible: %s (%d): beats %s on %s; mean F1 %.3f\n", "", e.Candidate, e.Params, e.Beat, strings.Join(e.Sets, ", "), e.MeanF1)
		}
		if len(s.Eligible) == 0 {
			fmt.Fprintf(w, "  %-12s   no model beats the LCS ratio by more than the spread: the rule's choice is the ratio alone\n", "")
		}
		writeChallenger(w, s)
		if rep.Across == nil {
			writeShippedCheck(w, s)
		}
	}
	if a := rep.Across; a != nil {
		fmt.Fprintf(w, "\nthe selection rule across seeds %v (what every seed selects; where they differ, the fewest parameters among the models eligible under every seed; the shipped model unless that beats it under every seed; the highest of their own confidences):\n", a.Seeds)
		for ti, s := range a.Selected {
			var per []string
			for si, ps := range a.PerSeed {
				per = append(per, fmt.Sprintf("seed %d: %s at %.2f", a.Seeds[si], ps[ti].Candidate, ps[ti].MinConfidence))
			}
			fmt.Fprintf(w, "  %-12s selects %s (%d parameters) at min_confidence %.2f (%s)\n", s.Truth, s.Candidate, s.Params, s.MinConfidence, strings.Join(per, "; "))
			var names []string
			for _, e := range s.Eligible {
				names = append(names, e.Candidate)
			}
			fmt.Fprintf(w, "  %-12s   eligible under every seed: %s\n", "", cmp.Or(strings.Join(names, ", "), "none"))
			writeChallenger(w, s)
			writeShippedCheck(w, s)
		}
	}
	fmt.Fprintf(w, "\nmodels fitted on all pairs of every set (similarity/fitted.go holds these):\n")
	for _, m := range rep.Fitted {
		fmt.Fprintf(w, "  %-12s seq   intercept %.4f", m.Truth, m.Seq.Intercept)
		for i, f := range m.Seq.Features {
			fmt.Fprintf(w, ", %s %.4f", f, m.Seq.Weights[i])
		}
		if sp := m.SeqFolds; len(sp.Mean) == 1+len(m.Seq.Features) {
			fmt.Fprintf(w, "\n  %-12s seq on the %d training parts: intercept %.2f ± %.2f", "", rep.Folds*rep.Repeats, sp.Mean[0], sp.SD[0])
			for i, f := range m.Seq.Features {
				fmt.Fprintf(w, ", %s %.2f ± %.2f", f, sp.Mean[i+1], sp.SD[i+1])
			}
		}
		fmt.Fprintf(w, "\n  %-12s noseq intercept %.4f", "", m.NoSeq.Intercept)
		for i, f := range m.NoSeq.Features {
			fmt.Fprintf(w, ", %s %.4f", f, m.NoSeq.Weights[i])
		}
		fmt.Fprintf(w, "\n  %-12s non-candidate rate %.4f\n", "", m.NonCandidate)
	}
}

// writeShippedCheck says when the default decision of the selection's
// truth is not what the rule selected.
func writeShippedCheck(w io.Writer, s eval.Selection) {
	if shipped, conf := eval.Shipped(s.Truth); shipped != "" && (shipped != s.Candidate || conf != s.MinConfidence) {
		fmt.Fprintf(w, "  %-12s   NOT what ships: %s at %.2f (similarity/fitted.go)\n", "", shipped, conf)
	}
}

// fmtPaired formats a paired comparison as "+0.012 ± 0.034*  75/2 ", the
// star marking a gain beyond the spread, then the folds better and worse.
func fmtPaired(p *eval.Paired) string {
	if p == nil {
		return fmt.Sprintf("%23s", "-")
	}
	mark := " "
	if p.Beyond() {
		mark = "*"
	}
	return fmt.Sprintf("%+7.3f ± %5.3f%s %3d/%-3d", p.DeltaF1, p.SD, mark, p.Better, p.Worse)
}

func fmtNaN(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.3f", x)
}

// writeEvalJSON writes the report with the first definition's default
// decision under "default" (label >= 1 in pair mode, dup in corpus mode).
func writeEvalJSON(w io.Writer, rep *eval.Report) error {
	out := map[string]any{
		"dir": rep.Dir, "mode": rep.Mode, "docs": rep.Docs,
		"results": rep.Results,
	}
	if len(rep.Results) > 0 {
		d := rep.Results[0].Default
		out["default"] = map[string]any{"precision": d.Precision, "recall": d.Recall, "f1": d.F1,
			"tp": d.TP, "fp": d.FP, "fn": d.FN, "definition": rep.Results[0].Definition}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeEvalText(w io.Writer, rep *eval.Report, method string, o eval.Options) {
	fmt.Fprintf(w, "data  %s (%s mode, %d documents)\n", rep.Dir, rep.Mode, rep.Docs)
	for _, r := range rep.Results {
		fmt.Fprintf(w, "\nduplicate = %s: %d pairs, %d duplicates\n", r.Definition, r.Pairs, r.Positives)
		fmt.Fprintf(w, "  %-14s %-52s %6s %6s %6s   %-9s %6s %6s %6s\n", "method", "published setting", "P", "R", "F1", "best at", "P", "R", "F1")
		for _, m := range r.Methods {
			pub := "      -      -      -"
			if m.Published != nil {
				pub = fmt.Sprintf("%6.3f %6.3f %6.3f", m.Published.Precision, m.Published.Recall, m.Published.F1)
			}
			fmt.Fprintf(w, "  %-14s %-52s %s   %-9.3g %6.3f %6.3f %6.3f\n", m.Name, m.Source, pub,
				m.Best.Threshold, m.Best.Precision, m.Best.Recall, m.Best.F1)
			if t := m.Transferred; t != nil {
				setting := fmt.Sprintf("  at %.3g, chosen on %s", t.Threshold, filepath.Base(filepath.Clean(r.ThresholdsFrom)))
				fmt.Fprintf(w, "  %-14s %-52s %6.3f %6.3f %6.3f   (tp %d, fp %d, fn %d)\n", "", setting, t.Precision, t.Recall, t.F1, t.TP, t.FP, t.FN)
			}
		}
		d := r.Default
		fmt.Fprintf(w, "  %-14s %-52s %6.3f %6.3f %6.3f   (tp %d, fp %d, fn %d)\n", "winnow", "decision: "+method, d.Precision, d.Recall, d.F1, d.TP, d.FP, d.FN)
		for _, mode := range []struct {
			name string
			dec  similarity.Decision
		}{{"group", o.Group}, {"remove", o.Remove}} {
			d := r.Decisions[mode.name]
			setting := fmt.Sprintf("%s decision, min_confidence %.2f", mode.name, mode.dec.MinConfidence())
			fmt.Fprintf(w, "  %-14s %-52s %6.3f %6.3f %6.3f   (tp %d, fp %d, fn %d; ECE %s)\n", "winnow", setting, d.Precision, d.Recall, d.F1, d.TP, d.FP, d.FN, fmtNaN(r.ECE[mode.name]))
			if t, ok := r.DecisionsTransferred[mode.name]; ok {
				setting := fmt.Sprintf("  at min_confidence %.2f, chosen on %s", t.Threshold, filepath.Base(filepath.Clean(r.ThresholdsFrom)))
				fmt.Fprintf(w, "  %-14s %-52s %6.3f %6.3f %6.3f   (tp %d, fp %d, fn %d)\n", "", setting, t.Precision, t.Recall, t.F1, t.TP, t.FP, t.FN)
			}
			for _, pt := range r.Confidence[mode.name] {
				fmt.Fprintf(w, "  %-14s %-52s %6.3f %6.3f %6.3f\n", "", fmt.Sprintf("  at min_confidence %.2f", pt.Threshold), pt.Precision, pt.Recall, pt.F1)
			}
		}
		if r.ClusterPairs != nil {
			c, b := r.ClusterPairs, r.ClusterBCubed
			fmt.Fprintf(w, "  %-14s %-52s %6.3f %6.3f %6.3f\n", "clusters", "batch clustering, pairwise", c.Precision, c.Recall, c.F1)
			fmt.Fprintf(w, "  %-14s %-52s %6.3f %6.3f %6.3f\n", "clusters", "batch clustering, B-cubed", b.Precision, b.Recall, b.F1)
		}
	}
}

// transferThresholds scores the paper methods of rep at the thresholds
// chosen on the labelled set dev (eval.Report.TransferThresholds).
func transferThresholds(ctx context.Context, rep *eval.Report, dev string, o eval.Options) error {
	devSet, err := eval.Load(dev)
	if err != nil {
		return fmt.Errorf("-thresholds-from: %w", err)
	}
	devRep, err := eval.Run(ctx, devSet, o)
	if err != nil {
		return fmt.Errorf("-thresholds-from: %w", err)
	}
	if rep.TransferThresholds(devRep) == 0 {
		return fmt.Errorf("-thresholds-from %s: it shares no definition of duplicate with %s (%s mode against %s mode)", dev, rep.Dir, devRep.Mode, rep.Mode)
	}
	return nil
}

// writeScores writes one line per scored pair: the two documents, the
// gold label, every score, the decision's verdict and the mode decisions'
// probabilities (p_group, p_remove; NaN under a paper method, which gives
// none).
func writeScores(path string, set *eval.Set, rep *eval.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "doc_a\tdoc_b\tlabel\tsimhash\tbloom_ab\tbloom_ba\tcontain_ab\tcontain_ba\tjaccard\tsupershingles\tfingerprints\tlength_ratio\tlcs\tlcs_central\tcoverage_a\tcoverage_b\tdivergence\tpage_divergence\tbag\tverdict\tp_group\tp_remove")
	for _, sp := range rep.Scored {
		s := sp.Scores
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%d\t%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%v\t%.4f\t%.4f\n",
			set.Docs[sp.A].ID, set.Docs[sp.B].ID, sp.Label, s.SimhashDistance, s.BloomAB, s.BloomBA, s.ContainAB, s.ContainBA,
			s.Jaccard, s.Supershingles, s.Fingerprints, s.LengthRatio, s.LCS, s.Central, s.CoverageA, s.CoverageB, s.Divergence, s.PageDivergence, s.Bag, sp.Verdict, sp.Group.Probability, sp.Remove.Probability)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runIncremental scores the cluster service's incremental groups against
// a batch clustering (Zhu Table 1) and prints the growth of their costs
// (Zhu Fig. 7).
func runIncremental(ctx context.Context, e *env, set *eval.Set, o eval.Options, asJSON bool) error {
	c := e.cfg.Cluster
	so, err := options.ClusterService(e.cfg, e.log)
	if err != nil {
		return err
	}
	so.Decision = o.Decision // the decision under evaluation
	svc, err := cluster.New(cluster.NewMemStore(), so)
	if err != nil {
		return err
	}
	rep, err := eval.Incremental(ctx, set, o, svc)
	if err != nil {
		return err
	}
	if asJSON {
		return writeIndentedJSON(e.stdout, rep)
	}
	w := e.stdout
	fmt.Fprintf(w, "data  %s: %d documents fed one by one (keep_seq %v)\n\n", set.Dir, rep.Docs, c.Seq())
	fmt.Fprintf(w, "  %-12s %6s %6s %6s\n", "", "P", "R", "F1")
	fmt.Fprintf(w, "  %-12s %6.3f %6.3f %6.3f   ingest %v\n", "incremental", rep.Incremental.Precision, rep.Incremental.Recall, rep.Incremental.F1, rep.IngestTime.Round(time.Millisecond))
	fmt.Fprintf(w, "  %-12s %6.3f %6.3f %6.3f   batch %v\n", "batch", rep.Batch.Precision, rep.Batch.Recall, rep.Batch.F1, rep.BatchTime.Round(time.Millisecond))
	fmt.Fprintf(w, "  relative error: precision %.2f%%, recall %.2f%% (Zhu Table 1: about 1%% and 1.7%%)\n\n", 100*rep.RelErrPrecision, 100*rep.RelErrRecall)
	fmt.Fprintf(w, "  %6s %16s %16s\n", "docs", "incremental step", "from scratch")
	for _, s := range rep.Steps {
		fmt.Fprintf(w, "  %6d %16v %16v\n", s.Docs, s.Incremental.Round(time.Microsecond), s.FromScratch.Round(time.Microsecond))
	}
	return nil
}

// bestF1 returns the index of the figure of highest F1 (the first of
// equals), -1 when there is none.
func bestF1(fs []eval.CVFigure) int {
	best := -1
	for i, f := range fs {
		if best < 0 || f.F1 > fs[best].F1 {
			best = i
		}
	}
	return best
}

// writeBoundText prints eval -bound's table.
func writeBoundText(w io.Writer, figs []eval.BoundFigure) {
	fmt.Fprintf(w, "bound: the best F1 of any rule \"LCS ratio >= f(divergence)\", f nondecreasing (every model over the two scores that rises with the ratio and falls with the divergence, the shipped group decision's among them), fitted on the set itself (in-sample, so optimistic for the family: where even it does not beat the ratio, no such decision can be expected to on new pages of the kind), under the targets' precision floor; beside the best of the same rules with no floor, and the LCS ratio alone at its own best threshold on the set (the paper method the targets compare with)\n\n")
	fmt.Fprintf(w, "  %-10s %-18s %-31s %-24s %-8s %-30s %s\n", "truth", "set", "floor", "rule under it P / R / F1", "free F1", "LCS ratio P / R / F1 (at)", "rule beats ratio")
	for _, f := range figs {
		rule := "none keeps it"
		if f.Feasible {
			rule = fmt.Sprintf("%.3f / %.3f / %.3f", f.Rule.Precision, f.Rule.Recall, f.Rule.F1)
		}
		ratio := fmt.Sprintf("%.3f / %.3f / %.3f (%.3f)", f.Ratio.Precision, f.Ratio.Recall, f.Ratio.F1, f.Ratio.Threshold)
		beats := "no"
		if f.Beats() {
			beats = fmt.Sprintf("yes, by %.3f", f.Rule.F1-f.Ratio.F1)
		}
		fmt.Fprintf(w, "  %-10s %-18s %-31s %-24s %-8.3f %-30s %s\n", f.Truth, f.Set, fmt.Sprintf("P >= %.2f on %s", f.Floor, f.FloorSet), rule, f.Free.F1, ratio, beats)
	}
}

// writeBoundCutsText prints eval -bound -cuts' table: per set and truth,
// the scores whose best cut lifts the rule above the family's own bound.
func writeBoundCutsText(w io.Writer, figs []eval.BoundFigure, cuts []eval.BoundCut) {
	fmt.Fprintf(w, "\nwith one cut on one more score (the family widened by \"and score >= c\" or \"or score >= c\", c one of 20 quantiles, on LCS steps of 0.005; chosen in-sample among 40 cuts a score, so a lift here is a lead for cross-validation, not a result); the cuts that lift the rule over the family's bound above:\n\n")
	fmt.Fprintf(w, "  %-10s %-18s %-24s %-44s %-24s %s\n", "truth", "set", "family's bound F1", "best cut", "rule with it P / R / F1", "beats ratio")
	for _, f := range figs {
		lifted := false
		for _, c := range cuts {
			if c.Set != f.Set || c.Truth != f.Truth || !c.Feasible || (f.Feasible && c.Rule.F1 <= f.Rule.F1+1e-9) {
				continue
			}
			lifted = true
			beats := "no"
			if c.Rule.F1 > f.Ratio.F1 {
				beats = fmt.Sprintf("yes, by %.3f", c.Rule.F1-f.Ratio.F1)
			}
			fmt.Fprintf(w, "  %-10s %-18s %-24.3f %-44s %-24s %s\n", f.Truth, f.Set, f.Rule.F1, c.Cut, fmt.Sprintf("%.3f / %.3f / %.3f", c.Rule.Precision, c.Rule.Recall, c.Rule.F1), beats)
		}
		if !lifted {
			fmt.Fprintf(w, "  %-10s %-18s %-24.3f %s\n", f.Truth, f.Set, f.Rule.F1, "no cut lifts it")
		}
	}
}
