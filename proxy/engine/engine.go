package engine

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/winnow-search/winnow/resultlist"
)

// Result is one hit of a backend's answer.
type Result struct {
	// Title and Snippet are text, as the engine indexed it, and may carry
	// the engine's highlighting tags ([HighlightTag]); any other "<" is
	// the text's own, and a character reference stands for its character.
	// A feed's description, HTML, is read into that form; an Atom text
	// construct, plain text, comes with its "&" and "<" escaped, so that
	// its "<b>" is not taken for a highlighting tag.
	URL, Title, Snippet string
	// Text is the page's text or HTML when the hit carries it (the
	// configured text field), so the proxy need not fetch the page.
	Text string
	// Score is the backend's score, 0 if it gave none.
	Score float64
	// Rank is the 0-based position in the backend's answer.
	Rank int
	// Group, GroupWinner and Removable are the tags winnow index wrote
	// to the hit's document (winnow_group, winnow_winner,
	// winnow_removable; Elasticsearch, OpenSearch and Solr answers);
	// Group is "" for an untagged hit.
	Group                  string
	GroupWinner, Removable bool
}

// Query is a metasearch query: free text and a page of Size results
// starting at result From (0-based). Search sends the text as text:
// to Elasticsearch, OpenSearch and Solr, whose q parameter is Lucene's
// query syntax, with its special characters and operator words escaped,
// so it searches for its words and "phrases" (balanced double quotes)
// and never names a field, a range, a wildcard or another parser, nor
// fails as a syntax error. Other kinds get it as typed: Omega's and
// SearXNG's query languages are made for what readers type.
type Query struct {
	Q          string
	From, Size int
}

// Mode says how Render shows duplicates: [resultlist.Mode], whose
// package holds what each mode does to a result list. The zero Mode is
// Group, the default.
type Mode = resultlist.Mode

// The modes, as [resultlist] names them.
const (
	Group    = resultlist.Group
	Remove   = resultlist.Remove
	Annotate = resultlist.Annotate
)

// Modes lists the mode names [ParseMode] accepts, the default first.
var Modes = resultlist.Modes

// ParseMode is [resultlist.ParseMode], the one parser of mode names.
func ParseMode(s string) (Mode, error) { return resultlist.ParseMode(s) }

// Mark says what the proxy decided for one result; marks are indexed like
// [Parsed].Results.
type Mark struct {
	// Cluster is the cluster ID; "" means not clustered.
	Cluster string
	// Winner is the index of the cluster's winner, the result's own index
	// for a winner, -1 for a result passed through unmarked.
	Winner int
	// Relation is "duplicate", "contains" or "contained".
	Relation string
	// Explain is a one-line explanation. Render leaves an empty one
	// out: a duplicate's annotation then carries its cluster, relation
	// and verdict only.
	Explain string
	// Keep shows a duplicate in Remove mode, in place with its
	// annotation as in Annotate mode: remove mode drops only what the
	// content-equivalence decision accepts, and a near-duplicate that is
	// not content-equivalent is kept, never silently dropped.
	Keep bool
	// Decision names the decision whose verdict Probability is, "group"
	// (near-duplicate) or "remove" (content-equivalence); "" when the
	// verdict has no calibrated probability (a paper method, a pair the
	// cluster service decided, a winner).
	Decision string
	// Probability is that decision's calibrated probability that the
	// result duplicates its winner, when Decision is set.
	Probability float64
	// ProbabilityAtMost reports that Probability is an upper bound: the
	// decision stopped aligning the pair once it could no longer reach
	// its confidence (a near-duplicate that remove mode keeps). The
	// annotation then says "probability_at_most", not "probability".
	ProbabilityAtMost bool
}

// Request is an HTTP request to or from a backend. Path includes the query
// string. Header may be nil.
type Request struct {
	Method, Path string
	Header       map[string]string
	Body         []byte
}

