package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// RouteKind says what a request the read-only gateway lets through is.
type RouteKind int

const (
	// RouteSearch is a search the adapter rewrites and the proxy
	// refines.
	RouteSearch RouteKind = iota + 1
	// RouteScroll continues a scroll: a page of the engine's cursor,
	// refined within itself, never rewritten and never sent twice.
	RouteScroll
	// RouteClearScroll clears scroll contexts (DELETE).
	RouteClearScroll
	// RouteMsearch is a multi-search (NDJSON body).
	RouteMsearch
	// RouteCount counts matching documents.
	RouteCount
	// RoutePIT opens or closes a point in time.
	RoutePIT
	// RouteRoot is the engine's root (its name and version).
	RouteRoot
	// RouteIndexExists is HEAD of one index by its plain name (no
	// wildcard, list or leading '.'): whether it exists, which a
	// search of it shows too (404 when it does not). Spring Data
	// Elasticsearch asks it for every repository when it starts.
	RouteIndexExists
)

// String names the route kind, for logs and reasons.
func (k RouteKind) String() string {
	switch k {
	case RouteSearch:
		return "search"
	case RouteScroll:
		return "scroll"
	case RouteClearScroll:
		return "clear_scroll"
	case RouteMsearch:
		return "msearch"
	case RouteCount:
		return "count"
	case RoutePIT:
		return "pit"
	case RouteRoot:
		return "root"
	case RouteIndexExists:
		return "index_exists"
	}
	return "none"
}

// Route is a client request the gateway lets through.
type Route struct {
	Kind RouteKind
	// Path is the request's path, percent-decoded segment by segment
	// and checked: no segment is empty, ".", ".." or holds '/', '\', '%',
	// ';' or a control character, so it names exactly the route the
	// gateway checked however it is escaped again.
	Path string
	// Query is the request's query, parsed strictly.
	Query url.Values
	// Cursor reports a search that pages by the engine's cursor (a
	// scroll, a point in time, search_after): it is refined within the
	// page the engine gives, never over-fetched.
	Cursor bool
	// CursorIDs reports a route whose answer may carry the engine's
	// scroll or point in time IDs, which the proxy seals
	// ([CursorSeal.SealHead]) before the client sees them.
	CursorIDs bool
	// Body, when not nil, is the body the engine is sent instead of the
	// client's: the gate unsealed the cursor IDs the client's holds.
	Body []byte
	// Strict, when not nil, are the wildcards of a request whose client
	// asked allow_no_indices=false and whose indices the gate narrowed:
	// the engine is sent allow_no_indices=true (it would fail when any
	// one of the narrowed patterns matches nothing), so the proxy asks
	// the engine first whether each matches an index, and answers as
	// the engine would when one does not. A pointer: the route of every
	// search is copied, and this one is seldom set.
	Strict *[]StrictWildcard
}

// StrictWildcard is a wildcard of a client's index expression sent with
// allow_no_indices=true in place of the client's false ([Route.Strict]).
type StrictWildcard struct {
	// Missing is the engine's reason when the wildcard matches nothing
	// ("no such index [*x]", of index_not_found_exception).
	Missing string
	// Probe is the path and query of a search of no hits that the
	// engine answers with "_shards":{"total":0} exactly when the
	// wildcard, narrowed, matches no index.
	Probe string
}

// ErrRefused matches a request the read-only gateway does not let
// through; the error's text says why.
var ErrRefused = errors.New("not a search")

// GateRequest is what [Gate.Check] looks at: the method, the request
// target as the client sent it (not decoded), the body and its
// Content-Type.
type GateRequest struct {
	Method, URI, ContentType string
	Body                     []byte
}

// Gate is the read-only gateway's allow-list for one engine: the route
// shapes and methods that are searches. Everything else is refused
// before any byte reaches the engine. The zero Gate refuses everything;
// a Gate is safe for concurrent use.
type Gate struct {
	kind *Kind // nil: refuses everything
	// handlers are the Solr request handlers that search; prefix the
	// configured search path's directory, as segments.
	handlers []string
	prefix   []string
	jsonp    bool   // Solr: json.wrf passes
	search   string // other kinds: the configured search path's last segment, or "" for "/"
	seal     *CursorSeal
}

// NewGate returns the allow-list for an engine of cfg.Kind whose search
// path is cfg.Path (default per kind). For Solr, the handlers of
// cfg.SolrHandlers (default "select") and the configured path's last
// segment are searches, under the path's directory or any core's. An
// unknown kind's Gate refuses everything.
func NewGate(cfg Config) *Gate {
	k, err := LookupKind(cfg.Kind)
	if err != nil {
		return &Gate{}
	}
	g := &Gate{kind: k, seal: randomSeal()}
	if k.gate != nil {
		k.gate(g, cfg)
	}
	return g
}

// WithCursorSeal returns a copy of g that unseals the cursor IDs
// requests present with seal, the seal the proxy seals the engine's
// answers with. A gate's own seal (from [NewGate]) has a random key.
func (g *Gate) WithCursorSeal(seal *CursorSeal) *Gate {
	c := *g
	c.seal = seal
	return &c
}

// solrGate sets up a Solr gate: without a configured path, any core's
// handlers (/{core}/select, /solr/{core}/select).
func solrGate(g *Gate, cfg Config) {
	g.jsonp = cfg.SolrJSONP
	g.handlers = slices.Clone(cfg.SolrHandlers)
	if len(g.handlers) == 0 {
		g.handlers = []string{"select"}
	}
	if cfg.Path == "" {
		return
	}
	segs := strings.Split(strings.Trim(cfg.Path, "/"), "/")
	if last := segs[len(segs)-1]; last != "" && !slices.Contains(g.handlers, last) {
		g.handlers = append(g.handlers, last)
	}
	if len(segs) > 1 {
		g.prefix = segs[:len(segs)-1]
	}
}

