package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Limits of the handler.
const (
	// MaxBodyBytes caps a request body; a longer one gets status 413.
	MaxBodyBytes = 1 << 20
	// MaxResultWindow caps from + size of a search, as Elasticsearch's
	// index.max_result_window does by default.
	MaxResultWindow = 10000
	// DefaultSize is the number of hits of a search that does not say.
	DefaultSize = 10
	// SearXNGPageSize is the number of results per page of the SearXNG
	// endpoint.
	SearXNGPageSize = 10
	// MaxOpenSearchCount caps the count parameter of the OpenSearch
	// endpoint.
	MaxOpenSearchCount = 100
)

// SearXNGEngine is the engine name in the SearXNG endpoint's results.
const SearXNGEngine = "demo-searx"

// searchError is a request error, rendered in Elasticsearch's shape by the
// _search endpoint and as plain text by the others.
type searchError struct {
	status int
	typ    string // Elasticsearch error type, e.g. parsing_exception
	reason string
}

func (e *searchError) Error() string { return "demo: " + e.reason }

func parsingError(format string, args ...any) error {
	return &searchError{status: http.StatusBadRequest, typ: "parsing_exception", reason: fmt.Sprintf(format, args...)}
}

func argumentError(format string, args ...any) error {
	return &searchError{status: http.StatusBadRequest, typ: "illegal_argument_exception", reason: fmt.Sprintf(format, args...)}
}

var errBodyTooLarge = &searchError{
	status: http.StatusRequestEntityTooLarge,
	typ:    "content_too_long_exception",
	reason: fmt.Sprintf("request body is over the limit of %d bytes", MaxBodyBytes),
}

// Handler returns the engine's HTTP handler:
//
//   - GET /pages/<path>: the page (ETag, Last-Modified, conditional and
//     range requests); 404 for an unknown path.
//   - GET|POST /<index>/_search and /_search: an Elasticsearch 7 subset
//     (URL parameters q, from, size, df, default_operator; a JSON body with
//     from, size and a query: match, query_string, multi_match or
//     match_all); errors in Elasticsearch's shape. A demo-only parameter,
//     x_variant=N, appends ?v=N to every hit URL, so a load test can show
//     the same pages under many URLs. Every answer carries
//     X-Elastic-Product: Elasticsearch, as Elasticsearch's do.
//   - GET|POST /searxng/search?q=&format=json&pageno=N: SearXNG JSON,
//     ranked with the title boosted.
//   - GET /opensearch?q=&start=&count=: OpenSearch 1.1 RSS 2.0; start is
//     1-based.
//   - GET /: an HTML page describing these endpoints.
//
// Result URLs are absolute on the request's Host. The handler is safe for
// concurrent use.
func (e *Engine) Handler() http.Handler { return http.HandlerFunc(e.serveHTTP) }

func (e *Engine) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/":
		if allow(w, r, http.MethodGet, http.MethodHead) {
			e.serveIndex(w, r)
		}
	case strings.HasPrefix(p, "/pages/"):
		if allow(w, r, http.MethodGet, http.MethodHead) {
			e.servePage(w, r, p[len("/pages/"):])
		}
	case p == "/searxng/search":
		if allow(w, r, http.MethodGet, http.MethodPost) {
			e.serveSearXNG(w, r)
		}
	case p == "/opensearch":
		if allow(w, r, http.MethodGet, http.MethodHead) {
			e.serveOpenSearch(w, r)
		}
	case p == "/_search":
		// Elasticsearch 7.14 and later name their product on every
		// answer; the official clients refuse a server that does not.
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		if allow(w, r, http.MethodGet, http.MethodPost) {
			e.serveES(w, r, "demo")
		}
	case strings.HasSuffix(p, "/_search") && strings.Count(p, "/") == 2:
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		if allow(w, r, http.MethodGet, http.MethodPost) {
			index := p[1 : len(p)-len("/_search")]
			if index == "_all" || strings.ContainsAny(index, "*,") {
				// A hit names the concrete index it came from, never
				// the expression searched (a gateway narrows "*" into
				// a list of patterns).
				index = "demo"
			}
			e.serveES(w, r, index)
		}
	default:
		http.NotFound(w, r)
	}
}