// Window is the part of a backend answer the client asked for.
type Window struct {
	// From is the client's offset. When Base is 0 it counts distinct
	// results (losers in Remove and Group mode do not count), otherwise
	// raw results from Base on.
	From int
	// Size is the client's page size; 0 means as many as the backend's
	// (first) page held.
	Size int
	// Base is the raw offset of the first result in the backend answer.
	Base int
}

// FieldPaths names fields by dotted paths ("data.items", "link.href"; a
// numeric segment indexes an array). Results and Total are paths from the
// document root (generic JSON only); the others are relative to one hit (its
// _source for Elasticsearch, the doc for Solr).
type FieldPaths struct {
	Results, Total            string
	URL, Title, Snippet, Text string
}

// Config configures [New].
type Config struct {
	// Kind is "elasticsearch" (also OpenSearch), "solr", "searxng",
	// "opensearch-rss" (RSS 2.0 or Atom) or "json".
	Kind string
	// Fields are the field paths. Defaults: URL "url", Title "title",
	// Snippet "content"; Results is required for Kind "json".
	Fields FieldPaths
	// TextField is the _source/doc field holding the page text
	// (Elasticsearch, Solr); it overrides Fields.Text. Default: none.
	TextField string
	// IDField is Solr's uniqueKey, used to find highlighting. Default "id".
	IDField string
	// Path is the backend path Search uses, e.g. "/docs/_search",
	// "/solr/core/select", "/search", "/cgi-bin/omega". Default per kind:
	// "/_search", "/solr/select", "/search", "/", "/search".
	Path string
	// QueryParam, FromParam and SizeParam name the URL parameters of the
	// query, the offset and the page size. Defaults: q/from/size
	// (elasticsearch, json), q/start/rows (solr), q/-/- with pageno
	// (searxng), P/TOPDOC/HITSPERPAGE (opensearch-rss, Xapian Omega).
	QueryParam, FromParam, SizeParam string
	// Extra are URL parameters Search adds, e.g. "DB=default&FMT=opensearch".
	Extra string
	// MaxFetch caps the raw hits Rewrite asks for when it fetches from the
	// first hit. Default 1000.
	MaxFetch int
	// ResultWindow is the largest from+size the backend serves
	// (Elasticsearch's index.max_result_window): the over-fetch stays
	// within it. Default 10,000 for elasticsearch, none for other kinds;
	// negative: none.
	ResultWindow int
	// SolrHandlers are the Solr request handlers the read-only gateway
	// lets through as searches (names such as "select" or "browse", one
	// path segment each), besides the last segment of Path. Default
	// ["select"]; other kinds ignore it.
	SolrHandlers []string
	// SolrJSONP lets Solr searches through the read-only gateway with
	// json.wrf (JSONP), refused by default: with it a <script> tag of
	// any web page reads the answers a user's browser is given, past the
	// same-origin rule. Other kinds refuse it.
	SolrJSONP bool
	// URLOnly makes Parse read only each hit's URL and text (JSON kinds):
	// transparent refinement needs no titles or snippets, and reading
	// highlights is a large part of parsing an answer. An Elasticsearch
	// hit's Score is then left 0: its _score is read only when Render
	// needs it (a group's max_score); reading every score was a fifth of
	// building the results.
	URLOnly bool
}

const (
	defaultMaxFetch = 1000
	defaultESWindow = 10_000 // index.max_result_window's default
)

// Adapter speaks one backend's API. Implementations are safe for
// concurrent use.
type Adapter interface {
	// Name is the adapter kind: "elasticsearch", "solr", "searxng",
	// "opensearch-rss" or "json".
	Name() string
	// Rewrite turns the client's request into the backend request that
	// over-fetches factor times the client's page and returns the client's
	// window for Render.
	Rewrite(r Request, factor int) (Request, Window, error)
	// Search builds the backend request for a metasearch query.
	Search(q Query) (Request, error)
	// Parse parses a backend answer. A backend error document gives an
	// error that matches [ErrBackend].
	Parse(body []byte, contentType string) (*Parsed, error)
	// Render appends the backend's format for window w (see [Mode]) to
	// dst, so a caller can render into a buffer it reuses. Results with
	// Winner == -1 pass through unchanged.
	Render(dst []byte, p *Parsed, marks []Mark, mode Mode, w Window) ([]byte, error)
}

