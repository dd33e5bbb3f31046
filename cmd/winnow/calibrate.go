package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/eval"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/options"
	"github.com/winnow-search/winnow/similarity"
)

// runCalibrate fits the decisions to labelled pairs ([eval.Calibrate])
// and writes the YAML fragment that -config reads.
func runCalibrate(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	out := fs.String("o", "", "write the YAML fragment to `FILE` (default: stdout, after the tables)")
	mode := fs.String("mode", "remove", "the decision to calibrate: group, remove or both")
	minPrecision := fs.Float64("min-precision", -1, "the precision the decision must hold under cross-validation (default 0.95 for remove; for group none, the best F1; 0: none)")
	folds := fs.Int("folds", 5, "folds of the cross-validation")
	repeats := fs.Int("repeats", 10, "repeats of the cross-validation")
	seed := fs.Uint64("seed", 0, "seed of the fold shuffles")
	asJSON := fs.Bool("json", false, "print the figures as JSON instead of tables")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: winnow calibrate [-o FILE] [-mode group|remove|both] [-min-precision 0.95] INPUT...\n\n"+
			"INPUT is a labelled data set folder (the layout of ../shared/eval: pairs.tsv and pairs/, or docs.tsv, html/ and pairs.tsv),\n"+
			"a TSV or JSONL list of page pairs (a, b: files or http(s) URLs; label: 0-3, or same/near/distinct),\n"+
			"or the search page's feedback log (serve.feedback_log).")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("calibrate takes one or more INPUTs")
	}
	var purposes []similarity.Purpose
	switch *mode {
	case "group":
		purposes = []similarity.Purpose{similarity.PurposeGroup}
	case "remove":
		purposes = []similarity.Purpose{similarity.PurposeRemove}
	case "both":
		purposes = []similarity.Purpose{similarity.PurposeGroup, similarity.PurposeRemove}
	default:
		return usagef("-mode %q is not group, remove or both", *mode)
	}
	if *minPrecision != -1 && (*minPrecision < 0 || *minPrecision > 1) {
		return usagef("-min-precision %g is not in [0, 1]", *minPrecision)
	}
	if *folds < 2 || *repeats < 1 {
		return usagef("-folds must be at least 2 and -repeats at least 1")
	}
	var sets []*eval.CVSet
	var names []string
	for _, in := range fs.Args() {
		s, err := loadCalibrationInput(ctx, e, in)
		if err != nil {
			return err
		}
		sets = append(sets, s)
		names = append(names, s.Name)
	}
	group, remove, err := options.Decisions(e.cfg)
	if err != nil {
		return err
	}
	frag := config.Calibration{}
	var cals []*eval.Calibration
	for _, p := range purposes {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := group.PurposeModels()
		if p == similarity.PurposeRemove {
			start = remove.PurposeModels()
		}
		floor := *minPrecision
		if floor == -1 {
			floor = 0
			if p == similarity.PurposeRemove {
				floor = eval.PrecisionFloor
			}
		}
		c, err := eval.Calibrate(sets, eval.CalibrateOptions{Purpose: p, MinPrecision: floor, Folds: *folds, Repeats: *repeats, Seed: *seed, Start: start})
		if err != nil {
			return err
		}
		cals = append(cals, c)
		for _, w := range c.Warnings {
			e.log.Warn("calibrate", "purpose", c.Purpose, "warning", w)
		}
		cal := config.Calibrated{
			Source: strings.Join(names, "+"), MinConfidence: c.MinConfidence,
			NumbersVeto:        c.Model.NumbersVeto,
			RefuseCutSequences: c.RefuseSeqCut,
			RefuseLinksAbove:   math.Ceil(c.RefuseLinks*1e4) / 1e4, // up: the limit refuses no pair it was chosen on
			TargetPrecision:    c.Target, Precision: round3(c.ChosenFigure.PooledPrecision),
			Recall: round3(c.ChosenFigure.Recall), F1: round3(c.ChosenFigure.F1),
			Pairs: c.Pairs, HoldsTarget: c.HoldsTarget,
		}
		if c.Chosen == "refit" {
			for i, f := range c.Model.Features {
				cal.Features = append(cal.Features, f.String())
				cal.Weights = append(cal.Weights, roundTo(c.Model.Weights[i], 4))
			}
			cal.Intercept = roundTo(c.Model.Intercept, 4)
		}
		if p == similarity.PurposeRemove {
			frag.Remove = cal
		} else {
			frag.Group = cal
		}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(cals); err != nil {
			return err
		}
	} else {
		for _, c := range cals {
			writeCalibrationText(e.stdout, c, names)
		}
	}
	y, err := calibrationYAML(frag, fs.Args(), *mode, *minPrecision, e.cfg.Signature.MaxSeq)
	if err != nil {
		return err
	}
	if *out == "" {
		if !*asJSON {
			_, err = e.stdout.Write(y)
		}
		return err
	}
	if err := os.WriteFile(*out, y, 0o644); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	e.log.Info("calibrate_written", "file", *out)
	return nil
}

