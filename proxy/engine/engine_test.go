package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustNew(t testing.TB, cfg Config) Adapter {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return a
}

// parseCase is one real backend answer with the adapter configuration
// that reads it and what Parse must find in it.
type parseCase struct {
	name, file string
	cfg        Config
	total      int
	want       []Result
}

// parseCases are the real answers of every adapter kind in testdata.
func parseCases() []parseCase {
	return []parseCase{
		{"es7", "es7-search.json", Config{Kind: "elasticsearch", Fields: FieldPaths{URL: "user", Snippet: "message"}}, 1,
			[]Result{{URL: "kimchy", Snippet: "trying out Elasticsearch", Score: 1.3862942}}},
		{"opensearch", "opensearch-search.json", Config{Kind: "opensearch", Fields: FieldPaths{Title: "superheroes.1.Hero name", URL: "superheroes.0.Real identity"}}, 1,
			[]Result{{URL: "Clark Kent", Title: "Batman", Score: 1}}},
		{"solr", "solr-select.json", Config{Kind: "solr", Fields: FieldPaths{URL: "id", Title: "name", Snippet: "manu"}, TextField: "payloads"}, 1,
			[]Result{{URL: "VS1GB400C3", Title: "CORSAIR ValueSelect 1GB 184-Pin DDR SDRAM Unbuffered DDR 400 (PC 3200) System Memory - Retail", Snippet: "Corsair Microsystems Inc.", Text: "electronics|4.0 memory|2.0"}}},
		{"solr highlight", "solr-highlight.json", Config{Kind: "solr", Fields: FieldPaths{URL: "id", Title: "name", Snippet: "manu"}}, 1,
			[]Result{{URL: "MA147LL/A", Title: "Apple 60 GB iPod with Video Playback Black", Snippet: "<em>Apple</em> Computer Inc."}}},
		{"searxng", "searxng-webapp-test.json", Config{Kind: "searxng"}, 3,
			[]Result{{URL: "http://first.test.xyz", Title: "First Test", Snippet: "first test content"},
				{URL: "http://second.test.xyz", Title: "Second Test", Snippet: "second test content", Rank: 1}}},
		{"generic", "searxng-webapp-test.json", Config{Kind: "json", Fields: FieldPaths{Results: "results", Total: "number_of_results", URL: "parsed_url.1", Snippet: "engine"}}, 3,
			[]Result{{URL: "first.test.xyz", Title: "First Test", Snippet: "startpage"},
				{URL: "second.test.xyz", Title: "Second Test", Snippet: "youtube", Rank: 1}}},
		{"omega rss", "omega-opensearch.xml", Config{Kind: "opensearch-rss"}, 5, nil},
		{"spec rss", "opensearch-spec-rss.xml", Config{Kind: "opensearch-rss"}, 4230000,
			[]Result{{URL: "http://www.columbia.edu/cu/lweb/eguids/amerihist/nyc.html", Title: "New York History",
				Snippet: "... Harlem.NYC - A virtual tour and information on\n        businesses ...  with historic photos of Columbia's own New York\n        neighborhood ... Internet Resources for the City's History. ..."}}},
		{"spec atom", "opensearch-spec-atom.xml", Config{Kind: "opensearch-rss"}, 4230000,
			[]Result{{URL: "http://www.columbia.edu/cu/lweb/eguids/amerihist/nyc.html", Title: "New York History",
				Snippet: "... Harlem.NYC - A virtual tour and information on\n      businesses ...  with historic photos of Columbia's own New York\n      neighborhood ... Internet Resources for the City's History. ..."}}},
	}
}

func TestParse(t *testing.T) {
	tests := parseCases()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := mustNew(t, tt.cfg).Parse(read(t, tt.file), "")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if p.Total != tt.total {
				t.Errorf("Total = %d, want %d", p.Total, tt.total)
			}
			if tt.want != nil && !reflect.DeepEqual(p.Results, tt.want) {
				t.Errorf("Results = %+v, want %+v", p.Results, tt.want)
			}
		})
	}
}

func TestParseOmega(t *testing.T) {
	p, err := mustNew(t, Config{Kind: "opensearch-rss"}).Parse(read(t, "omega-opensearch.xml"), "application/xml")
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, r := range p.Results {
		urls = append(urls, r.URL)
	}
	want := []string{"http://example.org/docs/p3.html", "http://example.org/docs/p2.html", "http://example.org/docs/p1.html",
		"http://example.org/docs/p4.html", "http://example.org/docs/p1-copy.html"}
	if !reflect.DeepEqual(urls, want) {
		t.Errorf("URLs = %q, want %q", urls, want)
	}
	if got, want := p.Results[4].Title, "Winnow page 1"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
	// Omega's template escapes its highlighting once more than its
	// HTML: the snippet is text with the highlighting tags.
	if got, want := p.Results[0].Snippet, "Near <strong>duplicate</strong> search results 3 are grouped by <strong>winnow</strong>. The proxy removes copies & mirrors...."; got != want {
		t.Errorf("Snippet = %q, want %q", got, want)
	}
}

// TestParseFeedTextConstructs reads feeds python-feedgen 1.0.0 wrote
// (testdata/feedgen.py): an Atom text construct (type="text", the
// default, RFC 4287 §3.1.1.1) is plain text, so its "<b>" is text, not a
// highlighting tag, and comes escaped ("&lt;b>"), as a Result carries a
// "<" and "&" of the text's own that would read as markup; type="html" is
// HTML, read as an RSS description is; type="xhtml" is the text of its
// elements. RSS's description stays HTML and its title as written. Both
// parsers (the scanner, and encoding/xml after a DOCTYPE) agree.
func TestParseFeedTextConstructs(t *testing.T) {
	atom := []Result{
		{URL: "http://example.org/docs/vector.html", Title: "std::vector&lt;int> &amp; a &lt;b> tag",
			Snippet: "Use a &lt;b> tag for bold &amp; &lt;strong>vector&lt;/strong> for arrays."},
		{URL: "http://example.org/docs/html.html", Title: "HTML summary", Snippet: "Near <strong>duplicate</strong> pages & mirrors", Rank: 1},
		{URL: "http://example.org/docs/text.html", Title: "Plain comparison", Snippet: "x &lt; y &amp;&amp; y > z", Rank: 2},
		{URL: "http://example.org/docs/xhtml.html", Title: "XHTML content", Snippet: "An xhtml body with &lt;b> as text", Rank: 3},
	}
	rss := []Result{
		{URL: "http://example.org/docs/vector.html", Title: "std::vector<int> & a <b> tag",
			Snippet: "Use a <b> tag for bold & <strong>vector</strong> for arrays."},
		{URL: "http://example.org/docs/html.html", Title: "HTML summary", Snippet: "Near <strong>duplicate</strong> pages & mirrors", Rank: 1},
		{URL: "http://example.org/docs/text.html", Title: "Plain comparison", Snippet: "x < y && y > z", Rank: 2},
		{URL: "http://example.org/docs/xhtml.html", Title: "XHTML content", Snippet: "An <em>xhtml</em> body with <b> as text", Rank: 3},
	}
	a := mustNew(t, Config{Kind: "opensearch-rss"})
	for _, tt := range []struct {
		file string
		want []Result
	}{{"feedgen-atom.xml", atom}, {"feedgen-rss.xml", rss}} {
		body := read(t, tt.file)
		decl := bytes.IndexByte(body, '\n') + 1
		doctype := append(append(append([]byte(nil), body[:decl]...), "<!DOCTYPE feed>\n"...), body[decl:]...)
		for _, b := range [][]byte{body, doctype} {
			p, err := a.Parse(b, "application/atom+xml")
			if err != nil {
				t.Fatalf("Parse(%s): %v", tt.file, err)
			}
			if !reflect.DeepEqual(p.Results, tt.want) {
				t.Errorf("Parse(%s, DOCTYPE %v) =\n%+v\nwant\n%+v", tt.file, len(b) > len(body), p.Results, tt.want)
			}
		}
	}
}

