package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"time"

	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/options"
	"github.com/winnow-search/winnow/resultlist"

	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/similarity"
)

// runCompare explains whether B is a near-duplicate of A. Its exit
// status answers the question as cmp(1) does, for scripts: 0 when the
// group decision calls B a near-duplicate of A, 1 when it does not, 2 on
// an error (a page that cannot be read or signed, a bad flag).
func runCompare(ctx context.Context, e *env, args []string) error {
	err := compare(ctx, e, args)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp), errors.Is(err, errNotDuplicate):
		return err
	case errors.Is(err, errUsage):
		return err // exit 2 already
	}
	return exitError{code: 2, err: err}
}

// errNotDuplicate is compare's answer "no": exit status 1, no message.
var errNotDuplicate = exitError{code: 1}

func compare(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: winnow compare [-json] A B   (files, http(s) URLs, or - for stdin once)\n\n"+
			"Exit status: 0 when B is a near-duplicate of A, 1 when not, 2 on an error.")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("compare takes two pages (files or URLs)")
	}
	dec, err := options.Decision(e.cfg)
	if err != nil {
		return err
	}
	sg := options.Signer(e.cfg)
	var fc *fetch.Client
	defer func() {
		if fc != nil {
			fc.Close()
		}
	}()
	var sigs [2]similarity.Signature
	for i := range sigs {
		var body []byte
		var ct string
		if name := fs.Arg(i); strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://") {
			if fc == nil {
				if fc, err = compareFetcher(e); err != nil {
					return err
				}
			}
			p, err := fc.Get(ctx, name, fetch.Validators{})
			if errors.Is(err, fetch.ErrBlocked) {
				return fmt.Errorf("%s: %w (to fetch from a network you trust, name it: -set serve.fetch.allow=PREFIX, e.g. 127.0.0.0/8)", name, err)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if p.Status != 200 {
				return fmt.Errorf("%s: HTTP status %d", name, p.Status)
			}
			body, ct = p.Body, p.ContentType
		} else if body, ct, err = readPage(e, name); err != nil {
			return err
		}
		res, err := sg.Sign(body, ct)
		if err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(i), err) // which of the two
		}
		sigs[i] = res.Sig
	}
	// Aligned to the end: a person reads these probabilities, so they are
	// the pair's, never the bound an early exit leaves.
	dec.Exact = true
	v := dec.Decide(&sigs[0], &sigs[1])
	_, remove, _ := options.Decisions(e.cfg) // checked by decision above
	remove.Exact = true
	rv := remove.DecideAfter(&sigs[0], &sigs[1], &v) // the group verdict's alignment
	all := similarity.Compare(&sigs[0], &sigs[1], similarity.CompareOptions{LCS: true, Numbers: true})
	if *asJSON {
		out := map[string]any{
			"a": fs.Arg(0), "b": fs.Arg(1),
			"duplicate": v.Duplicate, "relation": v.Relation.String(),
			"verdict": v.String(), "explain": v.Explain(),
			"probability": offline.Probability(v.Probability),
			"remove":      map[string]any{"duplicate": resultlist.Removable(rv), "probability": offline.Probability(rv.Probability), "explain": rv.Explain()},
			"scores":      offline.NewScores(&all),
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return err
		}
		return verdictStatus(v)
	}
	w := e.stdout
	fmt.Fprintf(w, "a  %s (%d tokens)\nb  %s (%d tokens)\n\n", fs.Arg(0), sigs[0].Tokens, fs.Arg(1), sigs[1].Tokens)
	// Each verdict under the name of the decision of the modes that use
	// it: group (group and annotate mode), remove.
	fmt.Fprintf(w, "%-8s %s\n", resultlist.Group.Purpose(), v.String())
	fmt.Fprintf(w, "why      %s\n", v.Explain())
	fmt.Fprintf(w, "%-8s %s\n", resultlist.Remove.Purpose(), rv.String())
	fmt.Fprintf(w, "why      %s\n\nall scores:\n", rv.Explain())
	for _, kv := range scoresList(&all) {
		fmt.Fprintf(w, "  %-18s %s\n", kv[0], kv[1])
	}
	return verdictStatus(v)
}

// verdictStatus is compare's exit status for the group decision's verdict.
func verdictStatus(v similarity.Verdict) error {
	if v.Duplicate {
		return nil
	}
	return errNotDuplicate
}

// compareFetcher fetches the pages compare is given as URLs the way
// winnow serve fetches result pages: SSRF-safe unless serve.fetch.allow
// opens a network, with the same caps and timeout.
func compareFetcher(e *env) (*fetch.Client, error) {
	f := e.cfg.Serve.Fetch
	o := fetch.Options{
		Timeout:      time.Duration(f.Timeout),
		MaxBodyBytes: int64(f.MaxBodyBytes),
		MaxRedirects: f.MaxRedirects,
		UserAgent:    f.UserAgent,
		Logger:       e.log,
	}
	for _, a := range f.Allow {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return nil, fmt.Errorf("serve.fetch.allow: %w", err)
		}
		o.Allow = append(o.Allow, p)
	}
	return fetch.New(o)
}

// numbersDiffer formats [similarity.Scores.NumbersDiffer], "-" when the
// numbers were not compared.
func numbersDiffer(s *similarity.Scores) string {
	if !s.HasNumbers {
		return "-"
	}
	return fmt.Sprint(s.NumbersDiffer)
}

// scoresList returns every score as name and formatted value, in a stable
// order, with the paper threshold in brackets where there is one.
func scoresList(s *similarity.Scores) [][2]string {
	f := func(x float64) string {
		if math.IsNaN(x) {
			return "-"
		}
		return fmt.Sprintf("%.3f", x)
	}
	return [][2]string{
		{"simhash distance", fmt.Sprintf("%d  (Moz: <= %d)", s.SimhashDistance, similarity.PaperSimhash)},
		{"bloom a->b", f(s.BloomAB) + fmt.Sprintf("  (Jain: >= %.2f)", similarity.PaperBloom)},
		{"bloom b->a", f(s.BloomBA)},
		{"containment a->b", f(s.ContainAB)},
		{"containment b->a", f(s.ContainBA)},
		{"relation", s.Containment.String()},
		{"jaccard", f(s.Jaccard)},
		{"supershingles", fmt.Sprintf("%d of 6  (Fetterly: >= %d)", s.Supershingles, similarity.PaperSupershingles)},
		{"fingerprints", fmt.Sprintf("%d shared", s.Fingerprints)},
		{"length ratio", f(s.LengthRatio)},
		{"lcs ratio", f(s.LCS)},
		{"lcs central", f(s.Central)},
		{"coverage a, b", f(s.CoverageA) + ", " + f(s.CoverageB)},
		{"divergence", f(s.Divergence)},
		{"numbers differ", numbersDiffer(s)},
	}
}
