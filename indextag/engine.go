package indextag

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/winnow-search/winnow/corpus"
)

// Kinds of engine.
const (
	KindElasticsearch = "elasticsearch"
	KindOpenSearch    = "opensearch"
	KindSolr          = "solr"
)

// The fields written to every document.
const (
	FieldGroup       = "winnow_group"
	FieldWinner      = "winnow_winner"
	FieldRemovable   = "winnow_removable"
	FieldProbability = "winnow_probability"
)

// tagFields are the fields written, in the order above.
var tagFields = []string{FieldGroup, FieldWinner, FieldRemovable, FieldProbability}

// ref names one stored document: its ID and, on Elasticsearch and
// OpenSearch, the concrete index that holds it and its custom routing.
// The target may be an alias or a data stream over several indexes, or
// an index routed by another key than the _id: a write or a re-read
// addressed by the ID alone goes to the alias's write index (none: every
// write refused), to the data stream (which takes only new documents) or
// to the shard of the _id, and misses the document.
type ref struct {
	id, index, routing string
}

// hit is one stored document as read.
type hit struct {
	ref
	source map[string]corpus.Field // the stored fields
	ver    version
}

// version is what a conditional write checks: Elasticsearch's sequence
// number and primary term, or Solr's _version_.
type version struct {
	SeqNo       int64 `json:"s,omitempty"`
	PrimaryTerm int64 `json:"t,omitempty"`
	Version     int64 `json:"v,omitempty"`
}

// Tags are the fields written to one document.
type Tags struct {
	// Group is the cluster ID (16 hexadecimal digits), as winnow dedup
	// gives it.
	Group string `json:"winnow_group"`
	// Winner reports the cluster's winner (a singleton is its own).
	Winner bool `json:"winnow_winner"`
	// Removable reports that the content-equivalence decision accepts
	// the document against its winner: it may be deleted.
	Removable bool `json:"winnow_removable"`
	// Probability is the group decision's probability against the
	// winner, 1 for the winner; nil under a paper method, which has none.
	Probability *float64 `json:"winnow_probability"`
}

// equal reports whether t and u would write the same fields.
func (t Tags) equal(u Tags) bool {
	if t.Group != u.Group || t.Winner != u.Winner || t.Removable != u.Removable {
		return false
	}
	if t.Probability == nil || u.Probability == nil {
		return t.Probability == nil && u.Probability == nil
	}
	// The engines store a float: compare at its precision.
	return float32(*t.Probability) == float32(*u.Probability)
}

// storedTags reads the tags a document's source carries; ok is false when
// it carries no group.
func storedTags(src map[string]corpus.Field) (Tags, bool) {
	var t Tags
	if p := src[FieldProbability]; p.Raw != nil {
		json.Unmarshal(p.Raw, &t.Probability)
	}
	t.Group = firstString(value(src[FieldGroup]))
	t.Winner, t.Removable = truthy(value(src[FieldWinner])), truthy(value(src[FieldRemovable]))
	return t, t.Group != ""
}

// value is a stored field as encoding/json decodes it into an any (nil
// when absent or not JSON).
func value(f corpus.Field) any {
	if f.Raw == nil {
		if f.Str == "" {
			return nil
		}
		return f.Str
	}
	var v any
	json.Unmarshal(f.Raw, &v)
	return v
}

// rawFields are the fields of a document decoded as one JSON object.
func rawFields(src map[string]json.RawMessage) map[string]corpus.Field {
	out := make(map[string]corpus.Field, len(src))
	for k, v := range src {
		out[k] = corpus.Field{Raw: v}
	}
	return out
}

// firstString returns v as a string, or its first element when it is a
// list (Solr may return a multi-valued field).
func firstString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		if len(x) > 0 {
			return firstString(x[0])
		}
	}
	return ""
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x == "true"
	case []any:
		return len(x) > 0 && truthy(x[0])
	}
	return false
}

// update is one conditional partial write.
type update struct {
	ref
	ver  version
	tags Tags
}

// Outcomes of a written item.
const (
	outcomeOK       = "ok"
	outcomeConflict = "conflict" // changed since read: re-read it
	outcomeRejected = "rejected" // back-pressure: retry it
	outcomeMissing  = "missing"  // deleted since read
)

// result is the engine's answer for one update.
type result struct {
	outcome string // one of the outcomes, else a failure reason
	ver     version
}

// store is one engine's index (Elasticsearch and OpenSearch, or Solr).
type store interface {
	// count returns the number of documents sel selects.
	count(ctx context.Context, sel selector) (int64, error)
	// scan calls fn with every document sel selects, with
	// the fields named by fields (nil: all); fn is called from up to
	// slices goroutines at once and may return an error to stop.
	scan(ctx context.Context, sel selector, fields []string, slices int, fn func(hit) error) error
	// get returns the documents of refs that exist, with their versions.
	get(ctx context.Context, refs []ref, fields []string) ([]hit, error)
	// prepare adds the tag fields to the mapping or schema, after
	// checking that none exists with another type.
	prepare(ctx context.Context) error
	// write applies updates; results are in their order.
	write(ctx context.Context, ups []update) ([]result, error)
	// flush makes the writes visible to searches.
	flush(ctx context.Context) error
}

