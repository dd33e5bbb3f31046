// Package config holds winnow's one configuration tree: defaults, loading
// from a YAML file, overrides from the environment and from command-line
// "key=value" settings, and validation that names every bad field.
//
// The package is a leaf: it knows nothing of the packages it configures.
// cmd/winnow maps each section onto that package's own Options, so tests
// build components without a config file. A zero field means "use the
// default"; [Config.WithDefaults] fills them in one place.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the whole configuration of the winnow binary.
type Config struct {
	Canon     Canon     `yaml:"canon"`
	Signature Signature `yaml:"signature"`
	Decision  Decision  `yaml:"decision"`
	Dedup     Dedup     `yaml:"dedup"`
	Serve     Serve     `yaml:"serve"`
	// Cluster configures the cluster service (winnow cluster). Its
	// former name, backend (the section, its -set keys and its
	// WINNOW_BACKEND_* variables), is still read, with a warning in
	// Deprecated.
	Cluster ClusterService `yaml:"cluster"`

	// Deprecated lists the deprecated names this configuration was
	// given in, each with its replacement, for the command to warn of.
	Deprecated []string `yaml:"-"`
}

// renamedSections maps a section's former name to its name: the
// configuration still reads the former, and says so in Deprecated.
var renamedSections = map[string]string{"backend": "cluster"}

// Seq reports whether the cluster service keeps word sequences
// (keep_seq; default true).
func (b ClusterService) Seq() bool { return b.KeepSeq == nil || *b.KeepSeq }

// ClusterService configures the cluster service (winnow cluster).
type ClusterService struct {
	// Listen is the address of its HTTP API. Default "127.0.0.1:8090".
	Listen string `yaml:"listen"`
	// Store is "bolt" (an embedded bbolt file, crash-safe; default),
	// "pebble" (an embedded Pebble LSM directory, crash-safe; resident
	// memory bounded by its block cache instead of growing with the
	// store, slower lookups), "redis" (a Redis Cluster shared by several
	// service replicas, see Redis) or "memory" (lost on exit).
	Store string `yaml:"store"`
	// Redis lists the addresses (host:port) of Redis Cluster nodes for
	// store "redis".
	Redis []string `yaml:"redis"`
	// LeaseTTL, LeaseRenew and LeaseWait shape the writer lease that
	// replicas on one Redis Cluster take around each ingest batch: it
	// lasts LeaseTTL unless renewed (a replica that dies holding it
	// blocks the others this long), the holder renews it every
	// LeaseRenew while its batch runs (below LeaseTTL; by default a third
	// of it), and a batch waits at most LeaseWait for it. Store "redis"
	// only.
	LeaseTTL   Duration `yaml:"lease_ttl"`
	LeaseRenew Duration `yaml:"lease_renew"`
	LeaseWait  Duration `yaml:"lease_wait"`
	// Path is the bolt store's file or the pebble store's directory.
	// Default "winnow-groups.db" (bolt) or "winnow-groups.pebble" (pebble).
	Path string `yaml:"path"`
	// KeepSeq stores each page's word sequence so verification against a
	// winner uses the LCS, as winnow compare and dedup do (4 bytes a word,
	// at most 32 KiB a page). nil means true. False: under 1 KB a page,
	// verified by min-hash Jaccard, which splits families of drifted
	// copies that compare calls duplicates. Read it with [ClusterService.Seq].
	KeepSeq *bool `yaml:"keep_seq"`
	// Parts and Dims shape the length partitioning of tier 2 (Zhu §4).
	Parts int `yaml:"parts"`
	Dims  int `yaml:"dims"`
	// MaxBatch is the most pages of one ingest or URLs of one lookup.
	MaxBatch int `yaml:"max_batch"`
	// MarketTLDs are host suffixes preferred when a group elects its
	// winner, e.g. [".co.uk", ".uk"].
	MarketTLDs []string `yaml:"market_tlds"`
	// TombstoneTTL is how long a versioned delete (an ingest with
	// deleted and version) keeps refusing older writes of its page; its
	// tombstone is then removed. Negative keeps tombstones for ever.
	TombstoneTTL Duration `yaml:"tombstone_ttl"`
}

// Serve configures the proxy (winnow serve).
// DefaultDemoListen is the default of serve.demo_listen, the embedded demo
// engine's address.
const DefaultDemoListen = "127.0.0.1:8081"