// pathGate sets up the gate of a kind whose one search route is its
// search path's last segment (the root for "/").
func pathGate(g *Gate, cfg Config) {
	segs := strings.Split(strings.Trim(cmp.Or(cfg.Path, g.kind.Path), "/"), "/")
	if last := segs[len(segs)-1]; last != "." {
		g.search = last
	}
}

// Check returns the route of r, or an error matching [ErrRefused] that
// says why r is not a search.
func (g *Gate) Check(r GateRequest) (Route, error) {
	rawPath, rawQuery, _ := strings.Cut(r.URI, "?")
	if g.kind != nil && g.kind.Name == "solr" {
		// Solr serves a handler with one trailing '/' as without it, and
		// pysolr always asks for "select/?q=...": the checked path, which
		// the engine receives, drops it.
		rawPath = solrTrailingSlash(rawPath)
	}
	segs, err := pathSegments(rawPath)
	if err != nil {
		return Route{}, err
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return Route{}, fmt.Errorf("%w: query: %v", ErrRefused, err)
	}
	rt := Route{Query: q}
	if g.kind == nil {
		rt.Path = "/" + strings.Join(segs, "/")
		return rt, fmt.Errorf("%w: no routes", ErrRefused)
	}
	rt, segs, err = g.kind.route(g, rt, r, segs)
	if err == nil && g.kind.cursors != nil && (rt.Kind != RouteSearch || rt.Cursor) {
		// A search that pages by no cursor presents no cursor ID, and
		// its answer carries none: it is not looked at again.
		rt, err = g.kind.cursors(g, rt, r, segs)
	}
	// After cursors, which may unseal a segment.
	rt.Path = "/" + strings.Join(segs, "/")
	return rt, err
}

func refused(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefused}, args...)...)
}

// pathSegments splits a request path into its percent-decoded segments,
// refusing every trick that could make the engine see another route
// than the gateway checked: a path that does not start with '/', empty
// segments ("//", a trailing '/'), "." and "..", an encoded '/' or '\',
// a '%' left after decoding (double encoding), ';' (path parameters,
// which Jetty strips), '#' and control characters.
func pathSegments(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, refused("path %q is not absolute", p)
	}
	if p == "/" {
		return nil, nil
	}
	raw := strings.Split(p[1:], "/")
	segs := make([]string, len(raw))
	for i, s := range raw {
		d, err := url.PathUnescape(s)
		switch {
		case err != nil:
			return nil, refused("path segment %q: %v", s, err)
		case d == "":
			return nil, refused("path %q has an empty segment", p)
		case d == "." || d == "..":
			return nil, refused("path %q has a %q segment", p, d)
		case strings.ContainsAny(d, "/\\%;#") || strings.ContainsAny(s, ";"):
			return nil, refused("path segment %q holds a reserved character", s)
		}
		for _, c := range d {
			if c < 0x20 || c == 0x7f {
				return nil, refused("path segment %q holds a control character", s)
			}
		}
		segs[i] = d
	}
	return segs, nil
}

// esRoute classifies an Elasticsearch or OpenSearch route, and reports
// whether a search pages by a cursor (a scroll, a point in time,
// search_after). A search, count, multi-search or point in time naming
// "*", "_all", a pattern starting with '*' or no index is narrowed to
// the names that do not start with '.' ([undotted]).
func esRoute(g *Gate, rt Route, r GateRequest, s []string) (Route, []string, error) {
	q := rt.Query
	if q.Has("source") {
		// The engine reads source as the request's body: it would carry
		// a body past the gate's look at the body.
		return rt, s, refused("parameter source (a body in the query string): send the body as the request's body")
	}
	ew := q["expand_wildcards"]
	for _, v := range ew {
		if err := expandWildcards(v); err != nil {
			return rt, s, err
		}
	}
	none := len(ew) > 0 && wildcardsNone(ew)
	k, err := esRouteKind(r.Method, s, g.kind.Name == "opensearch")
	rt.Kind = k
	if err != nil {
		// A DELETE of scrolls or points in time naming _all (every
		// client's) is refused where every ID is checked: _all is no ID
		// this gateway sealed ([esCursors]), with allow_writes too.
		return rt, s, err
	}
	pit := false
	switch {
	case k == RouteMsearch:
		// A header line without allow_no_indices takes the query's,
		// which is sent true when the path is narrowed.
		strict := q.Get("allow_no_indices") == "false"
		sent := strict
		if len(s) == 1 {
			sent = false
		} else if _, ok := undotted(s[0]); ok {
			sent = false
		}
		if rt.Body, err = esMsearchLines(r.Body, strict, sent); err != nil {
			return rt, s, err
		}
	case len(r.Body) == 0:
	case k == RouteSearch:
		var after, boost, ok bool
		if pit, after, boost, ok = esSearchBody(r.Body); !ok {
			// The engine reads comments, YAML, CBOR and SMILE too: a
			// point in time the gate cannot see would reach the engine
			// with its ID unchecked ([CursorSeal]).
			return rt, s, refused("a search body that is not strict JSON (comments, YAML, CBOR, SMILE) could hold a point in time ID or another index the gateway cannot check; send JSON")
		}
		rt.Cursor = pit || after
		if err := esBodyIndices(r.Body, boost); err != nil {
			return rt, s, err
		}
	case k == RouteCount, k == RoutePIT && r.Method == "POST":
		// A count's query, and the index_filter of a point in time
		// opened, are a search's.
		_, _, boost, ok := esSearchBody(r.Body)
		if !ok {
			return rt, s, refused("a body that is not strict JSON (comments, YAML, CBOR, SMILE) could name another index the gateway cannot check; send JSON")
		}
		if err := esBodyIndices(r.Body, boost); err != nil {
			return rt, s, err
		}
	}
	rt.Cursor = rt.Cursor || k == RouteSearch && q.Has("scroll")
	switch {
	case k == RoutePIT && r.Method == "DELETE", k == RouteRoot, k == RouteIndexExists, k == RouteScroll, k == RouteClearScroll:
	case none:
		// A wildcard matches nothing: the engines take it for a name
		// (Elasticsearch answers 404) or find no index, and "_all" and
		// no index search none; narrowed, each pattern failed 404.
	case len(s) == 1:
		// A search of no index: of every index but the dot-named ones.
		// A point in time names its indices where it is opened (and
		// the engine refuses a search naming both).
		if !pit {
			rt.Strict = allowNoIndices(q, "_all", k)
			s = []string{undottedAll, s[0]}
		}
	default:
		n, ok := undotted(s[0])
		if !ok {
			break
		}
		// As the engine receives it, '*' escaped as %2A.
		if size := len(n) + 2*strings.Count(n, "*"); size > maxNarrowed {
			return rt, s, refused("the index expression, narrowed to the names not starting with '.', is %d bytes, more than the engine's request line holds; name fewer patterns starting with '*'", size)
		}
		rt.Strict = allowNoIndices(q, s[0], k)
		s[0] = n
	}
	return rt, s, nil
}