func TestParseTotals(t *testing.T) {
	es := mustNew(t, Config{Kind: "elasticsearch"})
	tests := []struct {
		name, body string
		want       int
	}{
		// Elasticsearch 6 and older send hits.total as a number.
		{"es6 number", `{"hits":{"total":1000,"max_score":null,"hits":[]}}`, 1000},
		{"es7 object", `{"hits":{"total":{"value":10000,"relation":"gte"},"hits":[]}}`, 10000},
		{"missing", `{"hits":{"hits":[]}}`, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := es.Parse([]byte(tt.body), "application/json")
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != tt.want {
				t.Errorf("Total = %d, want %d", p.Total, tt.want)
			}
		})
	}
}

func TestParseHighlight(t *testing.T) {
	es := mustNew(t, Config{Kind: "elasticsearch", Fields: FieldPaths{Snippet: "message"}})
	body := `{"hits":{"hits":[{"_source":{"url":"u","message":"plain"},"highlight":{"message":["a <em>b</em>","c"]}}]}}`
	p, err := es.Parse([]byte(body), "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Results[0].Snippet, "a <em>b</em> … c"; got != want {
		t.Errorf("Snippet = %q, want %q", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, kind string
		body       []byte
		status     int // BackendError status; 0 means ErrMalformed
		reason     string
	}{
		{"es error", "elasticsearch", read(t, "es-error.json"), 400, "illegal_argument_exception: Failed to parse int parameter [size] with value [surprise_me]"},
		// Elasticsearch 8.19's answer to q=( over one index.
		{"es all shards", "elasticsearch", []byte(`{"error":{"root_cause":[{"type":"query_shard_exception","reason":"Failed to parse query [(]","index":"metahunt_explore"}],"type":"search_phase_execution_exception","reason":"all shards failed","phase":"query","grouped":true},"status":400}`), 400, "query_shard_exception: Failed to parse query [(]"},
		{"es no root cause", "elasticsearch", []byte(`{"error":{"type":"index_closed_exception","reason":"closed"},"status":400}`), 400, "index_closed_exception: closed"},
		{"es string", "elasticsearch", []byte(`{"error":"no handler found","status":400}`), 400, "no handler found"},
		{"solr error", "solr", read(t, "solr-error.json"), 400, `org.apache.solr.search.SyntaxError: Cannot parse 'book"': Lexical error at line 1, column 6.  Encountered: <EOF> after : ""`},
		{"es truncated", "elasticsearch", read(t, "es7-search.json")[:200], 0, ""},
		{"es not json", "elasticsearch", []byte("<html>502 Bad Gateway</html>"), 0, ""},
		{"es no hits", "elasticsearch", []byte(`{"took":1}`), 0, ""},
		{"solr trailing", "solr", []byte(`{"response":{"docs":[]}} x`), 0, ""},
		{"searxng array", "searxng", []byte(`[1,2]`), 0, ""},
		{"rss truncated", "opensearch-rss", read(t, "omega-opensearch.xml")[:300], 0, ""},
		{"rss empty", "opensearch-rss", nil, 0, ""},
		{"rss charset", "opensearch-rss", []byte(`<?xml version="1.0" encoding="EBCDIC"?><rss/>`), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mustNew(t, Config{Kind: tt.kind, Fields: FieldPaths{Results: "r"}}).Parse(tt.body, "")
			if err == nil {
				t.Fatal("Parse succeeded, want error")
			}
			if !strings.HasPrefix(err.Error(), "engine "+tt.kind+": ") {
				t.Errorf("error %q lacks prefix %q", err, "engine "+tt.kind+": ")
			}
			var be *BackendError
			switch {
			case tt.status != 0 && !errors.As(err, &be):
				t.Errorf("error %v is no BackendError", err)
			case tt.status != 0 && (be.Status != tt.status || be.Reason != tt.reason):
				t.Errorf("Status, Reason = %d, %q; want %d, %q", be.Status, be.Reason, tt.status, tt.reason)
			case tt.status != 0 && !errors.Is(err, ErrBackend):
				t.Errorf("errors.Is(%v, ErrBackend) = false", err)
			case tt.status == 0 && !errors.Is(err, ErrMalformed):
				t.Errorf("errors.Is(%v, ErrMalformed) = false", err)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	for _, cfg := range []Config{{Kind: "bing"}, {Kind: "json"}, {Kind: "solr", MaxFetch: -1}} {
		if _, err := New(cfg); err == nil || !strings.HasPrefix(err.Error(), "engine") {
			t.Errorf("New(%+v) = %v, want an engine error", cfg, err)
		}
	}
}

func TestRewrite(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		in     Request
		factor int
		path   string
		body   string
		w      Window
	}{
		{"es url params", Config{Kind: "elasticsearch"}, Request{Method: "GET", Path: "/twitter/_search?q=user:kimchy&from=20&size=10"}, 3,
			"/twitter/_search?from=0&q=user%3Akimchy&size=90", "", Window{From: 20, Size: 10}},
		{"es body", Config{Kind: "elasticsearch"}, Request{Method: "POST", Path: "/twitter/_search", Body: []byte(`{"from": 5, "size": 5, "query": {"term": {"user": "kimchy"}}}`)}, 2,
			"/twitter/_search", `{"from": 0, "size": 20, "query": {"term": {"user": "kimchy"}}}`, Window{From: 5, Size: 5}},
		{"es body defaults", Config{Kind: "elasticsearch"}, Request{Method: "POST", Path: "/_search", Body: []byte(`{"query":{"match_all":{}}}`)}, 3,
			"/_search", `{"size":30,"from":0,"query":{"match_all":{}}}`, Window{From: 0, Size: 10}},
		{"es deep page", Config{Kind: "elasticsearch", MaxFetch: 100}, Request{Method: "GET", Path: "/i/_search?from=200&size=10"}, 3,
			"/i/_search?from=200&size=30", "", Window{From: 200, Size: 10, Base: 200}},
		// The over-fetch stays within Elasticsearch's result window.
		{"es window", Config{Kind: "elasticsearch"}, Request{Method: "GET", Path: "/i/_search?from=9990&size=10"}, 3,
			"/i/_search?from=9990&size=10", "", Window{From: 9990, Size: 10, Base: 9990}},
		{"es window partly", Config{Kind: "elasticsearch"}, Request{Method: "GET", Path: "/i/_search?from=9960&size=10"}, 3,
			"/i/_search?from=9960&size=30", "", Window{From: 9960, Size: 10, Base: 9960}},
		{"es window small", Config{Kind: "elasticsearch", ResultWindow: 50}, Request{Method: "GET", Path: "/i/_search?from=10&size=10"}, 3,
			"/i/_search?from=10&size=30", "", Window{From: 10, Size: 10, Base: 10}},
		{"es window configured", Config{Kind: "elasticsearch", ResultWindow: 35}, Request{Method: "GET", Path: "/i/_search?from=10&size=10"}, 3,
			"/i/_search?from=10&size=25", "", Window{From: 10, Size: 10, Base: 10}},
		{"es past the window", Config{Kind: "elasticsearch"}, Request{Method: "GET", Path: "/i/_search?from=9995&size=10"}, 3,
			"/i/_search?from=9995&size=10", "", Window{From: 9995, Size: 10, Base: 9995}},
		{"solr", Config{Kind: "solr"}, Request{Method: "GET", Path: "/solr/techproducts/select?q=ipod&start=10&rows=5"}, 2,
			"/solr/techproducts/select?q=ipod&rows=30&start=0&wt=json", "", Window{From: 10, Size: 5}},
		// SolrJ's POST: the parameters in a form body, read there; the
		// window is set in the query string alone (Solr reads its values
		// first), the form keeping the rest.
		{"solr form", Config{Kind: "solr"}, Request{Method: "POST", Path: "/solr/techproducts/select", Body: []byte("q=ipod&start=10&rows=5&wt=json&version=2.2")}, 2,
			"/solr/techproducts/select?rows=30&start=0", "q=ipod&version=2.2&wt=json", Window{From: 10, Size: 5}},
		{"solr form without a window", Config{Kind: "solr"}, Request{Method: "POST", Path: "/solr/techproducts/select", Body: []byte("q=ipod")}, 2,
			"/solr/techproducts/select?rows=20&start=0&wt=json", "q=ipod", Window{From: 0, Size: 10}},
		// SolrJ's JsonQueryRequest: offset and limit in a JSON body.
		{"solr json", Config{Kind: "solr"}, Request{Method: "POST", Path: "/solr/techproducts/select?wt=json", Body: []byte(`{"query":"ipod","offset":10,"limit":5}`)}, 2,
			"/solr/techproducts/select?rows=30&start=0&wt=json", `{"query":"ipod","offset":0,"limit":30}`, Window{From: 10, Size: 5}},
		{"solr json without a window", Config{Kind: "solr"}, Request{Method: "POST", Path: "/solr/techproducts/select?start=5&rows=5", Body: []byte(`{"query":"ipod"}`)}, 2,
			"/solr/techproducts/select?rows=20&start=0&wt=json", `{"query":"ipod"}`, Window{From: 5, Size: 5}},
		{"omega", Config{Kind: "opensearch-rss"}, Request{Method: "GET", Path: "/cgi-bin/omega?DB=db&P=winnow&FMT=opensearch"}, 3,
			"/cgi-bin/omega?DB=db&FMT=opensearch&HITSPERPAGE=30&P=winnow&TOPDOC=0", "", Window{Size: 10}},
		{"searxng", Config{Kind: "searxng"}, Request{Method: "GET", Path: "/search?q=go&pageno=2"}, 3,
			"/search?format=json&pageno=2&q=go", "", Window{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, w, err := mustNew(t, tt.cfg).Rewrite(tt.in, tt.factor)
			if err != nil {
				t.Fatal(err)
			}
			if out.Path != tt.path {
				t.Errorf("Path = %q, want %q", out.Path, tt.path)
			}
			if string(out.Body) != tt.body {
				t.Errorf("Body = %q, want %q", out.Body, tt.body)
			}
			if w != tt.w {
				t.Errorf("Window = %+v, want %+v", w, tt.w)
			}
		})
	}
}

func TestRewriteErrors(t *testing.T) {
	tests := []struct {
		kind string
		in   Request
	}{
		{"elasticsearch", Request{Path: "/_search?size=surprise_me"}},
		{"elasticsearch", Request{Path: "/_search", Body: []byte(`{"size":-1}`)}},
		{"elasticsearch", Request{Path: "/_search", Body: []byte(`{"size":`)}},
		{"elasticsearch", Request{Path: "/_search", Body: []byte(`[1]`)}},
		{"solr", Request{Path: "/select?rows=x"}},
		{"searxng", Request{Path: "/search?pageno=0"}},
		{"opensearch-rss", Request{Path: "/omega?TOPDOC=-3"}},
		{"solr", Request{Path: "%zz"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind+" "+tt.in.Path, func(t *testing.T) {
			_, _, err := mustNew(t, Config{Kind: tt.kind}).Rewrite(tt.in, 3)
			if !errors.Is(err, ErrRequest) {
				t.Errorf("Rewrite(%q) error = %v, want ErrRequest", tt.in.Path, err)
			}
		})
	}
}

// TestRewriteSolrFormat: a Solr search asking for an answer format
// winnow does not refine (SolrJ's default javabin, its XML), in the query
// string or a form body, is not rewritten: ErrFormat, so the proxy sends
// it once as the client asked.
func TestRewriteSolrFormat(t *testing.T) {
	a := mustNew(t, Config{Kind: "solr"})
	for _, in := range []Request{
		{Method: "GET", Path: "/solr/c/select?q=x&wt=javabin&version=2"},
		{Method: "GET", Path: "/solr/c/select?q=x&wt=xml"},
		{Method: "POST", Path: "/solr/c/select", Body: []byte("q=x&rows=5&wt=javabin&version=2")},
	} {
		if _, _, err := a.Rewrite(in, 3); !errors.Is(err, ErrFormat) {
			t.Errorf("Rewrite(%s %q) error = %v, want ErrFormat", in.Path, in.Body, err)
		}
	}
	body := []byte(`{"responseHeader":{"status":0},"response":{"numFound":0,"start":0,"docs":[]}}`)
	if _, err := a.Parse(body, "application/octet-stream"); !errors.Is(err, ErrFormat) {
		t.Errorf("Parse of a javabin answer: %v, want ErrFormat", err)
	}
	if _, err := a.Parse(body, "text/plain; charset=utf-8"); err != nil {
		t.Errorf("Parse of JSON sent as text/plain: %v", err)
	}
}

func TestPages(t *testing.T) {
	a := mustNew(t, Config{Kind: "searxng"})
	pg := a.(Pager)
	reqs, _, err := pg.Pages(Request{Method: "GET", Path: "/search?q=test&format=json"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range reqs {
		paths = append(paths, r.Path)
	}
	want := []string{"/search?format=json&pageno=1&q=test", "/search?format=json&pageno=2&q=test"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("Pages = %q, want %q", paths, want)
	}
	page := read(t, "searxng-webapp-test.json")
	p, err := pg.ParsePages([][]byte{page, page}, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Results) != 4 || p.Results[2].URL != "http://first.test.xyz" {
		t.Fatalf("ParsePages gave %+v", p.Results)
	}
	// Remove mode with the third result a duplicate of the first: the page
	// (as long as the first page) is filled from the second page.
	marks := []Mark{{Cluster: "c", Winner: 0}, {Winner: -1}, {Cluster: "c", Winner: 0, Relation: "duplicate"}, {Winner: -1}}
	out, err := a.Render(nil, p, marks, Remove, Window{})
	if err != nil {
		t.Fatal(err)
	}
	got := urlsOf(t, out, "results", "url")
	if want := []string{"http://first.test.xyz", "http://second.test.xyz"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rendered URLs = %q, want %q", got, want)
	}
}

func TestSearch(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Kind: "elasticsearch", Path: "/docs/_search"}, "/docs/_search?from=20&q=near+duplicate&size=10"},
		{Config{Kind: "solr", Path: "/solr/core/select"}, "/solr/core/select?q=near+duplicate&rows=10&start=20&wt=json"},
		{Config{Kind: "searxng"}, "/search?format=json&pageno=3&q=near+duplicate"},
		{Config{Kind: "opensearch-rss", Path: "/cgi-bin/omega", Extra: "DB=default&FMT=opensearch"}, "/cgi-bin/omega?DB=default&FMT=opensearch&HITSPERPAGE=10&P=near+duplicate&TOPDOC=20"},
		{Config{Kind: "json", Fields: FieldPaths{Results: "data.items"}, Path: "/api"}, "/api?from=20&q=near+duplicate&size=10"},
	}
	for _, tt := range tests {
		t.Run(tt.cfg.Kind, func(t *testing.T) {
			r, err := mustNew(t, tt.cfg).Search(Query{Q: "near duplicate", From: 20, Size: 10})
			if err != nil {
				t.Fatal(err)
			}
			if r.Method != "GET" || r.Path != tt.want {
				t.Errorf("Search = %s %q, want GET %q", r.Method, r.Path, tt.want)
			}
		})
	}
	if _, err := mustNew(t, Config{Kind: "solr"}).Search(Query{Q: "x", From: -1}); !errors.Is(err, ErrRequest) {
		t.Errorf("Search(From -1) error = %v, want ErrRequest", err)
	}
}

// esBody builds an Elasticsearch answer with n hits from the real hit in
// testdata/es7-search.json, each with its own _id and url in _source, and
// keeps the real took, _shards, total and adds an aggregation.
func esBody(t testing.TB, n int) []byte {
	t.Helper()
	src := read(t, "es7-search.json")
	i := bytes.Index(src, []byte(`            {`))
	j := bytes.LastIndex(src, []byte(`            }`)) + len(`            }`)
	hit := string(src[i:j])
	var b strings.Builder
	b.Write(src[:i])
	for k := range n {
		if k > 0 {
			b.WriteString(",\n")
		}
		h := strings.Replace(hit, `"_id" : "0"`, fmt.Sprintf(`"_id" : "%d"`, k), 1)
		h = strings.Replace(h, `"user" : "kimchy",`, fmt.Sprintf(`"user" : "kimchy", "url" : "https://example.org/%d", "title" : "tweet %d",`, k, k), 1)
		b.WriteString(h)
	}
	b.Write(src[j : len(src)-2])
	b.WriteString(",\n    \"aggregations\": {\"users\": {\"buckets\": [{\"key\": \"kimchy\", \"doc_count\": 1}]}}\n}\n")
	return []byte(b.String())
}

// tree decodes JSON and removes the value at the dotted path.
func tree(t *testing.T, b []byte, drop ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("rendered JSON does not decode: %v\n%s", err, b)
	}
	m := v.(map[string]any)
	for i, k := range drop {
		if i == len(drop)-1 {
			delete(m, k)
		} else {
			m = m[k].(map[string]any)
		}
	}
	return v
}

func urlsOf(t *testing.T, b []byte, list ...string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("rendered JSON does not decode: %v", err)
	}
	for _, k := range list[:len(list)-1] {
		v = v.(map[string]any)[k]
	}
	var out []string
	for _, h := range v.([]any) {
		m := h.(map[string]any)
		if s, ok := m["_source"].(map[string]any); ok {
			m = s
		}
		out = append(out, m[list[len(list)-1]].(string))
	}
	return out
}

// esMarks: 10 hits; 1 and 2 duplicate 0, 5 duplicates 4, 7 is unmarked.
func esMarks() []Mark {
	m := make([]Mark, 10)
	for i := range m {
		m[i] = Mark{Cluster: fmt.Sprintf("c%d", i), Winner: i}
	}
	m[1] = Mark{Cluster: "c0", Winner: 0, Relation: "duplicate", Explain: "same text"}
	m[2] = Mark{Cluster: "c0", Winner: 0, Relation: "contained", Explain: "subset of 0"}
	m[5] = Mark{Cluster: "c4", Winner: 4, Relation: "duplicate", Explain: "mirror"}
	m[7] = Mark{Winner: -1}
	return m
}

func TestRenderES(t *testing.T) {
	a := mustNew(t, Config{Kind: "elasticsearch"})
	body := esBody(t, 10)
	p, err := a.Parse(body, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	marks := esMarks()
	u := func(ns ...int) []string {
		var out []string
		for _, n := range ns {
			out = append(out, fmt.Sprintf("https://example.org/%d", n))
		}
		return out
	}
	tests := []struct {
		name string
		mode Mode
		w    Window
		want []string
	}{
		{"remove fills window", Remove, Window{From: 0, Size: 5}, u(0, 3, 4, 6, 7)},
		{"remove page 2 distinct offset", Remove, Window{From: 5, Size: 5}, u(8, 9)},
		{"remove raw base", Remove, Window{From: 3, Size: 2, Base: 3}, u(0, 3)},
		{"group", Group, Window{From: 0, Size: 3}, u(0, 3, 4)},
		// Annotate counts distinct results as Remove and Group do and
		// shows their clusters whole, in rank order.
		{"annotate keeps clusters whole", Annotate, Window{From: 0, Size: 4}, u(0, 1, 2, 3, 4, 5, 6)},
		{"annotate offset", Annotate, Window{From: 4, Size: 10}, u(7, 8, 9)},
		{"annotate cut after a cluster", Annotate, Window{From: 0, Size: 2}, u(0, 1, 2, 3)},
		{"size 0 is whole page", Remove, Window{}, u(0, 3, 4, 6, 7, 8, 9)},
	}
	orig := tree(t, body, "hits", "hits")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := a.Render(nil, p, marks, tt.mode, tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if got := urlsOf(t, out, "hits", "hits", "url"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("URLs = %q, want %q", got, tt.want)
			}
			if got := tree(t, out, "hits", "hits"); !reflect.DeepEqual(got, orig) {
				t.Errorf("fields outside hits.hits changed:\n%v\nwant\n%v", got, orig)
			}
			// Bytes before the hit list are untouched.
			if !bytes.HasPrefix(out, body[:p.list.start]) {
				t.Errorf("prefix before hits.hits changed")
			}
			if !bytes.HasSuffix(out, body[p.list.end:]) {
				t.Errorf("suffix after hits.hits changed")
			}
		})
	}

	t.Run("group puts duplicates in inner_hits", func(t *testing.T) {
		out, _ := a.Render(nil, p, marks, Group, Window{Size: 3})
		type dup struct {
			ID     string                             `json:"_id"`
			Winnow struct{ Relation, Explain string } `json:"_winnow"`
		}
		var v struct {
			Hits struct {
				Hits []struct {
					ID        string `json:"_id"`
					InnerHits map[string]struct {
						Hits struct {
							Total struct {
								Value    int    `json:"value"`
								Relation string `json:"relation"`
							} `json:"total"`
							Hits []dup `json:"hits"`
						} `json:"hits"`
					} `json:"inner_hits"`
					Winnow *struct {
						Cluster string `json:"cluster"`
					} `json:"_winnow"`
				} `json:"hits"`
			} `json:"hits"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		h := v.Hits.Hits[0]
		ih := h.InnerHits["winnow"].Hits
		if h.ID != "0" || h.Winnow == nil || h.Winnow.Cluster != "c0" || ih.Total.Value != 2 || ih.Total.Relation != "eq" ||
			len(ih.Hits) != 2 || ih.Hits[0].ID != "1" || ih.Hits[1].Winnow.Relation != "contained" {
			t.Errorf("hit 0 = %+v", h)
		}
		if h := v.Hits.Hits[1]; h.Winnow == nil || len(h.InnerHits) != 0 {
			t.Errorf("hit 3 = %+v, want a winner without inner_hits", h)
		}
		if ih := v.Hits.Hits[2].InnerHits["winnow"].Hits; len(ih.Hits) != 1 || ih.Hits[0].Winnow.Explain != "mirror" {
			t.Errorf("hit 4 inner_hits = %+v", ih)
		}
		// _winnow holds no key a client reads as the hit's own.
		for _, k := range []string{`"_id"`, `"_score"`, `"_source"`, `"fields"`, `"highlight"`, `"sort"`} {
			for _, part := range bytes.Split(out, []byte(`"_winnow":`))[1:] {
				if end := bytes.IndexByte(part, '}'); bytes.Contains(part[:end], []byte(k)) {
					t.Errorf("_winnow holds %s: %s", k, part[:end+1])
				}
			}
		}
	})

	t.Run("annotate marks every marked hit", func(t *testing.T) {
		out, _ := a.Render(nil, p, marks, Annotate, Window{Size: 10})
		var v struct {
			Hits struct {
				Hits []struct {
					Winnow *struct{ Cluster, Winner, Relation, Explain string } `json:"_winnow"`
				} `json:"hits"`
			} `json:"hits"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		if w := v.Hits.Hits[2].Winnow; w == nil || w.Winner != "https://example.org/0" || w.Relation != "contained" || w.Explain != "subset of 0" {
			t.Errorf("hit 2 _winnow = %+v", w)
		}
		if w := v.Hits.Hits[7].Winnow; w != nil {
			t.Errorf("unmarked hit 7 _winnow = %+v, want none", w)
		}
	})

	t.Run("no marks passes through", func(t *testing.T) {
		out, err := a.Render(nil, p, nil, Annotate, Window{Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, body) {
			t.Errorf("Render without marks changed the body")
		}
	})
}

func TestRenderErrors(t *testing.T) {
	a := mustNew(t, Config{Kind: "elasticsearch"})
	p, err := a.Parse(esBody(t, 3), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		marks []Mark
		mode  Mode
	}{
		{"short marks", []Mark{{Winner: -1}}, Remove},
		{"winner out of range", []Mark{{Winner: 5}, {Winner: -1}, {Winner: -1}}, Remove},
		{"bad mode", nil, Mode(9)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := a.Render(nil, p, tt.marks, tt.mode, Window{Size: 3}); err == nil {
				t.Error("Render succeeded, want error")
			}
		})
	}
	rss := mustNew(t, Config{Kind: "opensearch-rss"})
	if _, err := rss.Render(nil, p, nil, Remove, Window{}); err == nil {
		t.Error("feed Render of a JSON answer succeeded")
	}
}

func TestRenderSolr(t *testing.T) {
	a := mustNew(t, Config{Kind: "solr", Fields: FieldPaths{URL: "id"}})
	body := read(t, "solr-select.json")
	p, err := a.Parse(body, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Render(nil, p, []Mark{{Cluster: "c", Winner: 0}}, Annotate, Window{From: 0, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tree(t, out, "response", "docs"), tree(t, body, "response", "docs"); !reflect.DeepEqual(got, want) {
		t.Errorf("fields outside response.docs changed")
	}
	if !bytes.Contains(out, []byte(`"_version_":1549728120626479104,"_winnow":{"cluster":"c","winner":"VS1GB400C3"`)) {
		t.Errorf("annotation missing or _version_ changed:\n%s", out)
	}
	// response.start is rewritten to the client's offset.
	out, _ = a.Render(nil, p, nil, Remove, Window{From: 7, Size: 10})
	if !bytes.Contains(out, []byte(`"start":7,`)) {
		t.Errorf("response.start not set to 7:\n%s", out)
	}
}

// TestRenderSolrExpanded checks group mode against Solr: the winner stays
// in the list and its duplicates go to the expanded section under its
// uniqueKey, as Collapse and Expand returns them; numFound counts the
// distinct results.
func TestRenderSolrExpanded(t *testing.T) {
	a := mustNew(t, Config{Kind: "solr"})
	body := []byte(`{"responseHeader":{"status":0,"QTime":1},"response":{"numFound":3,"start":0,"docs":[` +
		`{"id":"a","url":"https://example.org/a"},{"id":"b","url":"https://example.org/b"},{"id":"c","url":"https://example.org/c"}]}}`)
	p, err := a.Parse(body, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	marks := []Mark{{Cluster: "k", Winner: 0}, {Cluster: "m", Winner: 1}, {Cluster: "k", Winner: 0, Relation: "duplicate", Explain: "same text"}}
	out, err := a.Render(nil, p, marks, Group, Window{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Response struct {
			NumFound int `json:"numFound"`
			Docs     []struct {
				ID     string            `json:"id"`
				Winnow map[string]string `json:"_winnow"`
			} `json:"docs"`
		} `json:"response"`
		Expanded map[string]struct {
			NumFound int `json:"numFound"`
			Docs     []struct {
				ID     string            `json:"id"`
				Winnow map[string]string `json:"_winnow"`
			} `json:"docs"`
		} `json:"expanded"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(v.Response.Docs) != 2 || v.Response.Docs[0].ID != "a" || v.Response.Docs[0].Winnow["cluster"] != "k" || v.Response.NumFound != 3 {
		t.Errorf("response = %+v, want a and b, the engine's 3 found", v.Response)
	}
	e, ok := v.Expanded["a"]
	if !ok || len(v.Expanded) != 1 || e.NumFound != 1 || len(e.Docs) != 1 || e.Docs[0].ID != "c" || e.Docs[0].Winnow["explain"] != "same text" {
		t.Errorf("expanded = %+v, want c under a", v.Expanded)
	}
}

func TestRenderFeed(t *testing.T) {
	a := mustNew(t, Config{Kind: "opensearch-rss"})
	body := read(t, "omega-opensearch.xml")
	p, err := a.Parse(body, "application/xml")
	if err != nil {
		t.Fatal(err)
	}
	// p1-copy (4) duplicates p1 (2); p2 (1) is contained in p3 (0).
	marks := []Mark{{Cluster: "a", Winner: 0}, {Cluster: "a", Winner: 0, Relation: "contained", Explain: "p2 <in> p3"},
		{Cluster: "b", Winner: 2}, {Winner: -1}, {Cluster: "b", Winner: 2, Relation: "duplicate", Explain: "same & text", Decision: "group", Probability: 0.96774}}
	tests := []struct {
		name  string
		mode  Mode
		w     Window
		links []string
		has   []string
		not   []string
	}{
		{"remove", Remove, Window{Size: 3}, []string{"p3", "p1", "p4"},
			[]string{`<openSearch:itemsPerPage>3</openSearch:itemsPerPage>`, `<openSearch:totalResults>5</openSearch:totalResults>`}, []string{"xmlns:winnow", "<winnow:"}},
		{"remove page 2", Remove, Window{From: 2, Size: 2}, []string{"p4"}, []string{`<openSearch:startIndex>3</openSearch:startIndex>`}, nil},
		{"group", Group, Window{Size: 10}, []string{"p3", "p2", "p1", "p4", "p1-copy"},
			[]string{`xmlns:winnow="` + Namespace + `"`, `<winnow:duplicate cluster="a" relation="contained" explain="p2 &lt;in&gt; p3"><item>`}, nil},
		{"annotate", Annotate, Window{Size: 10}, []string{"p3", "p2", "p1", "p4", "p1-copy"},
			[]string{`<winnow:annotation cluster="b" winner="http://example.org/docs/p1.html" relation="duplicate" decision="group" probability="0.9677">same &amp; text</winnow:annotation></item>`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := a.Render(nil, p, marks, tt.mode, tt.w)
			if err != nil {
				t.Fatal(err)
			}
			// Re-parse: it is still a well-formed feed, with the namespace
			// prefixes intact.
			q, err := a.Parse(out, "application/xml")
			if err != nil {
				t.Fatalf("rendered feed does not parse: %v\n%s", err, out)
			}
			var links []string
			for _, r := range q.Results {
				if tt.mode != Group || !strings.Contains(r.URL, "winnow") {
					links = append(links, strings.TrimSuffix(strings.TrimPrefix(r.URL, "http://example.org/docs/"), ".html"))
				}
			}
			if tt.mode == Group {
				links = nil
				for _, r := range p.Results {
					if bytes.Contains(out, []byte(r.URL)) {
						links = append(links, strings.TrimSuffix(strings.TrimPrefix(r.URL, "http://example.org/docs/"), ".html"))
					}
				}
				if len(q.Results) != 3 {
					t.Errorf("group: %d top-level items, want 3", len(q.Results))
				}
			}
			if !reflect.DeepEqual(links, tt.links) {
				t.Errorf("items = %q, want %q", links, tt.links)
			}
			for _, s := range tt.has {
				if !bytes.Contains(out, []byte(s)) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.not {
				if bytes.Contains(out, []byte(s)) {
					t.Errorf("output has %q", s)
				}
			}
			if !bytes.Contains(out, []byte(`xmlns:openSearch="http://a9.com/-/spec/opensearch/1.1/"`)) ||
				!bytes.Contains(out, []byte(`<copyright>(C)2005, Xapian.org</copyright>`)) {
				t.Errorf("channel header changed")
			}
		})
	}
}

func TestRenderAtomNamespaces(t *testing.T) {
	a := mustNew(t, Config{Kind: "opensearch-rss"})
	body := read(t, "opensearch-spec-atom.xml")
	p, err := a.Parse(body, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Render(nil, p, []Mark{{Cluster: "x", Winner: 0}}, Annotate, Window{From: 20, Size: 10, Base: 20})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(body), "</entry>", `<winnow:annotation cluster="x" winner="http://www.columbia.edu/cu/lweb/eguids/amerihist/nyc.html" relation=""></winnow:annotation></entry>`, 1)
	want = strings.Replace(want, `xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"`, `xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:winnow="`+Namespace+`"`, 1)
	if string(out) != want {
		t.Errorf("Render =\n%s\nwant\n%s", out, want)
	}
	if _, err := a.Parse(out, ""); err != nil {
		t.Errorf("rendered Atom does not parse: %v", err)
	}
}

// TestPlainString checks the 8-byte fast path against the byte loop.
// TestSimpleFloat checks simpleFloat, whose digits are read 8 at a time
// where it can, against strconv on random numbers of 0-22 digits around
// a point, signs and stray bytes included: a number it accepts has
// strconv's value, and it accepts every plain number of at most 15
// digits.
func TestSimpleFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 50000 {
		var b []byte
		if r.IntN(4) == 0 {
			b = append(b, '-')
		}
		for n := r.IntN(12); n > 0; n-- {
			b = append(b, byte('0'+r.IntN(10)))
		}
		if r.IntN(2) == 0 {
			b = append(b, '.')
			for n := r.IntN(12); n > 0; n-- {
				b = append(b, byte('0'+r.IntN(10)))
			}
		}
		if r.IntN(10) == 0 && len(b) > 0 {
			b[r.IntN(len(b))] = "e/:.x-"[r.IntN(6)]
		}
		got, ok := simpleFloat(b)
		want, err := strconv.ParseFloat(string(b), 64)
		digits := 0
		for _, c := range b {
			if c >= '0' && c <= '9' {
				digits++
			}
		}
		plain := err == nil && digits > 0 && digits <= 15 && !bytes.ContainsAny(b, "e") && (len(b) == 0 || b[len(b)-1] != '.' || digits > 0)
		switch {
		case ok && (err != nil || got != want):
			t.Fatalf("simpleFloat(%q) = %v, strconv %v, %v", b, got, want, err)
		case !ok && plain:
			t.Fatalf("simpleFloat(%q) refused a plain number of %d digits", b, digits)
		}
	}
}

func TestPlainString(t *testing.T) {
	ref := func(raw []byte) bool {
		high, ctl := false, false
		for _, c := range raw {
			switch {
			case c == '\\':
				return false
			case c >= 0x80:
				high = true
			case c < ' ':
				ctl = true
			}
		}
		return !high || !ctl && utf8.Valid(raw)
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("abc \\\x01\x1f\x20\x7f\x80\xc3\xa9\xff\"")
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
			if r.IntN(3) > 0 {
				b[i] = 'x'
			}
		}
		if got, want := plainString(b), ref(b); got != want {
			t.Fatalf("plainString(%q) = %v, want %v", b, got, want)
		}
	}
}

// TestURLOnly checks that a URL-only parse reads the same URLs and texts
// and renders the same answer as a full one, without titles or snippets,
// for JSON and for feeds (whose other children's text is only checked).
func TestURLOnly(t *testing.T) {
	for _, tt := range []struct {
		name, ct string
		cfg      Config
		body     []byte
	}{
		{"elasticsearch", "application/json", Config{Kind: "elasticsearch", TextField: "message"}, esBody(t, 8)},
		{"omega rss", "application/rss+xml", Config{Kind: "opensearch-rss"}, read(t, "omega-opensearch.xml")},
		{"spec rss", "application/rss+xml", Config{Kind: "opensearch-rss"}, read(t, "opensearch-spec-rss.xml")},
		{"spec atom", "application/atom+xml", Config{Kind: "opensearch-rss"}, read(t, "opensearch-spec-atom.xml")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			full := mustNew(t, tt.cfg)
			lightCfg := tt.cfg
			lightCfg.URLOnly = true
			light := mustNew(t, lightCfg)
			pf, err := full.Parse(tt.body, tt.ct)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := light.Parse(tt.body, tt.ct)
			if err != nil {
				t.Fatal(err)
			}
			if len(pl.Results) != len(pf.Results) || pl.Total != pf.Total || len(pl.Results) == 0 {
				t.Fatalf("URL-only: %d results total %d, full: %d total %d", len(pl.Results), pl.Total, len(pf.Results), pf.Total)
			}
			marks := make([]Mark, len(pf.Results))
			for i := range pf.Results {
				a, b := pf.Results[i], pl.Results[i]
				// An Elasticsearch score is left to Render (Config.URLOnly).
				wantScore := a.Score
				if tt.cfg.Kind == "elasticsearch" {
					wantScore = 0
				}
				if a.URL != b.URL || a.Text != b.Text || b.Score != wantScore || b.URL == "" || (tt.cfg.TextField != "" && b.Text == "") {
					t.Errorf("result %d: URL-only %+v, full %+v", i, b, a)
				}
				if b.Title != "" || b.Snippet != "" {
					t.Errorf("result %d: URL-only parse read title %q snippet %q", i, b.Title, b.Snippet)
				}
				if pf.Results[i].Title == "" {
					t.Errorf("result %d: the full parse has no title", i)
				}
				marks[i] = Mark{Cluster: "c", Winner: i / 2 * 2, Relation: "duplicate", Explain: "x"}
			}
			for _, mode := range []Mode{Remove, Group, Annotate} {
				of, err := full.Render(nil, pf, marks, mode, Window{Size: 3})
				if err != nil {
					t.Fatal(err)
				}
				ol, err := light.Render(nil, pl, marks, mode, Window{Size: 3})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(of, ol) {
					t.Errorf("%v: URL-only render differs from the full one", mode)
				}
			}
		})
	}
}

// TestAppendString checks the escaping of rendered strings against
// encoding/json: both must decode to the same text, for ASCII runs of every
// length around the 8-byte blocks, every byte that needs an escape at every
// position, and random bytes.
func TestAppendString(t *testing.T) {
	var in []string
	for n := range 20 {
		plain := strings.Repeat("a/b=c.", 4)[:n]
		in = append(in, plain)
		for _, c := range []string{"\"", "\\", "\n", "\x01", "\x1f", "\x7f", "é", "\u2028", "\xff"} {
			for i := 0; i <= n; i++ {
				in = append(in, plain[:i]+c+plain[i:])
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		in = append(in, string(b))
	}
	for _, s := range in {
		out := appendString(nil, s)
		want, _ := json.Marshal(s)
		var got, ref string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("appendString(%q) = %s: not a JSON string: %v", s, out, err)
		}
		if err := json.Unmarshal(want, &ref); err != nil {
			t.Fatal(err)
		}
		if got != ref {
			t.Fatalf("appendString(%q) decodes to %q, want %q", s, got, ref)
		}
	}
}

// TestURLOnlyFeedStillValidates checks that text a URL-only parse skips is
// still checked: an unknown entity in a description fails both parses.
func TestURLOnlyFeedStillValidates(t *testing.T) {
	body := bytes.Replace(read(t, "omega-opensearch.xml"), []byte("<description>"), []byte("<description>&bogus;"), 1)
	for _, urlOnly := range []bool{false, true} {
		a := mustNew(t, Config{Kind: "opensearch-rss", URLOnly: urlOnly})
		if _, err := a.Parse(body, "application/rss+xml"); !errors.Is(err, ErrMalformed) {
			t.Errorf("URLOnly %v: Parse with an unknown entity = %v, want ErrMalformed", urlOnly, err)
		}
	}
}

// TestExtent checks Parsed.Extent's promise on every real answer, mode and
// window: Render copies the bytes before the extent unchanged. For
// Elasticsearch and Solr the engine's time ("took", "QTime") lies before
// it, so a proxy can reuse a rendering when only that changed.
func TestExtent(t *testing.T) {
	for _, tt := range parseCases() {
		t.Run(tt.name, func(t *testing.T) {
			a := mustNew(t, tt.cfg)
			body := read(t, tt.file)
			p, err := a.Parse(body, "")
			if err != nil {
				t.Fatal(err)
			}
			ext := p.Extent()
			if ext <= 0 || ext > len(body) {
				t.Fatalf("Extent = %d for a %d-byte answer", ext, len(body))
			}
			for _, took := range []string{`"took"`, `"QTime"`} {
				if i := bytes.Index(body, []byte(took)); i >= ext {
					t.Errorf("%s at %d is not before the extent %d", took, i, ext)
				}
			}
			marks := make([]Mark, len(p.Results))
			for i := range marks {
				marks[i] = Mark{Cluster: "c", Winner: 0, Relation: "duplicate", Explain: "x"}
			}
			for _, mode := range []Mode{Remove, Group, Annotate} {
				for _, w := range []Window{{Size: 10}, {From: 1, Size: 1}, {From: 2, Size: 5, Base: 2}} {
					for _, m := range [][]Mark{nil, marks} {
						out, err := a.Render(nil, p, m, mode, w)
						if err != nil {
							t.Fatalf("Render(%v, %+v): %v", mode, w, err)
						}
						if !bytes.Equal(out[:min(ext, len(out))], body[:ext]) {
							t.Errorf("Render(%v, %+v) changed the head before the extent %d:\n%.200s", mode, w, ext, out)
						}
					}
				}
			}
		})
	}
}

// TestAppendFourPlaces checks the integer formatting of probabilities
// against strconv for every value it can produce and a few it leaves to
// strconv.
func TestAppendFourPlaces(t *testing.T) {
	for n := 0; n <= 10000; n++ {
		for _, p := range []float64{float64(n) / 1e4, float64(n)/1e4 + 0.00004, float64(n)/1e4 - 0.00004} {
			want := strconv.AppendFloat(nil, math.Round(p*1e4)/1e4, 'f', -1, 64)
			if got := appendFourPlaces(nil, p); string(got) != string(want) {
				t.Fatalf("appendFourPlaces(%v) = %s, want %s", p, got, want)
			}
		}
	}
	for _, p := range []float64{-0.5, 1.5, 123.45678, math.Inf(1)} {
		want := strconv.AppendFloat(nil, math.Round(p*1e4)/1e4, 'f', -1, 64)
		if got := appendFourPlaces(nil, p); string(got) != string(want) {
			t.Errorf("appendFourPlaces(%v) = %s, want %s", p, got, want)
		}
	}
}

// TestRenderGroupKeepsHitBytes checks that group mode copies the
// engine's hits byte for byte: a hit it does not mark is the engine's
// object unchanged, and a winner or a duplicate is the engine's object
// with members added before its closing brace (a winner that has
// inner_hits of its own keeps them, with "winnow" added), never a
// re-encoding of the hit.
func TestRenderGroupKeepsHitBytes(t *testing.T) {
	body := esBody(t, 6)
	// Hit 3 has inner_hits of its own, as a collapse query returns them.
	at := bytes.Index(body, []byte(`"_id" : "3"`))
	body = slices.Concat(body[:at], []byte(`"inner_hits" : {"other" : {"hits" : {"hits" : [ ]}}}, `), body[at:])
	a := mustNew(t, Config{Kind: "elasticsearch"})
	p, err := a.Parse(body, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	marks := []Mark{
		{Cluster: "a", Winner: 0},
		{Winner: -1},
		{Cluster: "a", Winner: 0, Relation: "near-duplicate", Explain: "same text", Decision: "remove", Probability: 0.97},
		{Cluster: "b", Winner: 3},
		{Cluster: "b", Winner: 3, Relation: "duplicate", Explain: "same text", Decision: "remove", Probability: 1},
		{Cluster: "c", Winner: 5},
	}
	out, err := a.Render(nil, p, marks, Group, Window{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(out) {
		t.Fatalf("group answer is not valid JSON:\n%s", out)
	}
	for i, e := range p.elems {
		hit := body[e.start:e.end]
		switch {
		case marks[i].Winner < 0:
			if !bytes.Contains(out, hit) {
				t.Errorf("unmarked hit %d is not the engine's bytes in the answer", i)
			}
		case i == 3:
			ih := bytes.Index(hit, []byte(`"inner_hits" : {`)) + len(`"inner_hits" : {`)
			if !bytes.Contains(out, slices.Concat(hit[:ih], []byte(`"other" : {"hits" : {"hits" : [ ]}},"winnow":`))) {
				t.Errorf("winner 3's own inner_hits are not kept as the engine wrote them, before winnow's:\n%s", out)
			}
		default:
			if !bytes.Contains(out, slices.Concat(hit[:len(hit)-1], []byte(`,"`))) {
				t.Errorf("hit %d is not the engine's bytes with members added at its end:\n%s", i, out)
			}
		}
	}
}

// TestRenderSolrHighlighting: a refined Solr answer keeps the
// highlighting of the documents it shows, and only theirs (a winner's
// duplicates, in the expanded section, are shown too), as Solr answers
// the client's own search. The over-fetched answer's highlighting of
// every document read left entries for documents on no page the client
// asked for: 9 where 3 were shown.
func TestRenderSolrHighlighting(t *testing.T) {
	a := mustNew(t, Config{Kind: "solr", Fields: FieldPaths{URL: "url", Title: "title", Snippet: "body"}})
	body := read(t, "solr-highlight-llvm.json")
	p, err := a.Parse(body, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	// The five releases of Benchmarking (0-4) are one cluster, the four
	// of CodeReview (5-8) another.
	marks := make([]Mark, len(p.Results))
	for i := range marks {
		w := 0
		if i >= 5 {
			w = 5
		}
		marks[i] = Mark{Cluster: strconv.Itoa(w), Winner: w}
		if i != w {
			marks[i].Relation = "duplicate"
		}
	}
	for _, tc := range []struct {
		mode Mode
		w    Window
		want []int // the results whose highlighting stays
	}{
		{Remove, Window{Size: 2}, []int{0, 5}},
		{Group, Window{Size: 1}, []int{0, 1, 2, 3, 4}},
		// Annotate pages by winners and shows each with its duplicates.
		{Annotate, Window{From: 1, Size: 1}, []int{5, 6, 7, 8}},
		{Remove, Window{From: 2, Size: 3}, nil},
	} {
		out, err := a.Render(nil, p, marks, tc.mode, tc.w)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Highlighting map[string]json.RawMessage `json:"highlighting"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%v: %v\n%s", tc.mode, err, out)
		}
		var orig struct {
			Highlighting map[string]json.RawMessage `json:"highlighting"`
		}
		json.Unmarshal(body, &orig)
		var got, want []string
		for k := range v.Highlighting {
			got = append(got, k)
			if string(v.Highlighting[k]) != string(orig.Highlighting[k]) {
				t.Errorf("%v %+v: highlighting of %s changed", tc.mode, tc.w, k)
			}
		}
		for _, i := range tc.want {
			want = append(want, p.ids[i])
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%v %+v: highlighting of %q, want %q", tc.mode, tc.w, got, want)
		}
	}
}