// allow answers 405 unless r's method is one of methods.
func allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
	return false
}

func (e *Engine) servePage(w http.ResponseWriter, r *http.Request, p string) {
	i, ok := e.byPath[p]
	if !ok {
		http.NotFound(w, r)
		return
	}
	d := &e.docs[i]
	h := w.Header()
	h.Set("Content-Type", d.contentType)
	h.Set("ETag", d.etag)
	http.ServeContent(w, r, "", e.modTime, bytes.NewReader(d.body))
}

// base returns "http://host" (https on TLS) for the request's Host, or
// the local address when the request has none.
func base(r *http.Request) string {
	host := r.Host
	if host == "" {
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			host = a.String()
		} else {
			host = "localhost"
		}
	}
	if r.TLS != nil {
		return "https://" + host
	}
	return "http://" + host
}

// readBody reads r's body into dst, up to MaxBodyBytes.
func readBody(r *http.Request, dst []byte) ([]byte, error) {
	dst = dst[:0]
	if r.Body == nil || r.Body == http.NoBody {
		return dst, nil
	}
	lr := io.LimitReader(r.Body, MaxBodyBytes+1)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := lr.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > MaxBodyBytes {
			return dst, errBodyTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, &searchError{status: http.StatusBadRequest, typ: "parse_exception", reason: "reading the request body: " + err.Error()}
		}
	}
}

func (e *Engine) serveES(w http.ResponseWriter, r *http.Request, index string) {
	start := time.Now()
	s := e.get()
	defer e.put(s)
	q, err := e.parseES(r, s)
	if err != nil {
		e.writeESError(w, r, err)
		return
	}
	e.run(s, q)
	page := window(s.touched, q.from, q.size)

	buf := append(s.buf[:0], `{"took":`...)
	buf = strconv.AppendInt(buf, time.Since(start).Milliseconds(), 10)
	buf = append(buf, `,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":`...)
	buf = strconv.AppendInt(buf, int64(len(s.touched)), 10)
	buf = append(buf, `,"relation":"eq"},"max_score":`...)
	if len(s.touched) == 0 {
		buf = append(buf, "null"...)
	} else {
		buf = appendScore(buf, s.scores[s.touched[0]])
	}
	buf = append(buf, `,"hits":[`...)
	baseURL := base(r)
	for k, d := range page {
		dc := &e.docs[d]
		if k > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"_index":`...)
		buf = appendJSONString(buf, index)
		buf = append(buf, `,"_type":"_doc","_id":`...)
		buf = append(buf, dc.idJSON...)
		buf = append(buf, `,"_score":`...)
		buf = appendScore(buf, s.scores[d])
		buf = append(buf, `,"_source":{"url":"`...)
		buf = appendJSONChars(buf, baseURL)
		buf = append(buf, dc.urlJSON...)
		if q.variant != "" {
			buf = append(buf, "?v="...)
			buf = append(buf, q.variant...)
		}
		buf = append(buf, `","title":`...)
		buf = append(buf, dc.titleJSON...)
		buf = append(buf, `,"release":`...)
		buf = append(buf, dc.releaseJSON...)
		if e.textInHits {
			buf = append(buf, `,"text":`...)
			buf = append(buf, dc.textJSON...)
		}
		buf = append(buf, '}')
		if !q.all {
			mark := len(buf)
			var marked bool
			if q.scorer == scoreTitle {
				buf = append(buf, `,"highlight":{"title":["`...)
				buf, marked = e.appendHighlight(buf, s, dc.title)
			} else {
				buf = append(buf, `,"highlight":{"text":["`...)
				start, end := e.snippetSpan(d, s.off[d])
				buf, marked = e.appendHighlightSpan(buf, s, d, start, end)
			}
			buf = append(buf, `"]}`...)
			if !marked {
				buf = buf[:mark]
			}
		}
		buf = append(buf, '}')
	}
	buf = append(buf, "]}}"...)
	s.buf = buf
	e.logSearch(r.Context(), "elasticsearch", len(s.touched))
	writeBody(w, "application/json; charset=UTF-8", http.StatusOK, buf)
}

func writeBody(w http.ResponseWriter, contentType string, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body) // a failed write is the client's loss
}