// allowNoIndices sends a client's allow_no_indices=false true in q, the
// query of a request whose index expression expr the gate narrowed: the
// engine would fail when any one of the narrowed patterns matches
// nothing (an exclusion too), not when the client's wildcard does. It
// returns what the proxy checks in its place ([Route.Strict]; an
// _msearch's lines are not checked).
func allowNoIndices(q url.Values, expr string, k RouteKind) *[]StrictWildcard {
	if q.Get("allow_no_indices") != "false" {
		return nil
	}
	q.Set("allow_no_indices", "true")
	if k == RouteMsearch {
		return nil
	}
	ws := strictWildcards(expr, q)
	return &ws
}

// strictWildcards are the wildcards of the index expression expr (an
// exclusion's too: the engine fails when one matches nothing) as
// [Route.Strict] has them, each probed with the client's
// expand_wildcards, ignore_unavailable and ignore_throttled in q.
func strictWildcards(expr string, q url.Values) []StrictWildcard {
	probe := url.Values{"size": {"0"}, "track_total_hits": {"false"}, "allow_no_indices": {"true"}, "filter_path": {"_shards.total"}}
	for _, k := range []string{"expand_wildcards", "ignore_unavailable", "ignore_throttled"} {
		if v, ok := q[k]; ok {
			probe[k] = v
		}
	}
	query := probe.Encode()
	var ws []StrictWildcard
	for i, n := range strings.Split(expr, ",") {
		if i > 0 && strings.HasPrefix(n, "-") {
			n = n[1:]
		}
		if n != "_all" && strings.IndexByte(n, '*') < 0 {
			continue // a name: ignore_unavailable's
		}
		sent, _ := undotted(n)
		missing := "no such index [" + n + "]"
		if n == "_all" {
			// Elasticsearch 8.19's and OpenSearch 2.19's words.
			missing += " and no indices exist"
		}
		ws = append(ws, StrictWildcard{Missing: missing, Probe: "/" + sent + "/_search?" + query})
	}
	return ws
}

// nameStarts are the characters an index name the gateway lets through
// may start with ([indexPattern]).
const nameStarts = "abcdefghijklmnopqrstuvwxyz0123456789"

// nameNexts are the characters after the first of an index name the
// gateway lets through ([indexPattern]).
const nameNexts = nameStarts + "-_+."

// undottedAll is "*" narrowed by [undotted]: a pattern for each
// character a name may start with, "a*,b*,...,9*".
var undottedAll, _ = undottedPattern("")

// maxNarrowed bounds an index expression narrowed in the path, in bytes
// as the engine receives it ('*' escaped as %2A): the engines refuse a
// request line over 4 KB (Elasticsearch's and OpenSearch's
// http.max_initial_line_length), and the rest of the line needs room.
const maxNarrowed = 3072

// undotted narrows an index expression that passed [indexPattern]: each
// "_all", and each pattern starting with '*' (not an exclusion), is
// replaced by patterns that match the same names but those starting
// with '.'. Elasticsearch and OpenSearch match the non-hidden indices
// whose names start with '.' by "*", "_all", a pattern starting with
// '*' and a search naming no index (".kibana", an operator's ".secret").
// Excluding them ("*,-.*") was tried: on Elasticsearch 8.19 and
// OpenSearch 2.19 it also excludes the backing indices (".ds-...") of
// every data stream a wildcard matched, so logs-* no longer found a
// data stream's documents; their wildcards have no character classes
// ("[!.]*"). A pattern per first character does not name the backing
// indices, so a data stream matched by one is searched whole
// ([undottedPattern]). An expression without "_all" or '*' is returned
// as it is. It reports whether it narrowed.
func undotted(expr string) (string, bool) {
	if strings.IndexByte(expr, '*') < 0 && !strings.Contains(expr, "_all") {
		return expr, false
	}
	names := strings.Split(expr, ",")
	var exact []string
	changed := false
	for i, n := range names {
		switch {
		case n == "_all":
			names[i] = undottedAll
		case strings.HasPrefix(n, "*"):
			var group string
			names[i], group = undottedPattern(strings.TrimLeft(n, "*"))
			if group != "" {
				exact = append(exact, group)
			}
		default:
			continue
		}
		changed = true
	}
	if !changed {
		return expr, false
	}
	// An exclusion drops the names resolved before it: the groups of
	// exact names go first, so theirs drop none of the client's.
	return strings.Join(append(exact, names...), ","), true
}

