package options

import (
	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/corpus"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/proxy"
	"github.com/winnow-search/winnow/similarity"
)

// Defaults returns the configuration with every key at the value in
// force when it is left out: config's own defaults (config.Default) and,
// for the keys config leaves zero, the default the library that reads
// the key declares. It restates no value: each is read from its
// library, so the reference (docs/config.md) and `winnow` say what the
// code does. TestDefaultsAreTheLibraries checks that it maps back.
func Defaults() config.Config {
	c := config.Default()
	c.Canon.MaxBytes = canon.DefaultMaxBytes
	s := similarity.Options{}.WithDefaults()
	g := &c.Signature
	g.ChunkSize, g.BloomBits, g.BloomHashes, g.MinHashes = s.ChunkAvg, s.BloomBits, s.BloomHashes, s.MinHashes
	g.ShingleWords, g.Fingerprints, g.LengthDims, g.MaxSeq = s.MinHashShingle, s.Fingerprints, s.LengthDims, s.MaxSeq
	c.Decision.MinConfidence.Group = similarity.DefaultModel(similarity.PurposeGroup).MinConfidence
	c.Decision.MinConfidence.Remove = similarity.DefaultModel(similarity.PurposeRemove).MinConfidence
	c.Dedup.MaxFileBytes = corpus.DefaultMaxFileSize

	p := proxy.Options{}.WithDefaults()
	v := &c.Serve
	v.Mode, v.Factor, v.TopK, v.Budget = p.Mode.String(), p.Factor, p.TopK, config.Duration(p.Budget)
	v.CacheBytes, v.CacheTTL, v.AnswerCacheBytes = int(p.CacheBytes), config.Duration(p.CacheTTL), int(p.AnswerCacheBytes)
	v.AnswerBytesInFlight, v.AdmitWait = p.AnswerBytesInFlight, config.Duration(p.AdmitWait)
	v.MaxRequestBytes, v.MaxHeaderBytes, v.MaxConns = p.MaxRequestBytes, p.MaxHeaderBytes, p.MaxConns
	v.ClusterTimeout, v.FeedbackLogBytes = config.Duration(p.ClusterTimeout), p.FeedbackLogBytes
	f := &v.Fetch
	f.Timeout, f.MaxBodyBytes, f.MaxRedirects = config.Duration(fetch.DefaultTimeout), fetch.DefaultMaxBodyBytes, fetch.DefaultMaxRedirects
	f.MaxConns, f.MaxConnsPerHost, f.UserAgent = fetch.DefaultMaxConns, fetch.DefaultMaxConnsPerHost, fetch.DefaultUserAgent

	b := &c.Cluster
	b.Parts, b.Dims, b.MaxBatch = cluster.DefaultParts, cluster.DefaultDims, cluster.DefaultMaxBatch
	b.LeaseTTL, b.LeaseRenew, b.LeaseWait = config.Duration(cluster.DefaultLeaseTTL), config.Duration(cluster.DefaultLeaseRenew), config.Duration(cluster.DefaultLeaseWait)
	b.TombstoneTTL = config.Duration(cluster.DefaultTombstoneTTL)
	return c
}

// EngineDefaults returns an engine's keys (serve.engines[]) at the
// values in force when they are left out: the proxy's.
func EngineDefaults() config.Engine {
	p := proxy.Options{Engines: []proxy.Engine{{}}}.WithDefaults()
	return config.Engine{Timeout: config.Duration(p.Engines[0].Timeout)}
}
