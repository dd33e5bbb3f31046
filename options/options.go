// Package options turns the configuration into each package's options:
// the one place a configuration key becomes a typed library value
// (signer, decisions, calibrations, corpus fields, winner rules, the
// proxy's, the cluster service's and winnow index's options). winnow,
// winnow-beam and their workers all call it, so a key means the same
// everywhere; the libraries take their own Options and declare their own
// defaults, and config leaves a key zero when the library's default
// applies.
package options

import (
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"time"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/indextag"
	"github.com/winnow-search/winnow/offline"
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
		// The links only when the remove calibration reads them: on
		// pages of generated tables they cost a twentieth of canon.
		Canon: canon.Options{MaxBytes: c.Canon.MaxBytes, Content: content, Links: readsLinks(c)},
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

// BatchSigner is [Signer] for the jobs that keep only the signature of
// each document (winnow dedup, winnow index, winnow-beam): its
// canonicalization of a plain text may stop at the head the signature
// reads ([canon.Enough]: its byte and token caps). The signatures are the
// same, and the rest of a long line is not canonicalized (a fifth of the
// text of llvm-docs, in six pages of 0.75 to 1 MB).
func BatchSigner(c config.Config) page.Signer {
	s := Signer(c)
	o := s.Signature.WithDefaults()
	s.Canon.Enough = canon.Enough{Bytes: o.MaxBytes, Tokens: o.MaxTokens}
	return s
}

// readsLinks reports whether a calibrated decision reads the pages' link
// targets (refuse_links_above, or the links feature), so the signer must
// record them.
func readsLinks(c config.Config) bool {
	for _, cal := range []config.Calibrated{c.Decision.Calibration.Group, c.Decision.Calibration.Remove} {
		if cal.Set() && (cal.RefuseLinksAbove > 0 || slices.Contains(cal.Features, similarity.FeatureLinks.String())) {
			return true
		}
	}
	return false
}

// Decisions returns the decisions of the modes: group (also for annotate
// and for clustering) and remove (whether a duplicate may be deleted). It
// builds the decision.* keys' typed values with similarity.NewDecision,
// the check the proxy's request parameters also go through
// (similarity.ParseDecision), so both mean the same; an error names the
// field at fault.
func Decisions(c config.Config) (group, remove similarity.Decision, err error) {
	if group, err = purposeDecision(c, similarity.PurposeGroup); err != nil {
		return group, remove, err
	}
	remove, err = purposeDecision(c, similarity.PurposeRemove)
	return group, remove, err
}

// Decision returns the group decision alone (compare, eval, dedup's
// grouping, the cluster service); the remove settings are checked too, so
// a bad one fails whichever decision a command uses.
func Decision(c config.Config) (similarity.Decision, error) {
	group, _, err := Decisions(c)
	return group, err
}

func purposeDecision(c config.Config, p similarity.Purpose) (similarity.Decision, error) {
	d := c.Decision
	conf, confKey := d.MinConfidence.Group, "decision.min_confidence.group"
	if p == similarity.PurposeRemove {
		conf, confKey = d.MinConfidence.Remove, "decision.min_confidence.remove"
	}
	// Zero keeps the default, as every config key's zero does.
	dec, err := similarity.NewDecision(p,
		similarity.DecisionSpec{Method: d.Method, Threshold: d.Threshold, HasThreshold: d.Threshold != 0,
			MinConfidence: conf, HasMinConfidence: conf != 0},
		similarity.DecisionFields{Method: "decision.method", Threshold: "decision.threshold", MinConfidence: confKey},
		d.MinTokens)
	if err != nil {
		return dec, fmt.Errorf("config: %w", err)
	}
	cal, calKey := d.Calibration.Group, "decision.calibration.group"
	if p == similarity.PurposeRemove {
		cal, calKey = d.Calibration.Remove, "decision.calibration.remove"
	}
	if cal.Set() {
		pm, err := Calibrated(p, cal, calKey)
		if err != nil {
			return dec, err
		}
		dec.Models = pm
		dec.Verify = similarity.Test{Method: similarity.MethodModel, Threshold: pm.MinConfidence}
	}
	return dec, nil
}

// Calibrated returns the purpose's models under the calibration cal (at
// YAML path key): the shipped models with cal's confidence, cal's
// coefficients when it has them, and the numbers veto and the refusal of
// cut sequences when it asks.
// Its Calibration says where it comes from, and flags a calibration
// whose cross-validated precision did not hold its target.
func Calibrated(p similarity.Purpose, cal config.Calibrated, key string) (*similarity.PurposeModel, error) {
	pm := *similarity.DefaultModel(p)
	pm.MinConfidence = cal.MinConfidence
	if len(cal.Features) > 0 {
		m := similarity.Model{Intercept: cal.Intercept, Weights: cal.Weights, NumbersOnly: pm.Seq.NumbersOnly}
		for _, name := range cal.Features {
			var f similarity.Feature
			if err := f.UnmarshalText([]byte(name)); err != nil {
				return nil, fmt.Errorf("config: %s.features: %w", key, err)
			}
			m.Features = append(m.Features, f)
		}
		pm.Seq = m
	}
	if cal.NumbersVeto {
		pm.Seq.NumbersVeto, pm.NoSeq.NumbersVeto = true, true
	}
	pm.RefuseSeqCut = cal.RefuseCutSequences
	if p == similarity.PurposeRemove {
		pm.RefuseLinks = cal.RefuseLinksAbove
	}
	if pm.MinConfidence > pm.Ceiling() {
		return nil, fmt.Errorf("config: %s.min_confidence: %g is above the highest probability the calibrated model gives any pair (%.4f)", key, cal.MinConfidence, pm.Ceiling())
	}
	pm.Calibration, pm.CalibrationFlagged = CalibrationNote(cal), !cal.HoldsTarget
	return &pm, nil
}

// CalibrationNote says where a calibration comes from and whether it
// held its target: "calibrated on shop-pairs (cross-validated precision
// 0.962, target 0.950)", or, flagged, "calibrated on shop-pairs, NOT
// HOLDING its target: cross-validated precision 0.910 < 0.950".
func CalibrationNote(cal config.Calibrated) string {
	src := cal.Source
	if src == "" {
		src = "unnamed pairs"
	}
	if !cal.HoldsTarget {
		return fmt.Sprintf("calibrated on %s, NOT HOLDING its target: cross-validated precision %.3f < %.3f", src, cal.Precision, cal.TargetPrecision)
	}
	return fmt.Sprintf("calibrated on %s (cross-validated precision %.3f, target %.3f)", src, cal.Precision, cal.TargetPrecision)
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

// Winners returns the ranking of dedup.winner (rules default to
// cluster.DefaultWinnerOrder, market TLDs to cluster.market_tlds).
func Winners(c config.Config) (offline.Ranking, error) {
	w := c.Dedup.Winner
	r := cluster.WinnerRules{PopularityTolerance: w.PopularityTolerance, MarketTLDs: w.MarketTLDs}
	if len(w.Rules) > 0 {
		// An empty list is the default too: a configuration that went
		// through YAML (the Beam workers') has [] for nil.
		r.Order = w.Rules
	}
	if len(r.MarketTLDs) == 0 {
		r.MarketTLDs = c.Cluster.MarketTLDs
	}
	if err := r.Validate(); err != nil {
		return offline.Ranking{}, fmt.Errorf("dedup.winner.rules: %w", err)
	}
	return offline.NewRanking(r), nil
}

// ClusterService returns the cluster service's options of cluster.* and
// the group decision, logging to log. Opening the store (cluster.store)
// is the caller's: it is I/O, not a mapping.
func ClusterService(c config.Config, log *slog.Logger) (cluster.Options, error) {
	group, err := Decision(c)
	if err != nil {
		return cluster.Options{}, err
	}
	b := c.Cluster
	return cluster.Options{
		Decision: group, DropSeq: !b.Seq(), Parts: b.Parts, Dims: b.Dims, MaxBatch: b.MaxBatch,
		Winner: cluster.WinnerRules{MarketTLDs: b.MarketTLDs}, TombstoneTTL: time.Duration(b.TombstoneTTL), Logger: log,
	}, nil
}

// Index returns winnow index's options for target from the configuration
// (signer, decisions, winner rules, dedup.single_link, dedup.workers,
// dedup.fields.*); the run's flags (apply, rate, checkpoint, ...) are the
// caller's.
func Index(c config.Config, target indextag.Target, log *slog.Logger) (indextag.Options, error) {
	group, remove, err := Decisions(c)
	if err != nil {
		return indextag.Options{}, err
	}
	rank, err := Winners(c)
	if err != nil {
		return indextag.Options{}, err
	}
	return indextag.Options{
		Target: target, Signer: BatchSigner(c), Group: group, Remove: remove, Rank: rank,
		SingleLink: c.Dedup.SingleLink, Workers: c.Dedup.Workers, Fields: CorpusOptions(c).Fields, Logger: log,
	}, nil
}

// Redis returns the Redis Cluster store's options of cluster.redis and
// cluster.lease_*; zero keys take cluster's defaults (a lease of 30s,
// renewed every third of it, waited for up to 1m).
func Redis(c config.Config) cluster.RedisOptions {
	b := c.Cluster
	return cluster.RedisOptions{LeaseTTL: time.Duration(b.LeaseTTL), LeaseRenew: time.Duration(b.LeaseRenew), LeaseWait: time.Duration(b.LeaseWait)}
}