// undottedPattern is the pattern "*" + rest narrowed, and the group of
// an exact name that goes first in the expression ([undotted]), or "".
//
// When rest ends with a character that is not a digit or '*', it is
// "*" + rest followed by the exclusion "-.*" + rest: a backing index
// of a data stream (".ds-name-2026.01.01-000001", ".fs-..." on
// Elasticsearch, ".ds-name-000001" on OpenSearch) ends with a digit,
// so the exclusion drops the dot-named indices, aliases and data
// streams only (Elasticsearch 8.19 and OpenSearch 2.19). Otherwise it
// is c + "*" + rest for each character c a name may start with, and
// the name rest itself when it starts a name ('*' matching nothing):
// not as the name, which the engines answer 404 when no index is named
// so, but as the group rest + "*" less rest + c + "*" for every
// character c a name may hold after its first, which matches rest
// alone (and a name that goes on with another character, which the
// gateway lets no client name).
func undottedPattern(rest string) (pattern, group string) {
	if n := len(rest); n > 0 && rest[n-1] != '*' && (rest[n-1] < '0' || rest[n-1] > '9') {
		return "*" + rest + ",-.*" + rest, ""
	}
	var b strings.Builder
	for i := range len(nameStarts) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte(nameStarts[i])
		b.WriteByte('*')
		b.WriteString(rest)
	}
	pattern = b.String()
	if rest == "" || strings.IndexByte(nameStarts, rest[0]) < 0 {
		return pattern, ""
	}
	if strings.IndexByte(rest, '*') >= 0 {
		// rest is a pattern: it matches nothing that is not a name.
		return rest + "," + pattern, ""
	}
	b.Reset()
	b.WriteString(rest)
	b.WriteByte('*')
	for i := range len(nameNexts) {
		b.WriteString(",-")
		b.WriteString(rest)
		b.WriteByte(nameNexts[i])
		b.WriteByte('*')
	}
	return pattern, b.String()
}

func esRouteKind(method string, s []string, os bool) (RouteKind, error) {
	search := method == "GET" || method == "POST"
	scrollMethod := search || method == "DELETE"
	switch {
	case len(s) == 0 && (method == "GET" || method == "HEAD"):
		return RouteRoot, nil
	case len(s) == 1 && s[0] == "_search" && search:
		return RouteSearch, nil
	case len(s) == 1 && s[0] == "_msearch" && search:
		return RouteMsearch, nil
	case len(s) == 1 && s[0] == "_count" && search:
		return RouteCount, nil
	case len(s) == 2 && s[0] == "_search" && s[1] == "scroll" && scrollMethod,
		len(s) == 3 && s[0] == "_search" && s[1] == "scroll" && scrollMethod && scrollID(s[2]):
		if method == "DELETE" {
			return RouteClearScroll, nil
		}
		return RouteScroll, nil
	case !os && len(s) == 1 && s[0] == "_pit" && method == "DELETE":
		return RoutePIT, nil
	case os && len(s) == 2 && s[0] == "_search" && s[1] == "point_in_time" && method == "DELETE":
		return RoutePIT, nil
	case len(s) == 1 && method == "HEAD" && indexPattern(s[0]) == nil && !strings.ContainsAny(s[0], "*,") && s[0] != "_all":
		return RouteIndexExists, nil
	case len(s) >= 2 && indexPattern(s[0]) == nil:
		switch {
		case len(s) == 2 && s[1] == "_search" && search:
			return RouteSearch, nil
		case len(s) == 2 && s[1] == "_msearch" && search:
			return RouteMsearch, nil
		case len(s) == 2 && s[1] == "_count" && search:
			return RouteCount, nil
		case !os && len(s) == 2 && s[1] == "_pit" && method == "POST":
			return RoutePIT, nil
		case os && len(s) == 3 && s[1] == "_search" && s[2] == "point_in_time" && method == "POST":
			return RoutePIT, nil
		}
	case len(s) >= 2:
		return 0, refused("%v", indexPattern(s[0]))
	}
	return 0, refused("%s /%s is not a search", method, strings.Join(s, "/"))
}