func (e *Engine) logSearch(ctx context.Context, endpoint string, total int) {
	if e.log.Enabled(ctx, slog.LevelDebug) {
		e.log.DebugContext(ctx, "search", "endpoint", endpoint, "total", total)
	}
}

// writeESError writes err in Elasticsearch's error shape.
func (e *Engine) writeESError(w http.ResponseWriter, r *http.Request, err error) {
	var se *searchError
	if !errors.As(err, &se) {
		se = &searchError{status: http.StatusInternalServerError, typ: "exception", reason: err.Error()}
	}
	if e.log.Enabled(r.Context(), slog.LevelDebug) {
		e.log.DebugContext(r.Context(), "search_error", "endpoint", "elasticsearch", "status", se.status, "err", err)
	}
	var b []byte
	b = append(b, `{"error":{"root_cause":[{"type":`...)
	b = appendJSONString(b, se.typ)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, se.reason)
	b = append(b, `}],"type":`...)
	b = appendJSONString(b, se.typ)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, se.reason)
	b = append(b, `},"status":`...)
	b = strconv.AppendInt(b, int64(se.status), 10)
	b = append(b, '}')
	writeBody(w, "application/json; charset=UTF-8", se.status, b)
}

// parseES reads an Elasticsearch search request: the JSON body, then the
// URL parameters, which take precedence. No query means match_all.
func (e *Engine) parseES(r *http.Request, s *scratch) (query, error) {
	q := query{all: true, size: DefaultSize}
	body, err := readBody(r, s.buf)
	s.buf = body
	if err != nil {
		return q, err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := parseESBody(body, &q); err != nil {
			return q, err
		}
	}
	params, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return q, argumentError("bad query string: %v", err)
	}
	for _, p := range [...]struct {
		name string
		dst  *int
	}{{"from", &q.from}, {"size", &q.size}} {
		if v, ok := params[p.name]; ok && len(v) > 0 {
			n, err := strconv.Atoi(v[0])
			if err != nil {
				return q, argumentError("Failed to parse int parameter [%s] with value [%s]", p.name, v[0])
			}
			*p.dst = n
		}
	}
	if text := params.Get("q"); text != "" {
		q.text, q.all, q.and, q.scorer = text, false, false, scoreText
		if params.Get("df") == "title" {
			q.scorer = scoreTitle
		}
		switch op := params.Get("default_operator"); strings.ToLower(op) {
		case "", "or":
		case "and":
			q.and = true
		default:
			return q, argumentError("operator [%s] is not allowed, use [AND] or [OR]", op)
		}
	}
	if v := params.Get("x_variant"); v != "" {
		if len(v) > 9 || strings.Trim(v, "0123456789") != "" {
			return q, argumentError("x_variant [%s] is not a number of at most 9 digits", v)
		}
		q.variant = v
	}
	if q.from < 0 {
		return q, argumentError("[from] parameter cannot be negative, found [%d]", q.from)
	}
	if q.size < 0 {
		return q, argumentError("[size] parameter cannot be negative, found [%d]", q.size)
	}
	if q.from+q.size > MaxResultWindow {
		return q, argumentError("Result window is too large, from + size must be less than or equal to: [%d] but was [%d]. "+
			"See the scroll api for a more efficient way to request large data sets.", MaxResultWindow, q.from+q.size)
	}
	return q, nil
}

// ignoredKeys are search body keys that are accepted and have no effect.
var ignoredKeys = map[string]bool{
	"_source": true, "highlight": true, "track_total_hits": true, "timeout": true,
	"stored_fields": true, "explain": true, "version": true, "track_scores": true,
}