// selector selects the documents a read returns: all (the zero value),
// those a -since range selects, or the groups' winners.
type selector struct {
	since   *Since
	winners bool
}

// Since selects the documents of an incremental run: those whose Field
// is greater than Value.
type Since struct {
	Field, Value string
}

// ParseSince parses FIELD:VALUE.
func ParseSince(s string) (*Since, error) {
	f, v, ok := strings.Cut(s, ":")
	if !ok || f == "" || v == "" {
		return nil, fmt.Errorf("indextag: -since %q: want FIELD:VALUE (a timestamp or sequence number field)", s)
	}
	return &Since{Field: f, Value: v}, nil
}

// Target is an engine index named by a URL.
type Target struct {
	// Kind is one of KindElasticsearch, KindOpenSearch, KindSolr.
	Kind string
	// Base is the engine's address (with /solr for Solr).
	Base *url.URL
	// Index is the index (Elasticsearch, OpenSearch) or core or
	// collection (Solr).
	Index string
}

// ParseTarget splits an index URL: http://HOST:PORT/INDEX for
// Elasticsearch and OpenSearch, http://HOST:PORT/solr/CORE for Solr. kind
// may be "" (detected by [Detect]) or one of the kinds.
func ParseTarget(raw, kind string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Target{}, fmt.Errorf("indextag: %q is not an http(s) URL naming an index", raw)
	}
	switch kind {
	case "", KindElasticsearch, KindOpenSearch, KindSolr:
	default:
		return Target{}, fmt.Errorf("indextag: unknown kind %q (want elasticsearch, opensearch or solr)", kind)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	base := *u
	base.RawQuery, base.Fragment = "", ""
	t := Target{Kind: kind, Base: &base}
	switch {
	case len(parts) == 2 && parts[0] == "solr" && parts[1] != "":
		if kind != "" && kind != KindSolr {
			return Target{}, fmt.Errorf("indextag: %s names a Solr core, not a %s index", raw, kind)
		}
		t.Kind, t.Index, base.Path = KindSolr, parts[1], "/solr"
	case len(parts) == 1 && parts[0] != "":
		if kind == KindSolr {
			return Target{}, fmt.Errorf("indextag: %s: a Solr URL is http://HOST:PORT/solr/CORE", raw)
		}
		t.Index, base.Path = parts[0], ""
	default:
		return Target{}, fmt.Errorf("indextag: %s names no index: want http://HOST:PORT/INDEX or http://HOST:PORT/solr/CORE", raw)
	}
	if strings.ContainsAny(t.Index, ",*?") {
		return Target{}, fmt.Errorf("indextag: %s: one index, not a pattern or list", raw)
	}
	return t, nil
}

// Detect fills t.Kind when it is empty. Elasticsearch 7.14 and later
// send X-Elastic-Product: Elasticsearch on every answer (even an error:
// a build without the root endpoint answers GET / with 405); otherwise
// GET / tells version.distribution (OpenSearch) or an Elasticsearch
// version.
func Detect(ctx context.Context, t Target, o Options) (Target, error) {
	if t.Kind != "" {
		return t, nil
	}
	c := newConn(t.Base, o)
	var root struct {
		Version struct {
			Distribution string `json:"distribution"`
			Number       string `json:"number"`
		} `json:"version"`
	}
	h, err := c.doHeader(ctx, "GET", "/", &root)
	switch {
	case h.Get("X-Elastic-Product") == "Elasticsearch":
		t.Kind = KindElasticsearch
	case err != nil:
		return t, fmt.Errorf("indextag: detecting the engine at %s (or give -kind): %w", t.Base.Redacted(), err)
	case root.Version.Distribution == "opensearch":
		t.Kind = KindOpenSearch
	case root.Version.Number != "":
		t.Kind = KindElasticsearch
	default:
		return t, fmt.Errorf("indextag: %s answers GET / without a version: not Elasticsearch or OpenSearch (give -kind)", t.Base.Redacted())
	}
	return t, nil
}

// open returns the store of t.
func open(t Target, o Options) store {
	c := newConn(t.Base, o)
	if t.Kind == KindSolr {
		return &solr{c: c, core: t.Index}
	}
	return &elastic{c: c, index: t.Index, opensearch: t.Kind == KindOpenSearch}
}

func (e *elastic) retryCounts() map[string]int { return e.c.retryCounts() }
func (s *solr) retryCounts() map[string]int    { return s.c.retryCounts() }
