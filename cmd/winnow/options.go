package main

import (
	"fmt"

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

// decision maps the configuration onto a similarity decision.
func decision(c config.Config) (similarity.Decision, error) {
	d := c.Decision
	if d.Method == "default" {
		return similarity.Decision{MinTokens: d.MinTokens}, nil
	}
	m, err := similarity.ParseMethod(d.Method)
	if err != nil {
		return similarity.Decision{}, fmt.Errorf("decision.method: %w", err)
	}
	t := m.DefaultThreshold()
	if d.Threshold != 0 {
		t = d.Threshold
	}
	dec := similarity.SingleMethod(m, t)
	dec.MinTokens = d.MinTokens
	return dec, nil
}

// modeDecisions returns the decisions of the modes: group (also for
// annotate) and remove.
func modeDecisions(c config.Config) (group, remove similarity.Decision, err error) {
	group = similarity.Decision{Purpose: similarity.PurposeGroup, MinTokens: c.Decision.MinTokens}
	remove = similarity.Decision{Purpose: similarity.PurposeRemove, MinTokens: c.Decision.MinTokens}
	return group, remove, nil
}