func parseESBody(body []byte, q *query) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return parsingError("failed to parse the request body: %v", err)
	}
	for k, v := range top {
		switch k {
		case "from", "size":
			n, err := jsonInt(v)
			if err != nil {
				return parsingError("[%s] %v", k, err)
			}
			if k == "from" {
				q.from = n
			} else {
				q.size = n
			}
		case "query":
			if err := parseQuery(v, q); err != nil {
				return err
			}
		default:
			if !ignoredKeys[k] {
				return parsingError("Unknown key for a %s in [%s].", tokenKind(v), k)
			}
		}
	}
	return nil
}

// tokenKind names the JSON token that v starts with, as Jackson (and so
// Elasticsearch's messages) does.
func tokenKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "VALUE_NULL"
	}
	switch v[0] {
	case '{':
		return "START_OBJECT"
	case '[':
		return "START_ARRAY"
	case '"':
		return "VALUE_STRING"
	case 't', 'f':
		return "VALUE_BOOLEAN"
	case 'n':
		return "VALUE_NULL"
	}
	return "VALUE_NUMBER"
}

// jsonInt decodes an integer given as a JSON number or string.
func jsonInt(v json.RawMessage) (int, error) {
	var n int
	if err := json.Unmarshal(v, &n); err == nil {
		return n, nil
	}
	var str string
	if err := json.Unmarshal(v, &str); err == nil {
		if n, err := strconv.Atoi(str); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("expected an integer, found [%s]", bytes.TrimSpace(v))
}

// jsonText decodes query text given as a JSON string, number or boolean.
func jsonText(v json.RawMessage) (string, bool) {
	var str string
	if err := json.Unmarshal(v, &str); err == nil {
		return str, true
	}
	switch tokenKind(v) {
	case "VALUE_NUMBER", "VALUE_BOOLEAN":
		return string(bytes.TrimSpace(v)), true
	}
	return "", false
}

func jsonObject(v json.RawMessage) (map[string]json.RawMessage, bool) {
	if tokenKind(v) != "START_OBJECT" {
		return nil, false
	}
	var m map[string]json.RawMessage
	err := json.Unmarshal(v, &m)
	return m, err == nil
}

// parseQuery reads the query clause of a search body.
func parseQuery(v json.RawMessage, q *query) error {
	m, ok := jsonObject(v)
	if !ok {
		return parsingError("[query] malformed query, expected [START_OBJECT] but found [%s]", tokenKind(v))
	}
	if len(m) == 0 {
		q.all = true
		return nil
	}
	if len(m) > 1 {
		return parsingError("[query] malformed query, expected [END_OBJECT] but found [FIELD_NAME]")
	}
	for name, body := range m {
		params, ok := jsonObject(body)
		if !ok {
			return parsingError("[%s] query malformed, no start_object after query name", name)
		}
		q.all, q.scorer = false, scoreText
		switch name {
		case "match_all":
			for k := range params {
				if k != "boost" {
					return parsingError("[match_all] query does not support [%s]", k)
				}
			}
			q.all = true
			return nil
		case "match":
			return parseMatch(params, q)
		case "query_string":
			return parseFullText(name, params, q, "default_operator", map[string]bool{"default_field": true, "fields": true, "boost": true})
		case "multi_match":
			return parseFullText(name, params, q, "operator", map[string]bool{"fields": true, "type": true, "boost": true})
		default:
			return parsingError("unknown query [%s]", name)
		}
	}
	return nil
}

// parseMatch reads {"<field>": "text"} or {"<field>": {"query": "text",
// "operator": "and"}}. The field "title" searches titles, any other the
// page text.
func parseMatch(params map[string]json.RawMessage, q *query) error {
	if len(params) == 0 {
		return parsingError("No text specified for text query")
	}
	if len(params) > 1 {
		var names []string
		for k := range params {
			names = append(names, k)
		}
		return parsingError("[match] query doesn't support multiple fields, found [%s] and [%s]", min(names[0], names[1]), max(names[0], names[1]))
	}
	for field, v := range params {
		if field == "title" {
			q.scorer = scoreTitle
		}
		if text, ok := jsonText(v); ok {
			q.text = text
			return nil
		}
		inner, ok := jsonObject(v)
		if !ok {
			return parsingError("[match] unknown token [%s] after [%s]", tokenKind(v), field)
		}
		return parseFullText("match", inner, q, "operator", map[string]bool{"boost": true})
	}
	return nil
}

// parseFullText reads the parameters of a full-text query: "query"
// (required), the operator under opKey, and the ignored keys.
func parseFullText(name string, params map[string]json.RawMessage, q *query, opKey string, ignored map[string]bool) error {
	raw, ok := params["query"]
	if !ok {
		return parsingError("[%s] requires query value", name)
	}
	text, ok := jsonText(raw)
	if !ok {
		return parsingError("[%s] [query] must be a string, found [%s]", name, tokenKind(raw))
	}
	q.text = text
	for k, v := range params {
		switch {
		case k == "query":
		case k == opKey:
			op, _ := jsonText(v)
			switch strings.ToLower(op) {
			case "or":
			case "and":
				q.and = true
			default:
				return parsingError("[%s] unknown [%s] value [%s], use [and] or [or]", name, k, op)
			}
		case k == "default_field" && name == "query_string":
			if f, _ := jsonText(v); f == "title" {
				q.scorer = scoreTitle
			}
		case ignored[k]:
		default:
			return parsingError("[%s] query does not support [%s]", name, k)
		}
	}
	return nil
}

func (e *Engine) serveSearXNG(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "demo: bad form: "+err.Error(), http.StatusBadRequest)
		return
	}
	text := r.Form.Get("q")
	if text == "" {
		http.Error(w, "demo: missing parameter q", http.StatusBadRequest)
		return
	}
	if f := r.Form.Get("format"); f != "json" {
		http.Error(w, "demo: format must be json", http.StatusBadRequest)
		return
	}
	pageno := 1
	if v := r.Form.Get("pageno"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxResultWindow/SearXNGPageSize {
			http.Error(w, "demo: bad pageno "+strconv.Quote(v), http.StatusBadRequest)
			return
		}
		pageno = n
	}
	s := e.get()
	defer e.put(s)
	e.run(s, query{text: text, scorer: scoreBoosted})
	from := (pageno - 1) * SearXNGPageSize
	page := window(s.touched, from, SearXNGPageSize)

	baseURL := base(r)
	buf := append(s.buf[:0], `{"query":`...)
	buf = appendJSONString(buf, text)
	buf = append(buf, `,"number_of_results":`...)
	buf = strconv.AppendInt(buf, int64(len(s.touched)), 10)
	buf = append(buf, `,"results":[`...)
	for k, d := range page {
		dc := &e.docs[d]
		if k > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"url":"`...)
		buf = appendJSONChars(buf, baseURL)
		buf = append(buf, dc.urlJSON...)
		buf = append(buf, `","title":`...)
		buf = append(buf, dc.titleJSON...)
		buf = append(buf, `,"content":`...)
		buf = appendJSONString(buf, e.snippet(d, s.off[d]))
		buf = append(buf, `,"engine":"`+SearXNGEngine+`","engines":["`+SearXNGEngine+`"],"positions":[`...)
		buf = strconv.AppendInt(buf, int64(from+k+1), 10)
		buf = append(buf, `],"score":`...)
		buf = appendScore(buf, s.scores[d])
		buf = append(buf, `,"category":"general","template":"default.html"}`...)
	}
	buf = append(buf, `],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`...)
	s.buf = buf
	e.logSearch(r.Context(), "searxng", len(s.touched))
	writeBody(w, "application/json", http.StatusOK, buf)
}

