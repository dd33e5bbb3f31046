package main

import (
	"fmt"
	"strconv"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// signer maps the configuration onto the page signer.
func signer(c config.Config) page.Signer {
	content := canon.ContentMain
	if c.Canon.Content == "all" {
		content = canon.ContentAll
	}
	s := c.Signature
	return page.Signer{
		Canon: canon.Options{MaxBytes: c.Canon.MaxBytes, Content: content},
		Signature: similarity.Options{
			ChunkAvg:       s.ChunkSize,
			BloomBits:      s.BloomBits,
			BloomHashes:    s.BloomHashes,
			MinHashes:      s.MinHashes,
			MinHashShingle: s.ShingleWords,
			Fingerprints:   s.Fingerprints,
			LengthDims:     s.LengthDims,
			MaxSeq:         s.MaxSeq,
		}.WithDefaults(),
	}
}

// decision maps the configuration onto the near-duplicate decision (the
// group mode's), which compare, eval, the cluster service and dedup's
// grouping use.
func decision(c config.Config) (similarity.Decision, error) {
	group, _, err := modeDecisions(c) // both, so a bad remove setting fails too
	return group, err
}

// modeDecisions returns the decisions of the modes: group (also for
// annotate) and remove.
func modeDecisions(c config.Config) (group, remove similarity.Decision, err error) {
	if group, err = purposeDecision(c, similarity.PurposeGroup); err != nil {
		return group, remove, err
	}
	remove, err = purposeDecision(c, similarity.PurposeRemove)
	return group, remove, err
}

// purposeDecision reads the decision.* keys through
// similarity.ParseDecision, so config, -set and the proxy's request
// parameters mean the same.
func purposeDecision(c config.Config, p similarity.Purpose) (similarity.Decision, error) {
	d := c.Decision
	num := func(v float64) string {
		if v == 0 {
			return "" // zero keeps the default
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	conf, confKey := d.MinConfidence.Group, "decision.min_confidence.group"
	if p == similarity.PurposeRemove {
		conf, confKey = d.MinConfidence.Remove, "decision.min_confidence.remove"
	}
	dec, err := similarity.ParseDecision(p,
		similarity.DecisionSettings{Method: d.Method, Threshold: num(d.Threshold), MinConfidence: num(conf)},
		similarity.DecisionFields{Method: "decision.method", Threshold: "decision.threshold", MinConfidence: confKey},
		d.MinTokens)
	if err != nil {
		return dec, fmt.Errorf("config: %w", err)
	}
	return dec, nil
}