// Pager is implemented by adapters whose backend has no page size
// (SearXNG). Pages returns the backend requests for the client's page and
// the factor-1 pages after it; ParsePages merges their answers, in order,
// into one [Parsed] whose document is the first page's.
type Pager interface {
	Pages(r Request, factor int) ([]Request, Window, error)
	ParsePages(bodies [][]byte, contentType string) (*Parsed, error)
}

// Parsed is a parsed backend answer. It keeps the body it was parsed from
// (the caller must not modify it) so Render can copy it.
type Parsed struct {
	// Results are the hits in backend order.
	Results []Result
	// Total is the backend's total hit count, -1 if unknown.
	Total int

	body  []byte
	xml   bool
	list  span    // JSON: the results array, brackets included
	elems []span  // JSON: each hit; XML: each <item>/<entry> element
	inner []int   // XML: offset of each item's end tag
	es    []esHit // Elasticsearch: what Render reads of each hit
	// esScores: Results' Score were not read (URLOnly); Render reads
	// them from es.
	esScores bool
	rootNS   int      // XML: where to add the winnow namespace declaration
	patch    []patch  // JSON, in body order
	ids      []string // Solr: each hit's uniqueKey, "" for none
	xpatch   []xmlPatch
	first    int  // results on the first page (Pager), else len(Results)
	kind     kind // JSON: the adapter's kind (Partial)
}

type span struct{ start, end int }

// esHit is what the walk captured of an Elasticsearch hit for Group
// mode, so Render need not scan the hit again: its _score as the engine
// wrote it (if a number, unless Parsed.esScores), and its inner_hits
// object, if it has one; a zero span for none.
type esHit struct{ score, inner span }

// patch replaces a value at span: with the window's From or Size, or
// Solr's highlighting with that of the documents shown.
type patch struct {
	at   span
	what byte // 'f': From (plus Base when raw), 's': Size, 'h': highlighting
}

// Namespace is the XML namespace of winnow's annotations.
const Namespace = "https://winnow-search.github.io/ns/1"

var (
	// ErrBackend matches a backend's own error document; see
	// [BackendError].
	ErrBackend = errors.New("engine: backend error")
	// ErrMalformed matches an answer that is not the expected JSON or XML.
	ErrMalformed = errors.New("engine: malformed answer")
	// ErrKind is returned by New for an unknown Config.Kind.
	ErrKind = errors.New("engine: unknown kind")
	// ErrRequest matches a client request Rewrite cannot handle.
	ErrRequest = errors.New("engine: bad request")
	// ErrFormat matches a search Rewrite does not rewrite because it asks
	// for an answer in a format winnow cannot refine: Solr's wt other
	// than json, such as SolrJ's default javabin or its XML.
	ErrFormat = errors.New("engine: answer format winnow does not refine")
	// ErrMarks is returned by Render when marks do not fit the results.
	ErrMarks = errors.New("engine: marks do not match results")
)

// BackendError is a backend's own error document. Status is its HTTP
// status as the document states it (0 if it does not); Reason is its
// message. The proxy passes such bodies on unchanged.
type BackendError struct {
	Engine string
	Status int
	Reason string
}

// Error implements error.
func (e *BackendError) Error() string {
	return fmt.Sprintf("engine %s: backend error %d: %s", e.Engine, e.Status, e.Reason)
}

// Is reports whether target is [ErrBackend].
func (e *BackendError) Is(target error) bool { return target == ErrBackend }