func round3(x float64) float64 { return roundTo(x, 3) }

func roundTo(x float64, d int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', d, 64), 64)
	return v
}

// calibrationYAML returns the fragment -config reads: decision.calibration
// with the purposes calibrated, under a comment naming the command, and
// signature.max_seq when the pairs were signed with a word sequence of
// another length than the default (maxSeq, zero for the default): the
// figures hold for pages signed as they were, and whether a word
// sequence was cut (refuse_cut_sequences) depends on it.
func calibrationYAML(frag config.Calibration, inputs []string, mode string, minPrecision float64, maxSeq int) ([]byte, error) {
	type section struct {
		Group  *config.Calibrated `yaml:"group,omitempty"`
		Remove *config.Calibrated `yaml:"remove,omitempty"`
	}
	var s section
	if frag.Group.Set() {
		s.Group = &frag.Group
	}
	if frag.Remove.Set() {
		s.Remove = &frag.Remove
	}
	doc := map[string]any{"decision": map[string]section{"calibration": s}}
	if maxSeq != 0 && maxSeq != similarity.DefaultMaxSeq {
		doc["signature"] = map[string]int{"max_seq": maxSeq}
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	mp := ""
	if minPrecision != -1 {
		mp = fmt.Sprintf(" -min-precision %g", minPrecision)
	}
	head := fmt.Sprintf("# winnow calibrate -mode %s%s %s\n# read by winnow -config FILE (serve, dedup, eval, compare); docs/calibration.md\n",
		mode, mp, strings.Join(inputs, " "))
	return append([]byte(head), b...), nil
}

// writeCalibrationText prints a calibration's cross-validated figures.
func writeCalibrationText(w io.Writer, c *eval.Calibration, names []string) {
	fmt.Fprintf(w, "calibrate %s on %s: %d pairs, %d %s, %d candidates; target precision %.3f (0: none, the best F1); %d folds x %d repeats\n",
		c.Purpose, strings.Join(names, " + "), c.Pairs, c.Duplicates, map[string]string{"group": "near-duplicate", "remove": "content-equivalent"}[c.Purpose],
		c.Candidates, c.Target, c.Folds, c.Repeats)
	fmt.Fprintf(w, "  %-36s %-22s %-15s %-15s\n", "decision", "precision (pooled)", "recall", "F1")
	row := func(name string, f eval.CVFigure) {
		fmt.Fprintf(w, "  %-36s %.3f ± %.3f (%.3f)   %.3f          %.3f ± %.3f\n", name, f.Precision, f.SDP, f.PooledPrecision, f.Recall, f.F1, f.SDF1)
	}
	row(c.Shipped.Candidate, c.Shipped)
	row("calibrated confidence", c.Confidence)
	row("refit coefficients", c.Refit)
	if c.Veto != nil {
		row("numbers veto", *c.Veto)
	}
	if c.CutRefused != nil {
		row("cut sequences refused", *c.CutRefused)
	}
	if c.LinksRefused != nil {
		row("link targets refused", *c.LinksRefused)
	}
	row("LCS ratio (own threshold)", c.LCS)
	if c.LCSAtTarget != nil {
		row("LCS ratio (held to the target)", *c.LCSAtTarget)
	}
	fmt.Fprintf(w, "  refit vs calibrated confidence: F1 %+.3f ± %.3f (%d folds better, %d worse)\n",
		c.RefitVsConfidence.DeltaF1, c.RefitVsConfidence.SD, c.RefitVsConfidence.Better, c.RefitVsConfidence.Worse)
	if c.VetoVsConfidence != nil {
		fmt.Fprintf(w, "  numbers veto vs calibrated confidence: F1 %+.3f ± %.3f (%d folds better, %d worse)\n",
			c.VetoVsConfidence.DeltaF1, c.VetoVsConfidence.SD, c.VetoVsConfidence.Better, c.VetoVsConfidence.Worse)
	}
	fmt.Fprintf(w, "  chosen vs LCS ratio (own threshold): F1 %+.3f ± %.3f (%d folds better, %d worse)\n",
		c.ChosenVsLCS.DeltaF1, c.ChosenVsLCS.SD, c.ChosenVsLCS.Better, c.ChosenVsLCS.Worse)
	if p := c.ChosenVsLCSAtTarget; p != nil {
		fmt.Fprintf(w, "  chosen vs LCS ratio (held to the target): F1 %+.3f ± %.3f (%d folds better, %d worse)\n",
			p.DeltaF1, p.SD, p.Better, p.Worse)
	}
	holds := "holds"
	if !c.HoldsTarget {
		holds = "DOES NOT HOLD"
	}
	fmt.Fprintf(w, "  chosen: %s, min_confidence %.2f: cross-validated precision %.3f %s the target %.3f, leaving recall %.3f (F1 %.3f; LCS ratio %.3f)\n",
		c.Chosen, c.MinConfidence, c.ChosenFigure.PooledPrecision, holds, c.Target, c.ChosenFigure.Recall, c.ChosenFigure.F1, c.LCS.F1)
	for _, warn := range c.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	fmt.Fprintln(w)
}

// loadCalibrationInput reads one INPUT of calibrate as scored pairs.
func loadCalibrationInput(ctx context.Context, e *env, in string) (*eval.CVSet, error) {
	st, err := os.Stat(in)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(filepath.Clean(in)), filepath.Ext(in))
	if st.IsDir() {
		sets, err := loadCVSets(ctx, e, []string{in})
		if err != nil {
			return nil, err
		}
		return sets[0], nil
	}
	rows, skipped, err := readPairRows(in)
	if err != nil {
		return nil, err
	}
	if skipped > 0 {
		e.log.Warn("calibrate_feedback_unscored", "file", in, "skipped", skipped,
			"why", "the proxy no longer held both pages' signatures when the reader judged them")
	}
	scored := make([]eval.ScoredPair, 0, len(rows))
	var signer *pairSigner
	for _, r := range rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.scores != nil {
			scored = append(scored, eval.ScoredPair{Label: r.label, Scores: similarity.ScoresFromRecord(r.scores), Candidate: r.candidate})
			continue
		}
		if signer == nil {
			if signer, err = newPairSigner(e); err != nil {
				return nil, err
			}
		}
		sp, err := signer.score(ctx, filepath.Dir(in), r)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", in, r.line, err)
		}
		scored = append(scored, sp)
	}
	if len(scored) == 0 {
		return nil, fmt.Errorf("calibrate: %s: no labelled pairs", in)
	}
	return eval.NewPairCVSet(name, scored), nil
}