// indexPattern checks an index name, pattern or comma-separated list of
// them by Elasticsearch's index-name rules: lower case; none of
// \ / * ? " < > | space , # :; not starting with '-', '_' or '+' (but
// "_all", and '-' excluding a later pattern); not "." or ".."; at most
// 255 bytes. Patterns may hold '*'. Names starting with '.' (system and
// hidden indices) are refused: the gateway searches the engine's data,
// not its own. So is ':', a remote cluster's name before an index
// ("remote:idx") or a selector after it ("idx::failures"): with no
// remote cluster Elasticsearch 8.19 searched every local index, the
// dot-named ones too, for "*:idx" and "_all::data".
func indexPattern(s string) error {
	for i, name := range strings.Split(s, ",") {
		if name == "_all" || name == "*" {
			continue
		}
		if i > 0 && strings.HasPrefix(name, "-") {
			name = name[1:]
		}
		switch {
		case name == "" || len(name) > 255:
			return fmt.Errorf("index name %q is empty or longer than 255 bytes", name)
		case strings.IndexByte("-_+.", name[0]) >= 0:
			return fmt.Errorf("index name %q starts with %q", name, name[0])
		case strings.IndexByte(name, ':') >= 0:
			return fmt.Errorf("index name %q names a remote cluster (cluster:index) or a selector (index::data); search the remote cluster through a gateway of its own", name)
		}
		for _, c := range name {
			ok := 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.ContainsRune("-_.+*", c)
			if !ok {
				return fmt.Errorf("index name %q holds %q", name, c)
			}
		}
	}
	return nil
}

// expandWildcards refuses an expand_wildcards value (a comma list) that
// opens wildcards to hidden indices ("hidden", "all"): the gateway
// searches the engine's data, not its hidden or system indices.
func expandWildcards(v string) error {
	for _, w := range strings.Split(v, ",") {
		if w == "hidden" || w == "all" {
			return refused("expand_wildcards=%s reaches hidden and system indices", v)
		}
	}
	return nil
}

// wildcardsNone reports whether expand_wildcards values vs are all
// "none".
func wildcardsNone(vs []string) bool {
	for _, v := range vs {
		for w := range strings.SplitSeq(v, ",") {
			if w != "none" {
				return false
			}
		}
	}
	return len(vs) > 0
}

// esMsearchLines checks the indices a multi-search names line by line:
// each line that is not blank is one JSON object, whose "index" or
// "indices" (a string or a list of them) passes [indexPattern] and
// whose "expand_wildcards" passes [expandWildcards]. Every line is
// checked, headers and bodies alike (no search body has those members),
// so the check does not depend on how the engine pairs the lines; every
// member is seen, repeated ones too. A line the gate cannot read is
// refused: the engine's parser is laxer (comments, UTF-16, SMILE). It
// returns the body the engine is sent, with the indices narrowed
// ([undotted]), or nil when that is body itself. strict is the client's
// allow_no_indices=false in the query, sent whether the engine is sent
// it: a line narrowed is sent allow_no_indices true, as a path narrowed
// is ([esRoute]), and a line not narrowed keeps the client's.
func esMsearchLines(body []byte, strict, sent bool) ([]byte, error) {
	lines := bytes.Split(body, []byte("\n"))
	changed := false
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		narrowed, err := esMsearchLine(line, strict, sent)
		if err != nil {
			return nil, refused("_msearch line %d: %v", i+1, err)
		}
		if narrowed != nil {
			lines[i], changed = narrowed, true
		}
	}
	if !changed {
		return nil, nil
	}
	return bytes.Join(lines, []byte("\n")), nil
}

// esMsearchLine checks one line of a multi-search ([esMsearchLines]) and
// returns it with its indices narrowed, or nil when they need not be.
func esMsearchLine(line []byte, strict, sent bool) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	type member struct {
		key string
		v   json.RawMessage
	}
	var members []member
	changed, boost, narrowed, named := false, false, false, false
	allow := -1 // the line's allow_no_indices member, or -1
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		switch key {
		case "indices_boost":
			boost = true
		case "allow_no_indices":
			// The engine reads a boolean or a string.
			switch strings.Trim(string(bytes.TrimSpace(v)), `"`) {
			case "false":
				allow = len(members)
				strict = true
			case "true":
				allow = len(members)
				strict = false
			}
		case "pit":
			// Its ID would reach the engine unsealed ([CursorSeal]).
			return nil, errors.New("a point in time in a multi-search: search it through _search")
		case "index", "indices", "expand_wildcards":
			var list []string
			if json.Unmarshal(v, &list) != nil {
				var one string
				if err := json.Unmarshal(v, &one); err != nil {
					return nil, fmt.Errorf("%s is not a string or a list of strings", key)
				}
				list = []string{one}
			}
			joined := strings.Join(list, ",")
			if key == "expand_wildcards" {
				if err := expandWildcards(joined); err != nil {
					return nil, err
				}
			} else if err := indexPattern(joined); err != nil {
				return nil, err
			} else if n, ok := undotted(joined); ok {
				v, _ = json.Marshal(n)
				changed, narrowed = true, true
			}
			named = named || key != "expand_wildcards"
		}
		members = append(members, member{key, v})
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	if rest := line[d.InputOffset():]; len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("more than one JSON object")
	}
	if err := esBodyIndices(line, boost); err != nil {
		return nil, err
	}
	// What the engine is to apply: the client's, or true for a line
	// narrowed (its patterns fail one by one when it is false).
	want := !strict || narrowed
	switch {
	case !named:
		// The path's indices; the line may be a search body, which
		// takes no allow_no_indices.
	case allow >= 0 && string(members[allow].v) != strconv.FormatBool(want):
		members[allow].v = []byte(strconv.FormatBool(want))
		changed = true
	case allow < 0 && want == sent:
		members = append(members, member{"allow_no_indices", []byte(strconv.FormatBool(want))})
		changed = true
	}
	if !changed {
		return nil, nil
	}
	out := []byte{'{'}
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(m.key)
		out = append(append(append(out, k...), ':'), m.v...)
	}
	return append(out, '}'), nil
}