func (e *Engine) serveOpenSearch(w http.ResponseWriter, r *http.Request) {
	params, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		http.Error(w, "demo: bad query string: "+err.Error(), http.StatusBadRequest)
		return
	}
	text := params.Get("q")
	if text == "" {
		http.Error(w, "demo: missing parameter q", http.StatusBadRequest)
		return
	}
	start, count := 1, DefaultSize
	for _, p := range [...]struct {
		name     string
		dst      *int
		min, max int
	}{{"start", &start, 1, MaxResultWindow}, {"count", &count, 0, MaxOpenSearchCount}} {
		if v := params.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < p.min || n > p.max {
				http.Error(w, fmt.Sprintf("demo: parameter %s=%q is not an integer in [%d, %d]", p.name, v, p.min, p.max), http.StatusBadRequest)
				return
			}
			*p.dst = n
		}
	}
	s := e.get()
	defer e.put(s)
	e.run(s, query{text: text})
	page := window(s.touched, start-1, count)

	baseURL := base(r)
	buf := append(s.buf[:0], `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<rss version="2.0" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:atom="http://www.w3.org/2005/Atom">`+"\n"+
		`<channel>`+"\n<title>demo search: "...)
	buf = appendXML(buf, text)
	buf = append(buf, "</title>\n<link>"...)
	buf = appendXML(buf, baseURL+"/opensearch?"+url.Values{"q": {text}}.Encode())
	buf = append(buf, "</link>\n<description>Results of the demo search engine of winnow</description>\n<opensearch:totalResults>"...)
	buf = strconv.AppendInt(buf, int64(len(s.touched)), 10)
	buf = append(buf, "</opensearch:totalResults>\n<opensearch:startIndex>"...)
	buf = strconv.AppendInt(buf, int64(start), 10)
	buf = append(buf, "</opensearch:startIndex>\n<opensearch:itemsPerPage>"...)
	buf = strconv.AppendInt(buf, int64(count), 10)
	buf = append(buf, "</opensearch:itemsPerPage>\n"+`<opensearch:Query role="request" searchTerms="`...)
	buf = appendXML(buf, text)
	buf = append(buf, `" startIndex="`...)
	buf = strconv.AppendInt(buf, int64(start), 10)
	buf = append(buf, "\"/>\n"...)
	baseXML := appendXML(nil, baseURL)
	for _, d := range page {
		dc := &e.docs[d]
		buf = append(buf, "<item>\n<title>"...)
		buf = append(buf, dc.titleXML...)
		buf = append(buf, "</title>\n<link>"...)
		buf = append(buf, baseXML...)
		buf = append(buf, dc.urlXML...)
		buf = append(buf, "</link>\n<guid isPermaLink=\"true\">"...)
		buf = append(buf, baseXML...)
		buf = append(buf, dc.urlXML...)
		buf = append(buf, "</guid>\n<description>"...)
		buf = appendXML(buf, e.snippet(d, s.off[d]))
		buf = append(buf, "</description>\n</item>\n"...)
	}
	buf = append(buf, "</channel>\n</rss>\n"...)
	s.buf = buf
	e.logSearch(r.Context(), "opensearch", len(s.touched))
	writeBody(w, "application/rss+xml; charset=utf-8", http.StatusOK, buf)
}

func (e *Engine) serveIndex(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>winnow demo search engine</title></head>
<body>
<h1>winnow demo search engine</h1>
<p>`)
	fmt.Fprintf(&b, "%d pages, indexed with BM25. Endpoints:</p>\n<ul>\n", len(e.docs))
	for _, ep := range [...]struct{ link, what string }{
		{"/demo/_search?q=benchmark", "Elasticsearch 7 <code>_search</code> (GET or POST; URL parameters q, from, size or a JSON body with match, query_string, multi_match, match_all)"},
		{"/searxng/search?q=benchmark&format=json&pageno=1", "SearXNG JSON (title boosted ×3)"},
		{"/opensearch?q=benchmark&start=1&count=10", "OpenSearch 1.1 RSS"},
		{e.docs[0].urlPath, "the pages themselves, under <code>/pages/</code>"},
	} {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a>: %s</li>\n", html.EscapeString(ep.link), html.EscapeString(ep.link), ep.what)
	}
	b.WriteString("</ul>\n</body></html>\n")
	writeBody(w, "text/html; charset=utf-8", http.StatusOK, b.Bytes())
}