// pairRow is one labelled pair of a list or of the feedback log.
type pairRow struct {
	line      int
	a, b      string
	label     int
	scores    map[string]float64 // the feedback log's; nil: sign the pages
	candidate bool
}

// feedbackVerdicts maps the search page's verdicts onto the 0-3 scale:
// "same page" is content-equivalent, "not a duplicate" distinct.
var feedbackVerdicts = map[string]int{"same_page": 3, "not_duplicate": 0}

// parseLabel reads a pair list's label: 0-3 (the webis-ecir20 scale), or
// a word.
func parseLabel(s string) (int, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "0", "distinct", "none", "not_duplicate", "no":
		return 0, nil
	case "1", "near", "near-duplicate":
		return 1, nil
	case "2":
		return 2, nil
	case "3", "same", "same_page", "dup", "duplicate", "content-equivalent", "yes":
		return 3, nil
	}
	return 0, fmt.Errorf("label %q is not 0-3, same, near or distinct", s)
}

// readPairRows reads a TSV (a, b, label; a header line) or JSONL list of
// labelled pairs, or the feedback log (JSONL with verdict and scores),
// and counts the feedback records it skips for want of scores.
func readPairRows(path string) ([]pairRow, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("calibrate: %w", err)
	}
	defer f.Close()
	var rows []pairRow
	skipped := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(err error) error { return fmt.Errorf("calibrate: %s line %d: %w", path, n, err) }
		if strings.HasPrefix(line, "{") {
			var rec struct {
				A, B      string
				Label     json.RawMessage    `json:"label"`
				Verdict   string             `json:"verdict"`
				Scores    map[string]float64 `json:"scores"`
				Candidate bool               `json:"candidate"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				return nil, 0, bad(err)
			}
			r := pairRow{line: n, a: rec.A, b: rec.B, scores: rec.Scores, candidate: rec.Candidate}
			switch {
			case rec.Verdict != "":
				l, ok := feedbackVerdicts[rec.Verdict]
				if !ok {
					return nil, 0, bad(fmt.Errorf("verdict %q is not same_page or not_duplicate", rec.Verdict))
				}
				if rec.Scores == nil {
					// The proxy no longer held both signatures: the
					// pair cannot be scored from the log alone.
					skipped++
					continue
				}
				r.label = l
			case len(rec.Label) > 0:
				l, err := parseLabel(strings.Trim(string(rec.Label), `"`))
				if err != nil {
					return nil, 0, bad(err)
				}
				r.label = l
			default:
				return nil, 0, bad(errors.New("no label and no verdict"))
			}
			if r.scores == nil && (r.a == "" || r.b == "") {
				return nil, 0, bad(errors.New("a pair needs a and b"))
			}
			rows = append(rows, r)
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 3 {
			return nil, 0, bad(fmt.Errorf("%d columns, want a, b, label (tab-separated)", len(cols)))
		}
		l, err := parseLabel(cols[2])
		if err != nil {
			if len(rows) == 0 && n == 1 {
				continue // a header
			}
			return nil, 0, bad(err)
		}
		rows = append(rows, pairRow{line: n, a: cols[0], b: cols[1], label: l})
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("calibrate: %s: %w", path, err)
	}
	return rows, skipped, nil
}