// esBodyIndices refuses a search body (or a multi-search line) whose
// query reads an index the path rules ([indexPattern]) would refuse: a
// terms lookup's, a geo_shape or shape query's indexed_shape's and a
// percolate query's "index"; a more_like_this item's or a pinned
// document's "_index"; a lookup runtime field's "target_index"; a key of
// "indices_boost". A lookup answers yes or no on another index's
// document (the search finds or misses, or fails saying the document is
// there), a lookup runtime field copies its fields into the hits, and
// indices_boost fails on an index that is not there. A lookup names one
// index, so a pattern ('*', a list, "_all") is refused too. A member
// named so is a lookup in an object of more than one member (a lookup
// needs an ID or a field besides; a field named "index" is queried as
// {"term":{"index":...}}) and holding a string; top-level members are a
// multi-search header's, checked by [esMsearchLine]. Every member is
// seen, repeated ones too, its name unescaped. boost says b has a
// top-level indices_boost.
func esBodyIndices(b []byte, boost bool) error {
	// A body naming none of them is not decoded: a search's usual body
	// costs two scans for bytes it seldom holds ('x', '\\'). A name
	// could be spelled otherwise with a \u escape only.
	if !boost && !hasPair(b, 'x', '"') && !hasPair(b, '\\', 'u') {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	t, err := d.Token()
	if err == nil {
		err = walkIndices(d, t, "", 0)
	}
	if err != nil && !errors.Is(err, ErrRefused) {
		return refused("a search body the gateway cannot read: %v", err)
	}
	return err
}

// hasPair reports whether b holds c followed by d: a scan for c, which
// should be rare in b.
func hasPair(b []byte, c, d byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], c)
		if j < 0 {
			return false
		}
		i += j + 1
		if i < len(b) && b[i] == d {
			return true
		}
	}
}

// walkIndices walks the JSON value that starts with t, the value of
// member key at depth (0 for the document) ([esBodyIndices]).
func walkIndices(d *json.Decoder, t json.Token, key string, depth int) error {
	switch t {
	case json.Delim('['):
		for d.More() {
			v, err := d.Token()
			if err != nil {
				return err
			}
			if err := walkIndices(d, v, key, depth); err != nil {
				return err
			}
		}
	case json.Delim('{'):
		var named []string
		n := 0
		for ; d.More(); n++ {
			k, err := d.Token()
			if err != nil {
				return err
			}
			name, _ := k.(string)
			if key == "indices_boost" && depth == 1 {
				if err := indexPattern(name); err != nil {
					return refused("indices_boost: %v", err)
				}
			}
			v, err := d.Token()
			if err != nil {
				return err
			}
			if s, ok := v.(string); ok && depth > 0 && (name == "index" || name == "_index" || name == "target_index") {
				named = append(named, s)
				continue
			}
			if err := walkIndices(d, v, name, depth+1); err != nil {
				return err
			}
		}
		for _, ix := range named {
			if n < 2 {
				break
			}
			err := indexPattern(ix)
			if err == nil && (ix == "_all" || strings.ContainsAny(ix, "*,")) {
				err = errors.New("a pattern or a list")
			}
			if err != nil {
				return refused("a search body reading index %q (a lookup, more_like_this, geo_shape, percolate, pinned document): it may read one index the path rules let through, not %v", ix, err)
			}
		}
	default:
		return nil
	}
	_, err := d.Token() // the closing ']' or '}'
	return err
}

// scrollID reports whether s is a scroll ID, "_all" or a comma list of
// IDs: URL-safe base64 (Elasticsearch and OpenSearch write them so).
func scrollID(s string) bool {
	if s == "" || len(s) > 1<<16 {
		return false
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("-_=+,.", c)) {
			return false
		}
	}
	return true
}

// esSearchBody reports which of the top-level members of an
// Elasticsearch search body that matter to the gate it has: a point in
// time ("pit") or "search_after" (it pages by a cursor), and
// "indices_boost" ([esBodyIndices]); ok is false when b is not strict
// JSON (checkDoc). The members are read in one pass.
func esSearchBody(b []byte) (pit, after, boost, ok bool) {
	if checkDoc(b) != nil {
		return false, false, false, false
	}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false, false, false, true
	}
	for i = skipWS(b, i+1); i < len(b) && b[i] == '"'; {
		ke, _ := skipString(b, i)
		switch k := b[i:ke]; {
		case keyEq(k, "pit"):
			pit = true
		case keyEq(k, "search_after"):
			after = true
		case keyEq(k, "indices_boost"):
			boost = true
		}
		ve, _ := skipValue(b, skipWS(b, skipWS(b, ke)+1))
		if i = skipWS(b, ve); i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	return pit, after, boost, true
}

// solrRoute classifies a Solr route: the configured search handlers
// only, under the configured core or /solr/{core}, with parameters that
// stay within one search. It reports whether the search pages by cursorMark.
func solrRoute(g *Gate, rt Route, r GateRequest, s []string) (Route, []string, error) {
	var err error
	rt.Kind, rt.Cursor, err = solrSearch(g, r, s, rt.Query)
	return rt, s, err
}

