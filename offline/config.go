package offline

import (
	"fmt"
	"iter"
	"strconv"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// Signer maps the configuration (canon.*, signature.*) onto the page
// signer.
func Signer(c config.Config) page.Signer {
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

// Decisions returns the decisions of the modes: group (also for annotate
// and for clustering) and remove (whether a duplicate may be deleted). It
// reads the decision.* keys through similarity.ParseDecision, so config,
// -set and the proxy's request parameters mean the same; an error names
// the field at fault.
func Decisions(c config.Config) (group, remove similarity.Decision, err error) {
	if group, err = purposeDecision(c, similarity.PurposeGroup); err != nil {
		return group, remove, err
	}
	remove, err = purposeDecision(c, similarity.PurposeRemove)
	return group, remove, err
}

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

// CorpusOptions are the corpus options of dedup.* (the file size cap and
// the JSON Lines and Parquet fields). An empty field list means the
// default, as a missing one does: a configuration that went through YAML
// (the Beam workers') has [] where it had nil. OnSkip and Targets are left
// to the caller.
func CorpusOptions(c config.Config) corpus.Options {
	f := c.Dedup.Fields
	orDefault := func(names []string) []string {
		if len(names) == 0 {
			return nil // corpus's default
		}
		return names
	}
	return corpus.Options{
		MaxFileSize: int64(c.Dedup.MaxFileBytes),
		Fields: corpus.JSONLFields{ID: orDefault(f.ID), URL: orDefault(f.URL), HTML: orDefault(f.HTML),
			Text: orDefault(f.Text), Popularity: orDefault(f.Popularity)},
	}
}

// Sample returns the embedded sample corpus at the URLs the demo engine
// of winnow serve gives its pages (serve.demo_listen), so that a cluster
// service loaded with them knows the pages the proxy sees.
func Sample(c config.Config) iter.Seq2[corpus.Doc, error] {
	return sample.DocsAt("http://" + c.Serve.DemoListen)
}
