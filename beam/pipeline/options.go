package pipeline

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// settings is what a worker rebuilds from the configuration it is sent:
// the signer, the decision and the corpus options of `winnow dedup`.
type settings struct {
	cfg      config.Config
	signer   page.Signer
	decision similarity.Decision
}

// encodeConfig serializes c for the workers (a DoFn's fields travel as
// JSON; the YAML form is the configuration's own and round-trips).
func encodeConfig(c config.Config) ([]byte, error) { return yaml.Marshal(c) }

// decodeSettings rebuilds the settings from encodeConfig's bytes.
func decodeSettings(b []byte) (*settings, error) {
	var c config.Config
	if err := config.Parse(b, &c); err != nil {
		return nil, fmt.Errorf("pipeline: config: %w", err)
	}
	c = c.WithDefaults()
	d, err := decision(c)
	if err != nil {
		return nil, err
	}
	return &settings{cfg: c, signer: signer(c), decision: d}, nil
}

// signer and decision map the configuration as cmd/winnow's options.go
// does (a main package cannot be imported); the equality test against the
// winnow binary catches a drift.
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