// solrSearch is [solrRoute]'s decision: a search, and whether it pages
// by cursorMark.
func solrSearch(g *Gate, r GateRequest, s []string, q url.Values) (RouteKind, bool, error) {
	cursor := q.Has("cursorMark")
	if r.Method != "GET" && r.Method != "POST" {
		return 0, false, refused("%s is not a search method", r.Method)
	}
	if len(s) == 0 || !slices.Contains(g.handlers, s[len(s)-1]) {
		return 0, false, refused("/%s is not a search handler (%s)", strings.Join(s, "/"), strings.Join(g.handlers, ", "))
	}
	pre := s[:len(s)-1]
	switch {
	case slices.Equal(pre, g.prefix):
	case len(pre) == 2 && pre[0] == "solr" && solrCore(pre[1]):
	case len(pre) == 1 && len(g.prefix) == 0 && solrCore(pre[0]):
	default:
		return 0, false, refused("/%s is not a core's search handler", strings.Join(s, "/"))
	}
	if err := solrParams(q, g.jsonp); err != nil {
		return 0, false, err
	}
	// Solr reads the body of a GET as it reads a POST's (a form or a JSON
	// Request API body): every body is checked, whatever the method.
	if len(r.Body) > 0 {
		mt, err := solrBodyType(r.ContentType)
		if err != nil {
			return 0, false, err
		}
		switch mt {
		case "application/x-www-form-urlencoded":
			form, err := url.ParseQuery(string(r.Body))
			if err != nil {
				return 0, false, refused("form body: %v", err)
			}
			if err := solrParams(form, g.jsonp); err != nil {
				return 0, false, err
			}
			cursor = cursor || form.Has("cursorMark")
		case "application/json":
			if err := solrJSONBody(r.Body, g.jsonp); err != nil {
				return 0, false, err
			}
			cursor = cursor || strings.Contains(string(r.Body), `"cursorMark"`)
		default:
			return 0, false, refused("a search body is a form or JSON, not %q", r.ContentType)
		}
	}
	return RouteSearch, cursor, nil
}

// solrBodyType is the media type of a search body's Content-Type, which
// names no charset but UTF-8. Solr decodes a form body in the charset it
// finds after "charset=" anywhere in the header: in UTF-16 the bytes of
// "s\x00h\x00a\x00r\x00d\x00s\x00" are a parameter "shards" that the gate,
// reading UTF-8, would not have seen.
func solrBodyType(ct string) (string, error) {
	mt, ps, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", refused("a search body is a form or JSON; Content-Type %q: %v", ct, err)
	}
	n := strings.Count(strings.ToLower(ct), "charset=")
	if cs, ok := ps["charset"]; n > 1 || n == 1 && (!ok || !strings.EqualFold(cs, "utf-8")) {
		return "", refused("a search body is UTF-8, not Content-Type %q", ct)
	}
	return mt, nil
}

// SolrHandler checks a name for [Config].SolrHandlers: one path
// segment of letters, digits, '_' and '-', and none of the handlers
// Solr itself reserves for what is not a search (update, admin, config,
// schema, ...).
func SolrHandler(s string) error {
	if !solrCore(s) || strings.Contains(s, ".") {
		return fmt.Errorf("solr handler %q is not a plain path segment, or is one of Solr's own (admin, update, config, schema, ...)", s)
	}
	switch s {
	case "export", "stream", "sql", "graph", "replication", "get", "debug", "analysis", "terms", "tvrh":
		return fmt.Errorf("solr handler %q reaches beyond a search", s)
	}
	return nil
}

// solrTrailingSlash is p without one trailing '/' after a segment; an
// empty segment before it ("//") stays, for pathSegments to refuse.
func solrTrailingSlash(p string) string {
	if len(p) > 1 && strings.HasSuffix(p, "/") && !strings.HasSuffix(p, "//") {
		return p[:len(p)-1]
	}
	return p
}

// solrCore reports whether s can name a Solr core or collection and is
// none of Solr's own path segments.
func solrCore(s string) bool {
	switch s {
	case "admin", "api", "c", "update", "config", "schema", "solr":
		return false
	}
	for i, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' && i > 0 || c == '.' && i > 0) {
			return false
		}
	}
	return s != ""
}

// solrResponseWriters are the wt values a search may ask for: the data
// formats, not the template writers (velocity, xslt) that run code.
var solrResponseWriters = []string{"", "json", "xml", "javabin", "csv", "geojson", "python", "ruby", "php", "phps", "smile"}

// solrParams refuses the parameters that reach beyond one search of
// one core: another handler (qt), other cores or hosts (shards,
// collection), request bodies by reference (stream.*), the update
// parameters, response writers that run templates, an input encoding
// (ie) other than UTF-8, and, unless jsonp, JSONP (json.wrf).
func solrParams(q url.Values, jsonp bool) error {
	for k, vs := range q {
		for _, v := range vs {
			// Local parameters open with "{!"; a json.* parameter is
			// part of a JSON request, whose query DSL names them as
			// members.
			if strings.Contains(v, "{!") || strings.Contains(k, "json.") {
				if err := solrReach(v); err != nil {
					return err
				}
			}
		}
		// A [subquery] document transformer named x (fl=x:[subquery])
		// sends a request of its own with the parameters x.* (x.y.* for
		// one nested in it), to the handler x.qt names: x.qt=/update
		// with x.optimize=true merged the core's segments from /select.
		// So every tail of a name after a '.' is checked as a name.
		for name := k; ; {
			err := solrParam(name, vs)
			if err == nil && name == "json.wrf" && !jsonp {
				// JSONP wraps the answer in a call of the function it
				// names: a <script> tag of any web page the user's
				// browser opens would read the answer, past the
				// same-origin rule (CORS) the browser keeps for a
				// fetch. Elasticsearch refused its JSONP by default
				// from 1.3 and removed it in 5.0.
				err = refused("Solr parameter json.wrf (JSONP) lets any web page read the answers; serve.engines[].solr_jsonp allows it")
			}
			if err != nil {
				if name != k {
					return fmt.Errorf("%w, in %q (a [subquery]'s parameters are its own request's)", err, k)
				}
				return err
			}
			i := strings.IndexByte(name, '.')
			if i < 0 {
				break
			}
			name = name[i+1:]
		}
	}
	return nil
}

