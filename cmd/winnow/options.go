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

// methods maps config method names onto similarity methods with their
// published thresholds (NaN-free: LCS methods have none, so a default is
// chosen on the dev data).
var methods = map[string]struct {
	m         similarity.Method
	threshold float64
}{
	"simhash":       {similarity.MethodSimhash, similarity.PaperSimhash},
	"bloom":         {similarity.MethodBloom, similarity.PaperBloom},
	"supershingles": {similarity.MethodSupershingles, similarity.PaperSupershingles},
	"jaccard":       {similarity.MethodJaccard, similarity.DefaultVerifyJaccard},
	"lcs":           {similarity.MethodLCS, similarity.DefaultVerifyCentral},
	"lcs-central":   {similarity.MethodLCSCentral, similarity.DefaultVerifyCentral},
}

// decision maps the configuration onto a similarity decision.
func decision(c config.Config) (similarity.Decision, error) {
	d := c.Decision
	if d.Method == "default" {
		return similarity.Decision{MinTokens: d.MinTokens}, nil
	}
	m, ok := methods[d.Method]
	if !ok {
		return similarity.Decision{}, fmt.Errorf("decision.method %q is unknown", d.Method)
	}
	t := m.threshold
	if d.Threshold != 0 {
		t = d.Threshold
	}
	dec := similarity.SingleMethod(m.m, t)
	dec.MinTokens = d.MinTokens
	return dec, nil
}