// New returns the adapter for cfg.Kind.
func New(cfg Config) (Adapter, error) {
	cfg.Fields.URL = cmp.Or(cfg.Fields.URL, "url")
	cfg.Fields.Title = cmp.Or(cfg.Fields.Title, "title")
	cfg.Fields.Snippet = cmp.Or(cfg.Fields.Snippet, "content")
	cfg.Fields.Text = cmp.Or(cfg.TextField, cfg.Fields.Text)
	cfg.IDField = cmp.Or(cfg.IDField, "id")
	cfg.MaxFetch = cmp.Or(cfg.MaxFetch, defaultMaxFetch)
	if cfg.MaxFetch < 0 {
		return nil, fmt.Errorf("engine: MaxFetch %d is negative", cfg.MaxFetch)
	}
	if cfg.SolrJSONP && cfg.Kind != "solr" {
		return nil, fmt.Errorf("engine: SolrJSONP is for kind solr, not %q", cfg.Kind)
	}
	for _, h := range cfg.SolrHandlers {
		if cfg.Kind != "solr" {
			return nil, fmt.Errorf("engine: SolrHandlers is for kind solr, not %q", cfg.Kind)
		}
		if err := SolrHandler(h); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
	}
	k, err := LookupKind(cfg.Kind)
	if err != nil {
		return nil, err
	}
	return k.adapter(k.withDefaults(cfg))
}

// fetchRange computes the backend range for a client window from, size
// over-fetched factor times, within the backend's result window (the
// largest from+size it serves; 0: no limit): the over-fetch shrinks to
// fit, so a request that is legal directly stays legal through winnow
// (from=9990&size=10 against Elasticsearch's 10,000). A request past the
// window itself goes on as the client asked, for the backend to refuse.
func fetchRange(from, size, factor, maxFetch, window int) (bfrom, bsize int, w Window) {
	factor = max(factor, 1)
	if end := (from + size) * factor; end <= maxFetch && (window <= 0 || end <= window) {
		return 0, end, Window{From: from, Size: size}
	}
	bsize = size * factor
	if window > 0 && from+bsize > window {
		bsize = max(window-from, size)
	}
	return from, bsize, Window{From: from, Size: size, Base: from}
}

// dupLists links each winner's duplicates in list order, so Render visits
// a winner's duplicates without scanning every mark for each winner:
// first[w] is w's first duplicate, next[j] the one after j, -1 ends a
// chain.
type dupLists struct{ first, next []int32 }

func duplicateLists(marks []Mark) dupLists {
	n := len(marks)
	all := make([]int32, 3*n) // one allocation: first, next, last
	for i := range all {
		all[i] = -1
	}
	d := dupLists{first: all[:n:n], next: all[n : 2*n : 2*n]}
	last := all[2*n:]
	for j := range marks {
		w := marks[j].Winner
		if w < 0 || w == j || w >= len(marks) {
			continue
		}
		if last[w] < 0 {
			d.first[w] = int32(j)
		} else {
			d.next[last[w]] = int32(j)
		}
		last[w] = int32(j)
	}
	return d
}

// Extent returns the offset in the answer's body from which on Render
// reads or rewrites anything: Render copies the bytes before it
// unchanged, and what it renders depends on nothing before it. A proxy
// can so reuse a rendering for a later answer that differs from this one
// only before Extent (the time an engine took, say). Answers merged from
// several pages (Pager) have no such offset: Extent returns 0.
func (p *Parsed) Extent() int {
	if p.first != len(p.Results) {
		return 0
	}
	if p.xml {
		ext := len(p.body)
		if p.rootNS >= 0 {
			ext = p.rootNS
		}
		for _, pt := range p.xpatch {
			ext = min(ext, pt.at.start)
		}
		if len(p.elems) > 0 {
			s := p.elems[0].start
			for s > 0 && isSpace(p.body[s-1]) {
				s--
			}
			ext = min(ext, s)
		}
		return ext
	}
	ext := p.list.start
	for _, pt := range p.patch {
		ext = min(ext, pt.at.start)
	}
	return ext
}

// Body returns the answer the Parsed was parsed from (not a copy: the
// caller must not modify it).
func (p *Parsed) Body() []byte { return p.body }