// solrReachNames are the parameters of Solr's join that reach beyond
// the searched collection: fromIndex reads another core or collection
// (one solrCore refuses as well, such as .system, and named through a
// parameter reference as well as literally), and the cross-collection join (method=crossCollection) connects to the
// cluster zkHost names, or the Solr solrUrl names: {!join
// method=crossCollection fromIndex=x from=id to=id
// zkHost=10.0.0.5:2181}*:* had Solr open a ZooKeeper session with any
// host a caller named. The join reads them as local parameters or,
// failing those, as the request's own (fromIndex=x beside {!join from=id
// to=id}).
var solrReachNames = [...]string{"fromIndex", "zkHost", "solrUrl"}

// solrReach refuses a parameter value (a query, or a JSON Request API
// string) that sets one of solrReachNames, as a local parameter
// (name=value) or a JSON query's member ("name": value), in any case.
// A search for the words alone passes.
func solrReach(v string) error {
	// From each '=' or ':' back over blanks and quotes to the name
	// before it: a query holds few of those, and no scan of every byte.
	for i := 0; ; {
		k := strings.IndexAny(v[i:], "=:")
		if k < 0 {
			return nil
		}
		end := len(strings.TrimRight(v[:i+k], `\"' `+"\t\r\n"))
		for _, name := range solrReachNames {
			if end >= len(name) && strings.EqualFold(v[end-len(name):end], name) {
				return refused("Solr's join parameter %s reaches beyond the searched collection", name)
			}
		}
		i += k + 1
	}
}

// solrParam refuses parameter k (with values vs) for [solrParams].
// shards.tolerant passes: it only lets a SolrCloud search answer from
// the shards that answered, where shards.info would show the shards'
// addresses and shards.qt their handler.
func solrParam(k string, vs []string) error {
	for _, name := range solrReachNames {
		if len(k) == len(name) && strings.EqualFold(k, name) {
			return refused("Solr's join parameter %s reaches beyond the searched collection", name)
		}
	}
	switch {
	case k == "qt", k == "shards" || strings.HasPrefix(k, "shards.") && k != "shards.tolerant", strings.HasPrefix(k, "stream."),
		k == "collection", k == "json", k == "commit", k == "softCommit", k == "optimize", k == "commitWithin",
		k == "action", k == "tr", strings.HasPrefix(k, "v."), k == "update.chain", k == "processor":
		return refused("Solr parameter %q reaches beyond a search", k)
	case k == "spellcheck.build", k == "spellcheck.reload", k == "suggest.build", k == "suggest.buildAll", k == "suggest.reload":
		return refused("Solr parameter %q rebuilds a dictionary on the engine", k)
	case k == "ie":
		// The query string's or form's charset (input encoding): in
		// another than UTF-8 Solr reads other parameters than the
		// gate checked.
		for _, v := range vs {
			if !strings.EqualFold(v, "utf-8") {
				return refused("Solr parameter ie=%q: parameters are UTF-8", v)
			}
		}
	case k == "wt":
		for _, v := range vs {
			if !slices.Contains(solrResponseWriters, v) {
				return refused("Solr response writer wt=%q is not a data format", v)
			}
		}
	}
	return nil
}

// solrJSONBody checks a JSON Request API body: its members are those of
// a search, and its params pass [solrParams].
func solrJSONBody(b []byte, jsonp bool) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return refused("JSON body: %v", err)
	}
	for k, v := range doc {
		switch k {
		case "query", "filter", "facet", "queries":
			// The JSON Query DSL: {"join": {"fromIndex": ...}}, or a
			// string in the local parameters' syntax.
			if err := solrJSONReach(v); err != nil {
				return err
			}
		case "limit", "offset", "sort", "fields":
		case "params":
			var ps map[string]json.RawMessage
			if err := json.Unmarshal(v, &ps); err != nil {
				return refused("JSON body params: %v", err)
			}
			q := url.Values{}
			for pk, pv := range ps {
				var s string
				if json.Unmarshal(pv, &s) != nil {
					s = string(pv)
				}
				q.Add(pk, s)
			}
			if err := solrParams(q, jsonp); err != nil {
				return err
			}
		default:
			return refused("JSON body member %q is not part of a search", k)
		}
	}
	return nil
}

// solrJSONReach applies [solrReach] to every member name and string of
// a JSON Request API value.
func solrJSONReach(b json.RawMessage) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return refused("JSON body: %v", err)
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case string:
			return solrReach(x)
		case []any:
			for _, e := range x {
				if err := walk(e); err != nil {
					return err
				}
			}
		case map[string]any:
			for k, e := range x {
				if err := solrReach(k + ":"); err != nil {
					return err
				}
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v)
}

// pathRoute classifies a request to the other kinds (SearXNG, feeds,
// generic JSON): the configured search path's last segment, or the root
// when the search path is "/".
func pathRoute(g *Gate, rt Route, r GateRequest, s []string) (Route, []string, error) {
	if r.Method != "GET" && r.Method != "POST" && r.Method != "HEAD" {
		return rt, s, refused("%s is not a search method", r.Method)
	}
	if g.search == "" && len(s) == 0 || len(s) > 0 && s[len(s)-1] == g.search && g.search != "" {
		rt.Kind = RouteSearch
		return rt, s, nil
	}
	return rt, s, refused("/%s is not the search path", strings.Join(s, "/"))
}