type Serve struct {
	// Listen is the address the proxy listens on. Default
	// "127.0.0.1:8080"; port 0 picks a free port.
	Listen string `yaml:"listen"`
	// Mode is how duplicates are shown: "group" (nested under their
	// winner), "remove" or "annotate".
	Mode string `yaml:"mode"`
	// Factor is the over-fetch factor: a page of n results asks the
	// engine for (from+n)·factor results.
	Factor int `yaml:"factor"`
	// TopK is the number of results refined per query.
	TopK int `yaml:"top_k"`
	// Budget bounds the refinement of one query; results not signed in
	// time pass through unmarked.
	Budget Duration `yaml:"budget"`
	// Transparent names the engine whose API clients use through the
	// proxy; default the first engine; "-" turns it off.
	Transparent string `yaml:"transparent"`
	// Engines are the search engines. None: winnow serve starts its
	// embedded demo engine (LLVM docs) on loopback.
	Engines []Engine `yaml:"engines"`
	// DemoListen is the address of the embedded demo engine. Default
	// "127.0.0.1:8081": a fixed address, because the pages' URLs carry it,
	// and winnow dedup loads the embedded sample into the cluster service
	// under the same URLs; port 0 picks a free port.
	DemoListen string `yaml:"demo_listen"`
	// CacheBytes bounds the signature cache in bytes.
	CacheBytes int `yaml:"cache_bytes"`
	// CacheTTL is how long a signature serves before revalidation.
	CacheTTL Duration `yaml:"cache_ttl"`
	// AnswerCacheBytes bounds the cache of refined answers in bytes: a
	// request whose engine answer is the same as last time (but for
	// digits before the results, such as the time the engine took)
	// reuses the last refinement while its signatures are cached. The
	// engine is still asked every time. -1 turns it off.
	AnswerCacheBytes int `yaml:"answer_cache_bytes"`
	// AnswerBytesInFlight bounds the bytes of engine answers held in
	// memory at once across requests (an answer and its rendering count
	// twice its size); past it the client's own request passes through
	// unrefined, streamed.
	AnswerBytesInFlight int64 `yaml:"answer_bytes_in_flight"`
	// AdmitWait bounds how long an answer of known length waits for room
	// under AnswerBytesInFlight before it passes through unrefined.
	AdmitWait Duration `yaml:"admit_wait"`
	// MaxRequestBytes caps a client request body.
	MaxRequestBytes int `yaml:"max_request_bytes"`
	// MaxHeaderBytes caps a client request's headers.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// MaxConns caps concurrent client connections.
	MaxConns int `yaml:"max_conns"`
	// ShutdownTimeout bounds the graceful shutdown. Default "15s".
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`
	// Fetch configures how result pages are fetched.
	Fetch Fetch `yaml:"fetch"`
	// Cluster is the base URL of the cluster service (winnow cluster)
	// asked first for known duplicates; "" means none.
	Cluster string `yaml:"cluster"`
	// ClusterTimeout bounds one lookup in the cluster service.
	ClusterTimeout Duration `yaml:"cluster_timeout"`
	// ClusterFeed sends the signatures the proxy computes to the cluster
	// service in the background, so it learns pages the index pipeline
	// has not fed it. Needs Cluster. Default false.
	ClusterFeed bool `yaml:"cluster_feed"`
	// FeedbackLog is the file (JSON Lines) where the search page's "not
	// a duplicate" and "same page" buttons write the pairs readers judge
	// (both URLs, their signatures' scores, the verdict, the time), for
	// `winnow calibrate`. Default "": no buttons, no log.
	FeedbackLog string `yaml:"feedback_log"`
	// FeedbackLogBytes bounds the feedback log: past it the file moves to
	// feedback_log + ".1" and a new one begins.
	FeedbackLogBytes int64 `yaml:"feedback_log_bytes"`
	// CursorKey seals the scroll and point in time IDs clients get
	// through the gateway, so a client cannot present another's: at
	// least 16 bytes, the same on every replica behind one load
	// balancer. Default "": a random key per process, and the IDs do not
	// survive a restart.
	CursorKey string `yaml:"cursor_key"`
}

// Engine is one search engine of the proxy.
type Engine struct {
	// Name labels the engine (metrics, logs, the search page). Required.
	Name string `yaml:"name"`
	// Kind is the engine's kind, one of the proxy's engine registry
	// (`winnow serve` lists them when it is none): "elasticsearch",
	// "opensearch", "solr", "searxng", "opensearch-rss" or "json" (which
	// needs Results). Required.
	Kind string `yaml:"kind"`
	// URL is the engine's base URL. Required.
	URL string `yaml:"url"`
	// Path is the engine's search path, e.g. "/docs/_search".
	Path string `yaml:"path"`
	// Timeout bounds what one request waits for the engine: connecting,
	// sending and the answer's head, and the whole body of an answer
	// winnow refines, as one deadline a fallback shares; a body passed
	// through only between two reads (a large answer streamed to a slow
	// client is not cut while the engine keeps sending).
	Timeout Duration `yaml:"timeout"`
	// TextField names the hit field that holds the page text, so the
	// page need not be fetched.
	TextField string `yaml:"text_field"`
	// Results, Total, URLField, Title and Snippet are dotted field paths
	// for kind "json" (Results and Total from the root, the others from a
	// hit); URLField, Title and Snippet also rename the fields of the
	// other kinds.
	Results  string `yaml:"results"`
	Total    string `yaml:"total"`
	URLField string `yaml:"url_field"`
	Title    string `yaml:"title"`
	Snippet  string `yaml:"snippet"`
	// ResultWindow is the largest from+size the engine serves
	// (Elasticsearch's index.max_result_window); the over-fetch stays
	// within it. Default 10000 for elasticsearch and opensearch, none
	// for the other kinds.
	ResultWindow int `yaml:"result_window"`
	// AllowWrites opens every method and path of the transparent
	// engine to clients (indexing, admin). Default false: a read-only
	// search gateway, where only the engine's search routes pass.
	AllowWrites bool `yaml:"allow_writes"`
	// Extra are URL parameters added to metasearch queries, e.g.
	// "DB=default&FMT=opensearch" for Xapian Omega.
	Extra string `yaml:"extra"`
	// SolrHandlers are the request handlers of a kind solr engine that
	// the read-only gateway lets through as searches, e.g. ["select",
	// "browse"]: one path segment each, under the core of Path or
	// /solr/{core}; qt, stream.*, shards and the other parameters that
	// reach beyond one search stay refused. Default ["select"] (and the
	// last segment of Path).
	SolrHandlers []string `yaml:"solr_handlers"`
	// SolrJSONP lets a kind solr engine's searches through the
	// read-only gateway with json.wrf (JSONP: the answer wrapped in a
	// call of the function it names). Default false: it is refused, as
	// with it a <script> tag on any web page reads the answers a user's
	// browser is given, past the browser's same-origin rule.
	SolrJSONP bool `yaml:"solr_jsonp"`
}

// Fetch configures the page fetcher.
type Fetch struct {
	// Timeout bounds one page fetch.
	Timeout Duration `yaml:"timeout"`
	// MaxBodyBytes caps a page on the wire.
	MaxBodyBytes int `yaml:"max_body_bytes"`
	// MaxRedirects is the number of redirects followed.
	MaxRedirects int `yaml:"max_redirects"`
	// MaxConns bounds fetches in flight, all hosts.
	MaxConns int `yaml:"max_conns"`
	// MaxConnsPerHost bounds fetches in flight to one host.
	MaxConnsPerHost int `yaml:"max_conns_per_host"`
	// UserAgent is sent with every fetch.
	UserAgent string `yaml:"user_agent"`
	// Allow lists networks (CIDR) fetched although the SSRF guard would
	// refuse them, e.g. "127.0.0.0/8" for an engine on loopback.
	Allow []string `yaml:"allow"`
}

// Canon configures HTML and text canonicalization.
type Canon struct {
	// MaxBytes caps the bytes of one page that are read.
	MaxBytes int `yaml:"max_bytes"`
	// Content selects the text a signature is built from: "all" (every
	// visible word) or "main" (boilerplate and site templates removed).
	// Default "main".
	Content string `yaml:"content"`
}

// Signature configures the signature families. Zero fields take the
// defaults of package similarity (similarity.Options.WithDefaults), the
// papers' values, declared there only.
type Signature struct {
	// ChunkSize is the expected CDC chunk size in bytes (Jain: 256).
	ChunkSize int `yaml:"chunk_size"`
	// BloomBits is the fixed Bloom filter size m in bits (Jain: 2048).
	BloomBits int `yaml:"bloom_bits"`
	// BloomHashes is the number of Bloom hash functions k (zero: the
	// optimum for the filter size and the expected chunks).
	BloomHashes int `yaml:"bloom_hashes"`
	// MinHashes is the number of min-hash values (Fetterly: 84).
	MinHashes int `yaml:"minhashes"`
	// ShingleWords is the min-hash shingle width in words (Fetterly: 5).
	ShingleWords int `yaml:"shingle_words"`
	// Fingerprints is the number of sentence fingerprints kept.
	Fingerprints int `yaml:"fingerprints"`
	// LengthDims is the number of length-vector dimensions (Zhu: 3).
	LengthDims int `yaml:"length_dims"`
	// MaxSeq caps the word-hash sequence kept for LCS verification, in
	// words; -1 disables LCS.
	MaxSeq int `yaml:"max_seq"`
}

// Decision configures when two pages are duplicates. One meaning
// everywhere: the same keys are the -set flags, and the proxy's request
// parameters winnow_method, winnow_threshold and winnow_min_confidence
// (similarity.ParseDecision reads all three). A setting that cannot apply
// to the method is an error naming it.
type Decision struct {
	// Method is "default" (also written "model"): the fitted models, one
	// per purpose (the near-duplicate decision for group and annotate
	// modes, the content-equivalence decision for remove mode and for
	// what dedup may delete), or a single paper method for every purpose: "simhash",
	// "bloom", "containment", "supershingles", "jaccard", "fingerprints",
	// "lcs", "lcs-central", "lcs-local". Default "default".
	Method string `yaml:"method"`
	// Threshold is a single method's threshold: a Hamming distance 0..64
	// for simhash, a count 0..6 for supershingles, a ratio in [0, 1]
	// otherwise. Zero keeps the paper's. Setting it under the default
	// method is an error: the models' knob is MinConfidence.
	Threshold float64 `yaml:"threshold"`
	// MinConfidence is the probability a pair needs under the default
	// method, per mode, in (0, 1). Zero keeps the value chosen by
	// cross-validation (group 0.68, remove 0.9; `winnow eval` prints the
	// precision and recall each gives). Setting it under a single method,
	// or above the highest probability the model gives any pair
	// (similarity.PurposeModel.Ceiling), is an error.
	MinConfidence MinConfidence `yaml:"min_confidence"`
	// MinTokens is the token count below which a page never matches
	// (default 10).
	MinTokens int `yaml:"min_tokens"`
	// Calibration holds each purpose's decision as `winnow calibrate`
	// fitted it to a site's labelled pairs (docs/calibration.md); it
	// needs the default method, and a purpose calibrated here takes its
	// confidence from here, not from MinConfidence. Empty: the shipped
	// decisions.
	Calibration Calibration `yaml:"calibration"`
}

// Calibration is the calibrated decision of each purpose.
type Calibration struct {
	// Group is the near-duplicate decision's calibration.
	Group Calibrated `yaml:"group"`
	// Remove is the content-equivalence decision's calibration.
	Remove Calibrated `yaml:"remove"`
}

// Calibrated is one purpose's decision fitted by `winnow calibrate`. It
// is in force when MinConfidence is set; the cross-validated figures
// are what calibrate measured on Source, kept so that every command
// applying it can say where it came from and whether it held.
type Calibrated struct {
	// Source names the pairs it was fitted on (the inputs' names).
	Source string `yaml:"source"`
	// MinConfidence is the calibrated confidence, in (0, 1); zero means
	// not calibrated.
	MinConfidence float64 `yaml:"min_confidence"`
	// Features, Weights and Intercept are the model's coefficients
	// (similarity.Model; feature names as `winnow eval -cv` prints them),
	// or empty to keep the shipped model's.
	Features  []string  `yaml:"features"`
	Weights   []float64 `yaml:"weights"`
	Intercept float64   `yaml:"intercept"`
	// NumbersVeto refuses every pair whose numbers differ (remove).
	NumbersVeto bool `yaml:"numbers_veto"`
	// RefuseCutSequences refuses a pair whose word sequence was cut at
	// signature.max_seq on either side (remove): the alignment did not
	// read the page's end.
	RefuseCutSequences bool `yaml:"refuse_cut_sequences"`
	// RefuseLinksAbove refuses a pair whose relative link targets differ
	// by more than this share (remove; 0, the default, off): the same
	// text linking elsewhere. With it the signer reads every page's links.
	RefuseLinksAbove float64 `yaml:"refuse_links_above"`
	// TargetPrecision is the precision calibrate was asked to hold, and
	// Precision, Recall and F1 the cross-validated figures it measured
	// (pooled precision); Pairs the labelled pairs it read.
	TargetPrecision float64 `yaml:"target_precision"`
	Precision       float64 `yaml:"precision"`
	Recall          float64 `yaml:"recall"`
	F1              float64 `yaml:"f1"`
	Pairs           int     `yaml:"pairs"`
	// HoldsTarget reports that the cross-validated precision reached
	// TargetPrecision. False flags the decision wherever it is applied
	// (a warning at start, the explanation, /metrics).
	HoldsTarget bool `yaml:"holds_target"`
}

// Set reports whether the purpose is calibrated.
func (c Calibrated) Set() bool { return c.MinConfidence != 0 }

// MinConfidence is the default decision's confidence per mode.
type MinConfidence struct {
	// Group is the near-duplicate decision's, for group and annotate
	// modes.
	Group float64 `yaml:"group"`
	// Remove is the content-equivalence decision's, for remove mode and
	// for what dedup may delete.
	Remove float64 `yaml:"remove"`
}

// Dedup configures the offline job.
type Dedup struct {
	// Workers is the number of pages canonicalized and signed in
	// parallel. Default: the number of CPUs.
	Workers int `yaml:"workers"`
	// MaxFileBytes caps one input file or record.
	MaxFileBytes int `yaml:"max_file_bytes"`
	// Progress shows a progress bar on stderr: "auto" (when stderr is a
	// terminal), "always" or "never". Default "auto".
	Progress string `yaml:"progress"`
	// Timeout stops the job after this long; 0 means no limit.
	Timeout Duration `yaml:"timeout"`
	// SingleLink clusters by single link (a page joins when it matches any
	// member) instead of keeping only members that match their cluster's
	// winner, as the cluster service does. Default false.
	SingleLink bool `yaml:"single_link"`
	// Fields names the fields of a JSON Lines record, each a list of names
	// tried in order (on the command line, comma-separated). Empty: the
	// common dataset names (id; url; html; text, content, raw_content,
	// body; popularity), see corpus.DefaultJSONLFields.
	Fields DedupFields `yaml:"fields"`
	// Winner chooses each cluster's winner, by the cluster service's rules.
	Winner DedupWinner `yaml:"winner"`
}

// DedupFields names the fields of a JSON Lines record for winnow dedup.
type DedupFields struct {
	// ID names the record's identifier (a string or a number). Empty:
	// "id"; a record without one is known by its line or row number.
	ID []string `yaml:"id"`
	// URL names the page's address (winner rules, cluster service keys).
	// Empty: "url".
	URL []string `yaml:"url"`
	// Text names the page's text, read as HTML when it starts with a
	// doctype or <html>. Empty: "text", "content", "raw_content", "body".
	Text []string `yaml:"text"`
	// HTML names the page's HTML. Empty: "html".
	HTML []string `yaml:"html"`
	// Popularity names a number the winner rules prefer higher. Empty:
	// "popularity".
	Popularity []string `yaml:"popularity"`
}

// DedupWinner configures how winnow dedup elects a cluster's winner.
type DedupWinner struct {
	// Rules are the winner rules in the order applied, by name:
	// popularity, https, shorter, static, market (the URL decides last).
	// Empty: that order, the cluster service's.
	Rules []string `yaml:"rules"`
	// MarketTLDs are preferred host suffixes for the market rule, e.g.
	// [".co.uk", ".uk"]. Empty: cluster.market_tlds.
	MarketTLDs []string `yaml:"market_tlds"`
	// PopularityTolerance is the largest difference of popularity scores
	// that counts as a tie. Default 0: exact.
	PopularityTolerance float64 `yaml:"popularity_tolerance"`
}

// Duration is a time.Duration written as "250ms" or "1m30s" in YAML.
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		// The line lets Parse name the key (yaml does not give custom
		// unmarshalers' errors one).
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// String returns the duration as a Go duration string.
func (d Duration) String() string { return time.Duration(d).String() }

// Default returns the configuration with every default filled in.
func Default() Config { return Config{}.WithDefaults() }

// WithDefaults returns c with the commands' own defaults filled in
// (addresses, stores, methods, progress). A key a library reads stays
// zero here and takes that library's default, declared there only:
// canon.max_bytes (canon), signature.* (similarity), dedup.max_file_bytes
// (corpus), the proxy's settings under serve and serve.fetch.* (proxy,
// fetch), cluster.parts, dims, max_batch and the leases (cluster);
// config is a leaf and cannot import them, and package options hands
// the zero on.
func (c Config) WithDefaults() Config {
	c.Canon.Content = cmpOr(c.Canon.Content, "main")
	// signature.* stay zero: the library's defaults (similarity.Options'
	// WithDefaults) are the only ones, so config cannot drift from them.
	c.Decision.Method = cmpOr(c.Decision.Method, "default")
	c.Decision.MinTokens = cmpOr(c.Decision.MinTokens, 10)
	c.Dedup.Progress = cmpOr(c.Dedup.Progress, "auto")
	v := &c.Serve
	v.Listen = cmpOr(v.Listen, "127.0.0.1:8080")
	v.DemoListen = cmpOr(v.DemoListen, DefaultDemoListen)
	v.ShutdownTimeout = cmpOr(v.ShutdownTimeout, Duration(15*time.Second))
	b := &c.Cluster
	b.Listen = cmpOr(b.Listen, "127.0.0.1:8090")
	b.Store = cmpOr(b.Store, "bolt")
	if b.Store == "pebble" {
		b.Path = cmpOr(b.Path, "winnow-groups.pebble")
	}
	b.Path = cmpOr(b.Path, "winnow-groups.db")
	return c
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Validate reports every invalid field, each error naming the field by its
// YAML path.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: %s: "+format, append([]any{field}, args...)...))
	}
	if c.Canon.MaxBytes != 0 && c.Canon.MaxBytes < 1024 {
		bad("canon.max_bytes", "%d is below 1024", c.Canon.MaxBytes)
	}
	if c.Canon.Content != "all" && c.Canon.Content != "main" {
		bad("canon.content", "%q is not one of all, main", c.Canon.Content)
	}
	s := c.Signature
	if s.ChunkSize != 0 && (s.ChunkSize < 16 || s.ChunkSize > 1<<20 || s.ChunkSize&(s.ChunkSize-1) != 0) {
		bad("signature.chunk_size", "%d is not a power of two in [16, 1 MiB]", s.ChunkSize)
	}
	if s.BloomBits != 0 && (s.BloomBits < 64 || s.BloomBits%64 != 0 || s.BloomBits > 1<<20) {
		bad("signature.bloom_bits", "%d is not a multiple of 64 in [64, 1048576]", s.BloomBits)
	}
	if s.BloomHashes != 0 && (s.BloomHashes < 1 || s.BloomHashes > 32) {
		bad("signature.bloom_hashes", "%d is not in [1, 32]", s.BloomHashes)
	}
	if s.MinHashes != 0 && (s.MinHashes < 6 || s.MinHashes > 1024) {
		bad("signature.minhashes", "%d is not in [6, 1024]", s.MinHashes)
	}
	if s.ShingleWords != 0 && (s.ShingleWords < 1 || s.ShingleWords > 16) {
		bad("signature.shingle_words", "%d is not in [1, 16]", s.ShingleWords)
	}
	if s.Fingerprints != 0 && (s.Fingerprints < 1 || s.Fingerprints > 256) {
		bad("signature.fingerprints", "%d is not in [1, 256]", s.Fingerprints)
	}
	if s.LengthDims != 0 && (s.LengthDims < 1 || s.LengthDims > 16) {
		bad("signature.length_dims", "%d is not in [1, 16]", s.LengthDims)
	}
	if s.MaxSeq < -1 {
		bad("signature.max_seq", "%d is below -1", s.MaxSeq)
	}
	if c.Decision.Threshold < 0 || c.Decision.Threshold > 64 {
		bad("decision.threshold", "%g is not in [0, 64]", c.Decision.Threshold)
	}
	for _, mc := range []struct {
		field string
		v     float64
	}{{"decision.min_confidence.group", c.Decision.MinConfidence.Group}, {"decision.min_confidence.remove", c.Decision.MinConfidence.Remove}} {
		if mc.v < 0 || mc.v >= 1 {
			bad(mc.field, "%g is not a probability in (0, 1)", mc.v)
		}
	}
	if c.Decision.MinTokens < 0 {
		bad("decision.min_tokens", "%d is negative", c.Decision.MinTokens)
	}
	for _, cal := range []struct {
		field string
		c     Calibrated
		conf  float64
	}{{"decision.calibration.group", c.Decision.Calibration.Group, c.Decision.MinConfidence.Group},
		{"decision.calibration.remove", c.Decision.Calibration.Remove, c.Decision.MinConfidence.Remove}} {
		cc := cal.c
		if !cc.Set() {
			if len(cc.Features) > 0 || len(cc.Weights) > 0 || cc.Intercept != 0 || cc.NumbersVeto || cc.RefuseCutSequences || cc.RefuseLinksAbove != 0 {
				bad(cal.field+".min_confidence", "missing: a calibration without its confidence")
			}
			continue
		}
		if cc.MinConfidence < 0 || cc.MinConfidence >= 1 {
			bad(cal.field+".min_confidence", "%g is not a probability in (0, 1)", cc.MinConfidence)
		}
		if c.Decision.Method != "default" && c.Decision.Method != "model" {
			bad(cal.field, "needs decision.method default, not %q", c.Decision.Method)
		}
		if cal.conf != 0 {
			bad(cal.field, "and %s both set the confidence", strings.Replace(cal.field, "calibration", "min_confidence", 1))
		}
		if len(cc.Features) != len(cc.Weights) {
			bad(cal.field+".weights", "%d weights for %d features", len(cc.Weights), len(cc.Features))
		}
		if cc.RefuseLinksAbove < 0 || cc.RefuseLinksAbove >= 1 {
			bad(cal.field+".refuse_links_above", "%g is not a share in [0, 1)", cc.RefuseLinksAbove)
		}
		if cc.TargetPrecision < 0 || cc.TargetPrecision > 1 {
			bad(cal.field+".target_precision", "%g is not in [0, 1]", cc.TargetPrecision)
		}
	}
	if c.Dedup.Workers < 0 {
		bad("dedup.workers", "%d is negative", c.Dedup.Workers)
	}
	if c.Dedup.MaxFileBytes != 0 && c.Dedup.MaxFileBytes < 1024 {
		bad("dedup.max_file_bytes", "%d is below 1024", c.Dedup.MaxFileBytes)
	}
	switch c.Dedup.Progress {
	case "auto", "always", "never":
	default:
		bad("dedup.progress", "%q is not one of auto, always, never", c.Dedup.Progress)
	}
	if c.Dedup.Timeout < 0 {
		bad("dedup.timeout", "%s is negative", c.Dedup.Timeout)
	}
	if t := c.Dedup.Winner.PopularityTolerance; t < 0 || t != t {
		bad("dedup.winner.popularity_tolerance", "%g is not a number >= 0", t)
	}
	c.Serve.validate(bad)
	b := c.Cluster
	if _, _, err := net.SplitHostPort(b.Listen); err != nil {
		bad("cluster.listen", "%q is not host:port", b.Listen)
	}
	switch {
	case b.Store != "bolt" && b.Store != "pebble" && b.Store != "memory" && b.Store != "redis":
		bad("cluster.store", "%q is not one of bolt, pebble, redis, memory", b.Store)
	case b.Store == "redis" && len(b.Redis) == 0:
		bad("cluster.redis", "store redis needs the addresses of cluster nodes")
	}
	if b.Dims < 0 || b.Dims > 3 {
		bad("cluster.dims", "%d is not in [1, 3]", b.Dims)
	}
	if b.Parts < 0 || b.Parts > 4096 {
		bad("cluster.parts", "%d is not in [1, 4096]", b.Parts)
	}
	if b.MaxBatch < 0 || b.MaxBatch > 100000 {
		bad("cluster.max_batch", "%d is not in [1, 100000]", b.MaxBatch)
	}
	if b.LeaseTTL != 0 && b.LeaseTTL < Duration(time.Millisecond) {
		bad("cluster.lease_ttl", "%s is below 1ms", time.Duration(b.LeaseTTL))
	}
	if b.LeaseRenew < 0 || (b.LeaseRenew != 0 && b.LeaseTTL != 0 && b.LeaseRenew >= b.LeaseTTL) {
		bad("cluster.lease_renew", "%s is not above 0 and below cluster.lease_ttl (%s)", time.Duration(b.LeaseRenew), time.Duration(b.LeaseTTL))
	}
	if b.LeaseWait < 0 {
		bad("cluster.lease_wait", "%s is negative", time.Duration(b.LeaseWait))
	}
	return errors.Join(errs...)
}

// EnvPrefix starts every environment variable that [Load] reads: the YAML
// path upper-cased with "." as "_", e.g. WINNOW_DECISION_METHOD.
const EnvPrefix = "WINNOW_"

// Load builds the configuration: defaults, then the YAML file at path (if
// path is not empty; unknown keys are errors), then the environment
// variables of environ ("NAME=value", as os.Environ gives them; nil:
// none), then sets, each "section.field=value" as given by a command-line
// flag. A variable that names a config section but no key of it is an
// error (see [CheckEnviron]). The result is validated.
func Load(path string, environ []string, sets []string) (Config, error) {
	var c Config
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return Config{}, fmt.Errorf("config: %w", err)
		}
		if err := Parse(b, &c); err != nil {
			return Config{}, fmt.Errorf("config: %s: %w", path, err)
		}
	}
	if err := CheckEnviron(environ); err != nil {
		return Config{}, err
	}
	env := map[string]string{}
	for _, kv := range environ {
		name, v, _ := strings.Cut(kv, "=")
		if _, seen := env[name]; !seen { // the first, as os.Getenv reads it
			env[name] = v
		}
	}
	formerEnv := map[string]string{} // WINNOW_CLUSTER_STORE -> WINNOW_BACKEND_STORE
	for former, name := range renamedSections {
		for _, key := range Keys() {
			if rest, ok := strings.CutPrefix(key, name+"."); ok {
				formerEnv[envName(key)] = envName(former + "." + rest)
			}
		}
	}
	for _, key := range Keys() {
		name := envName(key)
		if env[name] == "" && env[formerEnv[name]] != "" {
			c.deprecate(formerEnv[name], name)
			name = formerEnv[name]
		}
		if v := env[name]; v != "" {
			if err := c.Set(key, v); err != nil {
				return Config{}, fmt.Errorf("config: environment %s: %w", name, err)
			}
		}
	}
	for _, kv := range sets {
		key, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Config{}, fmt.Errorf("config: setting %q is not key=value", kv)
		}
		if err := c.Set(strings.TrimSpace(key), strings.TrimSpace(v)); err != nil {
			return Config{}, fmt.Errorf("config: setting %q: %w", kv, err)
		}
	}
	c = c.WithDefaults()
	return c, c.Validate()
}

// platformVariable matches the variables platforms derive from a service
// or container name: Kubernetes' service links (NAME_SERVICE_HOST,
// NAME_SERVICE_PORT[_PORTNAME], NAME_PORT, NAME_PORT_8080_TCP[_PROTO,
// _PORT, _ADDR]) and Docker's legacy links (NAME_NAME, NAME_ENV_VAR, and
// the same _PORT forms). No config key ends like these.
var platformVariable = regexp.MustCompile(`_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_[0-9]+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?|NAME|ENV_[A-Za-z0-9_]+)$`)

// envName is the environment variable of a dotted key:
// decision.min_confidence_group is WINNOW_DECISION_MIN_CONFIDENCE_GROUP.
func envName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// CheckEnviron returns an error naming every variable of environ
// ("NAME=value") that starts with the prefix of a config section
// (WINNOW_DECISION_, WINNOW_SERVE_, ...) but is no key of it, such as
// WINNOW_DECISION_MIN_CONFIDENCE for WINNOW_DECISION_MIN_CONFIDENCE_GROUP:
// it would change nothing, silently, where -set and the YAML file refuse
// an unknown key. A variable whose first part is no section
// (WINNOW_LLVM_DOCS, read by tests) is not config's and passes, and so is
// one a platform sets by the name of a service or container
// (platformVariable): a Kubernetes Service named winnow-backend gives
// every pod of its namespace WINNOW_BACKEND_SERVICE_HOST and
// WINNOW_BACKEND_PORT, which must not stop winnow from starting.
func CheckEnviron(environ []string) error {
	known := map[string]bool{}
	sections := map[string][]string{} // WINNOW_DECISION_ -> its variables
	for _, key := range Keys() {
		name := envName(key)
		known[name] = true
		section, _, _ := strings.Cut(key, ".")
		prefix := envName(section) + "_"
		sections[prefix] = append(sections[prefix], name)
	}
	for former, name := range renamedSections {
		for _, key := range Keys() {
			if rest, ok := strings.CutPrefix(key, name+"."); ok {
				fv := envName(former + "." + rest)
				known[fv] = true
				prefix := envName(former) + "_"
				sections[prefix] = append(sections[prefix], fv)
			}
		}
	}
	var errs []error
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || known[name] || platformVariable.MatchString(name) {
			continue
		}
		for prefix, names := range sections {
			if strings.HasPrefix(name, prefix) {
				errs = append(errs, fmt.Errorf("config: environment %s: unknown key of section %s (its variables are %s)",
					name, strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(prefix, EnvPrefix), "_")), strings.Join(names, ", ")))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// Parse decodes YAML into c, refusing unknown keys. A section under its
// former name (renamedSections) is read under its name and noted in
// c.Deprecated; both names at once are an error.
func Parse(b []byte, c *Config) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return err
	}
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		top := doc.Content[0]
		present := map[string]bool{}
		for i := 0; i+1 < len(top.Content); i += 2 {
			present[top.Content[i].Value] = true
		}
		for i := 0; i+1 < len(top.Content); i += 2 {
			k := top.Content[i]
			name, renamed := renamedSections[k.Value]
			if !renamed {
				continue
			}
			if present[name] {
				return fmt.Errorf("sections %s and %s are one (%s is its former name): keep %s", k.Value, name, k.Value, name)
			}
			c.deprecate(k.Value, name)
			k.Value = name
		}
		var err error
		if b, err = yaml.Marshal(&doc); err != nil {
			return err
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	// An empty document decodes to the zero config.
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return namedKeys(err, &doc)
	}
	return nil
}

// yamlLine matches yaml's "line N: " error prefix, and the Go type it
// names for an unknown key.
var (
	yamlLine = regexp.MustCompile(`line (\d+): `)
	yamlType = regexp.MustCompile(` in type config\.[A-Za-z]+`)
)

// namedKeys rewrites yaml's errors ("line 3: field listn not found in
// type config.Serve", "line 4: time: invalid duration") to name the key
// at that line by its dotted path, as Validate's errors do: "serve.listn
// (line 3): field listn not found".
func namedKeys(err error, doc *yaml.Node) error {
	keys := map[string]string{} // line → dotted key
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, prefix)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				path := k.Value
				if prefix != "" {
					path = prefix + "." + k.Value
				}
				keys[strconv.Itoa(k.Line)] = path
				walk(n.Content[i+1], path)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", prefix, i))
			}
		}
	}
	walk(doc, "")
	msg := yamlLine.ReplaceAllStringFunc(err.Error(), func(m string) string {
		line := yamlLine.FindStringSubmatch(m)[1]
		if key, ok := keys[line]; ok {
			return key + " (line " + line + "): "
		}
		return m
	})
	return errors.New(yamlType.ReplaceAllString(msg, ""))
}

// deprecate notes that a name was given in its former form.
func (c *Config) deprecate(former, name string) {
	note := fmt.Sprintf("%s is now %s", former, name)
	if !slices.Contains(c.Deprecated, note) {
		c.Deprecated = append(c.Deprecated, note)
	}
}

// currentKey returns key under its section's name, and whether the
// section was given under its former name.
func currentKey(key string) (string, bool) {
	section, rest, _ := strings.Cut(key, ".")
	if name, ok := renamedSections[section]; ok && rest != "" {
		return name + "." + rest, true
	}
	return key, false
}

// Keys lists every settable key as a dotted YAML path, in declaration order.
func Keys() []string {
	var keys []string
	walk(reflect.ValueOf(&Config{}).Elem(), "", func(key string, _ reflect.Value) { keys = append(keys, key) })
	return keys
}

// Set assigns value to the field named by its dotted YAML path.
func (c *Config) Set(key, value string) error {
	if k, renamed := currentKey(key); renamed {
		section, _, _ := strings.Cut(key, ".")
		c.deprecate(section+".*", renamedSections[section]+".*")
		key = k
	}
	var found reflect.Value
	walk(reflect.ValueOf(c).Elem(), "", func(k string, v reflect.Value) {
		if k == key {
			found = v
		}
	})
	if !found.IsValid() {
		return fmt.Errorf("unknown key %q", key)
	}
	switch found.Interface().(type) {
	case Duration:
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		found.SetInt(int64(d))
		return nil
	}
	switch found.Kind() {
	case reflect.String:
		found.SetString(value)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(value, 0, 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not an integer", key, value)
		}
		found.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not a number", key, value)
		}
		found.SetFloat(f)
	case reflect.Slice:
		if found.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("%s: can only be set in the YAML file", key)
		}
		var list []string
		for _, part := range strings.Split(value, ",") {
			if part = strings.TrimSpace(part); part != "" {
				list = append(list, part)
			}
		}
		found.Set(reflect.ValueOf(list))
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%s: %q is not a boolean", key, value)
		}
		found.SetBool(b)
	case reflect.Pointer: // *bool: a boolean whose default is not false
		b, err := strconv.ParseBool(value)
		if err != nil || found.Type().Elem().Kind() != reflect.Bool {
			return fmt.Errorf("%s: %q is not a boolean", key, value)
		}
		found.Set(reflect.ValueOf(&b))
	default:
		return fmt.Errorf("%s: cannot be set from text", key)
	}
	return nil
}

// yamlKey is the dotted YAML path of field f under prefix; false for a
// field with no YAML name.
func yamlKey(f reflect.StructField, prefix string) (string, bool) {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "" || name == "-" {
		return "", false
	}
	if prefix == "" {
		return name, true
	}
	return prefix + "." + name, true
}

func walk(v reflect.Value, prefix string, fn func(key string, field reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		key, ok := yamlKey(f, prefix)
		if !ok {
			continue
		}
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[Duration]() {
			walk(fv, key, fn)
			continue
		}
		fn(key, fv)
	}
}

func (v *Serve) validate(bad func(field, format string, args ...any)) {
	if _, _, err := net.SplitHostPort(v.Listen); err != nil {
		bad("serve.listen", "%q is not host:port", v.Listen)
	}
	if _, _, err := net.SplitHostPort(v.DemoListen); err != nil {
		bad("serve.demo_listen", "%q is not host:port", v.DemoListen)
	}
	// Zero takes the proxy's default (proxy.Options.WithDefaults).
	switch v.Mode {
	case "", "group", "remove", "annotate":
	default:
		bad("serve.mode", "%q is not one of group, remove, annotate", v.Mode)
	}
	if v.Factor < 0 || v.Factor > 20 {
		bad("serve.factor", "%d is not in [1, 20]", v.Factor)
	}
	if v.TopK < 0 || v.TopK > 1000 {
		bad("serve.top_k", "%d is not in [1, 1000]", v.TopK)
	}
	if v.Budget < 0 {
		bad("serve.budget", "%s is not positive", v.Budget)
	}
	if v.CacheBytes != 0 && v.CacheBytes < 1<<20 {
		bad("serve.cache_bytes", "%d is below 1 MiB", v.CacheBytes)
	}
	if v.AnswerCacheBytes < -1 || (v.AnswerCacheBytes > 0 && v.AnswerCacheBytes < 1<<20) {
		bad("serve.answer_cache_bytes", "%d is neither -1 (off) nor at least 1 MiB", v.AnswerCacheBytes)
	}
	if v.AnswerBytesInFlight != 0 && v.AnswerBytesInFlight < 1<<20 {
		bad("serve.answer_bytes_in_flight", "%d is below 1 MiB", v.AnswerBytesInFlight)
	}
	if v.AdmitWait < 0 {
		bad("serve.admit_wait", "%s is negative", v.AdmitWait)
	}
	if v.MaxRequestBytes != 0 && v.MaxRequestBytes < 1024 {
		bad("serve.max_request_bytes", "%d is below 1024", v.MaxRequestBytes)
	}
	if v.MaxHeaderBytes != 0 && v.MaxHeaderBytes < 1024 {
		bad("serve.max_header_bytes", "%d is below 1024", v.MaxHeaderBytes)
	}
	if v.MaxConns < 0 {
		bad("serve.max_conns", "%d is below 1", v.MaxConns)
	}
	if v.Fetch.MaxBodyBytes != 0 && v.Fetch.MaxBodyBytes < 1024 {
		bad("serve.fetch.max_body_bytes", "%d is below 1024", v.Fetch.MaxBodyBytes)
	}
	for i, a := range v.Fetch.Allow {
		if _, err := netip.ParsePrefix(a); err != nil {
			bad(fmt.Sprintf("serve.fetch.allow[%d]", i), "%q is not a CIDR prefix", a)
		}
	}
	names := map[string]bool{}
	for i, e := range v.Engines {
		field := fmt.Sprintf("serve.engines[%d]", i)
		if e.Name == "" {
			bad(field+".name", "is empty")
		} else if names[e.Name] {
			bad(field+".name", "%q is used twice", e.Name)
		}
		names[e.Name] = true
		// The kind, and what it asks of the other fields, are checked
		// by the proxy's engine registry where cmd turns this into the
		// proxy's options: config names no kind.
		if e.Kind == "" {
			bad(field+".kind", "is empty")
		}
		if u, err := url.Parse(e.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(field+".url", "%q is not an http(s) URL", e.URL)
		}
	}
	if v.Cluster != "" {
		if u, err := url.Parse(v.Cluster); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("serve.cluster", "%q is not an http(s) URL", v.Cluster)
		}
	} else if v.ClusterFeed {
		bad("serve.cluster_feed", "needs serve.cluster")
	}
	if v.FeedbackLogBytes < 0 {
		bad("serve.feedback_log_bytes", "%d is negative", v.FeedbackLogBytes)
	}
	if n := len(v.CursorKey); n > 0 && n < 16 {
		bad("serve.cursor_key", "%d bytes, fewer than 16", n)
	}
	if t := v.Transparent; t != "" && t != "-" && len(v.Engines) > 0 && !names[t] {
		bad("serve.transparent", "%q names no engine", t)
	}
}