// pairSigner signs the pages of a pair list: files (relative to the
// list) or http(s) URLs, fetched under the SSRF guard of serve.fetch.
type pairSigner struct {
	e       *env
	fetcher *fetch.Client
	cache   map[string]*similarity.Signature
}

func newPairSigner(e *env) (*pairSigner, error) {
	return &pairSigner{e: e, cache: map[string]*similarity.Signature{}}, nil
}

func (ps *pairSigner) sign(ctx context.Context, dir, name string) (*similarity.Signature, error) {
	if s, ok := ps.cache[name]; ok {
		return s, nil
	}
	var body []byte
	var ct string
	if strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://") {
		if ps.fetcher == nil {
			c, err := fetch.New(fetch.Options{Timeout: 10 * time.Second})
			if err != nil {
				return nil, err
			}
			ps.fetcher = c
		}
		p, err := ps.fetcher.Get(ctx, name, fetch.Validators{})
		if err != nil {
			return nil, err
		}
		if p.Status != 200 {
			return nil, fmt.Errorf("%s: status %d", name, p.Status)
		}
		body, ct = p.Body, p.ContentType
	} else {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		var err error
		if body, ct, err = readPage(ps.e, path); err != nil {
			return nil, err
		}
	}
	res, err := options.Signer(ps.e.cfg).Sign(body, ct)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ps.cache[name] = &res.Sig
	return &res.Sig, nil
}

// score signs both pages of r and scores them as eval does.
func (ps *pairSigner) score(ctx context.Context, dir string, r pairRow) (eval.ScoredPair, error) {
	a, err := ps.sign(ctx, dir, r.a)
	if err != nil {
		return eval.ScoredPair{}, err
	}
	b, err := ps.sign(ctx, dir, r.b)
	if err != nil {
		return eval.ScoredPair{}, err
	}
	sp := eval.ScoredPair{Label: r.label, Candidate: similarity.Decision{}.IsCandidate(a, b)}
	sp.Scores = similarity.Compare(a, b, eval.ScoreOptions())
	sp.Capped, sp.SeqCut = a.Capped || b.Capped, a.SeqCut() || b.SeqCut()
	sp.Remove.Refused = sp.Capped
	return sp, nil
}
