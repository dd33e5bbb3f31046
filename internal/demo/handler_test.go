package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/corpus/sample"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// esResponse is the Elasticsearch 7 response shape.
type esResponse struct {
	Took     int  `json:"took"`
	TimedOut bool `json:"timed_out"`
	Shards   struct {
		Total, Successful, Skipped, Failed int
	} `json:"_shards"`
	Hits struct {
		Total struct {
			Value    int    `json:"value"`
			Relation string `json:"relation"`
		} `json:"total"`
		MaxScore *float64 `json:"max_score"`
		Hits     []struct {
			Index  string  `json:"_index"`
			ID     string  `json:"_id"`
			Score  float64 `json:"_score"`
			Source struct {
				URL     string  `json:"url"`
				Title   string  `json:"title"`
				Release string  `json:"release"`
				Text    *string `json:"text"`
			} `json:"_source"`
			Highlight map[string][]string `json:"highlight"`
		} `json:"hits"`
	} `json:"hits"`
}

type esError struct {
	Error struct {
		RootCause []struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		} `json:"root_cause"`
		Type   string `json:"type"`
		Reason string `json:"reason"`
	} `json:"error"`
	Status int `json:"status"`
}

// do serves one request on e's handler with Host demo.test.
func do(t *testing.T, e *Engine, method, target string, body io.Reader) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "http://demo.test"+target, body)
	w := httptest.NewRecorder()
	e.Handler().ServeHTTP(w, r)
	return w
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding %T from %.200s: %v", v, b, err)
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("response differs from %s (run with -update to rewrite it):\n got %.400s\nwant %.400s", path, got, want)
	}
}

var tookRE = regexp.MustCompile(`^\{"took":\d+,`)

func TestGolden(t *testing.T) {
	e := testEngine(t)
	tests := []struct {
		name, method, target, body, file string
	}{
		{"es uri", "GET", "/docs/_search?q=getting+started&size=3", "", "es_getting_started.json"},
		{"es body", "POST", "/_search", `{"from":1,"size":2,"query":{"match":{"text":"code review"}}}`, "es_code_review.json"},
		{"es match_all", "GET", "/docs/_search?size=2", "", "es_match_all.json"},
		{"searxng", "GET", "/searxng/search?q=llvm-as&format=json&pageno=1", "", "searxng_llvm_as.json"},
		{"opensearch", "GET", "/opensearch?q=benchmark&start=2&count=2", "", "opensearch_benchmark.xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(t, e, tt.method, tt.target, strings.NewReader(tt.body))
			if w.Code != http.StatusOK {
				t.Fatalf("%s %s status = %d, want 200; body %s", tt.method, tt.target, w.Code, w.Body)
			}
			got := tookRE.ReplaceAll(w.Body.Bytes(), []byte(`{"took":0,`))
			if strings.HasSuffix(tt.file, ".json") && !json.Valid(got) {
				t.Errorf("%s %s: body is not valid JSON", tt.method, tt.target)
			}
			golden(t, tt.file, got)
		})
	}
}

func TestES(t *testing.T) {
	e := testEngine(t)
	tests := []struct {
		name, method, target, body string
		total                      int    // -1: do not check
		first                      string // first hit's page; "" for no hits
		hits                       int
		highlight                  string // field of the first hit's highlight; "" for none
	}{
		{"uri q", "GET", "/idx/_search?q=benchmark", "", 5, "Benchmarking", 5, "text"},
		{"uri from size", "GET", "/idx/_search?q=benchmark&from=4&size=3", "", 5, "Benchmarking", 1, "text"},
		{"uri empty q", "GET", "/idx/_search?q=", "", 53, "Benchmarking", 10, ""},
		{"uri no q", "GET", "/idx/_search", "", 53, "Benchmarking", 10, ""},
		{"uri and", "GET", "/idx/_search?q=code+review+xyzzy&default_operator=AND", "", 0, "", 0, ""},
		{"uri df title", "GET", "/idx/_search?q=assembler&df=title", "", 4, "CommandGuide/llvm-as", 4, "title"},
		{"match string", "POST", "/idx/_search", `{"query":{"match":{"text":"benchmark"}}}`, 5, "Benchmarking", 5, "text"},
		{"match object", "POST", "/idx/_search", `{"query":{"match":{"content":{"query":"code review"}}}}`, 21, "CodeReview", 10, "text"},
		{"match and", "POST", "/idx/_search", `{"query":{"match":{"text":{"query":"code review","operator":"AND"}}}}`, -1, "CodeReview", -1, "text"},
		{"match and unknown word", "POST", "/idx/_search", `{"query":{"match":{"text":{"query":"code xyzzy","operator":"and"}}}}`, 0, "", 0, ""},
		{"match title", "POST", "/idx/_search", `{"query":{"match":{"title":"tutorial"}}}`, 5, "tutorial/index", 5, "title"},
		{"match number", "POST", "/idx/_search", `{"query":{"match":{"text":13}},"size":1}`, -1, "", 1, "text"},
		{"query_string", "POST", "/idx/_search", `{"query":{"query_string":{"query":"getting started"}}}`, 4, "GettingStartedTutorials", 4, "text"},
		{"query_string title", "POST", "/idx/_search", `{"query":{"query_string":{"query":"getting started","default_field":"title"}}}`, 4, "GettingStartedTutorials", 4, "title"},
		{"multi_match", "POST", "/idx/_search", `{"query":{"multi_match":{"query":"llvm-as","fields":["title","text"]}},"size":3}`, 52, "CommandGuide/llvm-as", 3, "text"},
		{"match_all", "POST", "/idx/_search", `{"query":{"match_all":{}},"from":50}`, 53, "KernelInfo", 3, ""}, // ID order: 22/KernelInfo, PDB/HashTable, tutorial/index,
		{"empty query", "POST", "/idx/_search", `{"query":{}}`, 53, "Benchmarking", 10, ""},
		{"size as string", "POST", "/idx/_search", `{"size":"2","query":{"match":{"text":"benchmark"}}}`, 5, "Benchmarking", 2, "text"},
		{"ignored keys", "POST", "/idx/_search", `{"_source":true,"track_total_hits":true,"query":{"match":{"text":"benchmark"}}}`, 5, "Benchmarking", 5, "text"},
		{"GET with body", "GET", "/idx/_search", `{"query":{"match":{"text":"benchmark"}}}`, 5, "Benchmarking", 5, "text"},
		{"url overrides body", "POST", "/idx/_search?q=benchmark&size=1", `{"size":5,"query":{"match":{"text":{"query":"review","operator":"and"}}}}`, 5, "Benchmarking", 1, "text"},
		{"url overrides body and", "POST", "/idx/_search?q=benchmark+xyzzy", `{"query":{"match":{"text":{"query":"review","operator":"and"}}}}`, 5, "Benchmarking", 5, "text"},
		{"no match", "POST", "/idx/_search", `{"query":{"match":{"text":"xyzzy"}}}`, 0, "", 0, ""},
		{"whitespace body", "POST", "/idx/_search?q=benchmark", " \n", 5, "Benchmarking", 5, "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(t, e, tt.method, tt.target, strings.NewReader(tt.body))
			if w.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			if p := w.Header().Get("X-Elastic-Product"); p != "Elasticsearch" {
				t.Errorf("X-Elastic-Product = %q, want Elasticsearch (the official clients check it)", p)
			}
			var r esResponse
			decode(t, w.Body.Bytes(), &r)
			if r.TimedOut || r.Shards.Total != 1 || r.Shards.Successful != 1 || r.Hits.Total.Relation != "eq" {
				t.Errorf("header fields = %+v, %+v, %q", r.TimedOut, r.Shards, r.Hits.Total.Relation)
			}
			if tt.total >= 0 && r.Hits.Total.Value != tt.total {
				t.Errorf("hits.total.value = %d, want %d", r.Hits.Total.Value, tt.total)
			}
			if tt.hits >= 0 && len(r.Hits.Hits) != tt.hits {
				t.Errorf("len(hits.hits) = %d, want %d", len(r.Hits.Hits), tt.hits)
			}
			if r.Hits.Total.Value == 0 {
				if r.Hits.MaxScore != nil {
					t.Errorf("max_score = %v, want null", *r.Hits.MaxScore)
				}
				return
			}
			if r.Hits.MaxScore == nil {
				t.Fatalf("max_score = null, want a number")
			}
			if len(r.Hits.Hits) == 0 {
				return
			}
			h := r.Hits.Hits[0]
			if tt.first != "" && sample.Page(h.ID) != tt.first {
				t.Errorf("first hit = %q, want page %q", h.ID, tt.first)
			}
			if h.Index != "idx" {
				t.Errorf("_index = %q, want %q", h.Index, "idx")
			}
			if want := "http://demo.test/pages/" + strings.TrimPrefix(h.ID, "sample://llvm/") + ".html"; h.Source.URL != want {
				t.Errorf("_source.url = %q, want %q", h.Source.URL, want)
			}
			if h.Source.Title == "" || h.Source.Release == "" || h.Source.Text != nil {
				t.Errorf("_source = %+v, want title, release and no text", h.Source)
			}
			if tt.highlight == "" {
				if h.Highlight != nil {
					t.Errorf("highlight = %v, want none", h.Highlight)
				}
			} else if hl := h.Highlight[tt.highlight]; len(hl) != 1 || !strings.Contains(hl[0], "<em>") {
				t.Errorf("highlight = %v, want one %s fragment with <em>", h.Highlight, tt.highlight)
			}
			for _, h := range r.Hits.Hits {
				if h.Score > *r.Hits.MaxScore {
					t.Errorf("_score %v of %q > max_score %v", h.Score, h.ID, *r.Hits.MaxScore)
				}
			}
		})
	}
}

// TestESIndexExpression: a search of an index expression (a wildcard, a
// list, _all; a gateway narrows "*" into a list of patterns) names each
// hit's concrete index, as Elasticsearch does, never the expression.
func TestESIndexExpression(t *testing.T) {
	e := testEngine(t)
	for _, target := range []string{"/*/_search?q=benchmark", "/a*,l*,9*/_search?q=benchmark", "/_all/_search?q=benchmark", "/_search?q=benchmark"} {
		w := do(t, e, "GET", target, nil)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", target, w.Code, w.Body)
		}
		var r esResponse
		decode(t, w.Body.Bytes(), &r)
		if len(r.Hits.Hits) == 0 {
			t.Fatalf("%s: no hits", target)
		}
		for _, h := range r.Hits.Hits {
			if h.Index != "demo" {
				t.Errorf("%s: _index = %q, want the concrete index %q", target, h.Index, "demo")
			}
		}
	}
}

func TestESErrors(t *testing.T) {
	e := testEngine(t)
	tests := []struct {
		name, method, target, body string
		status                     int
		typ, reason                string // reason: substring
	}{
		{"bad json", "POST", "/idx/_search", `{"query":`, 400, "parsing_exception", "failed to parse the request body"},
		{"not an object", "POST", "/idx/_search", `[1,2]`, 400, "parsing_exception", "failed to parse"},
		{"unknown query", "POST", "/idx/_search", `{"query":{"bool":{"must":[]}}}`, 400, "parsing_exception", "unknown query [bool]"},
		{"two queries", "POST", "/idx/_search", `{"query":{"match_all":{},"match":{"text":"x"}}}`, 400, "parsing_exception", "expected [END_OBJECT]"},
		{"query not object", "POST", "/idx/_search", `{"query":"benchmark"}`, 400, "parsing_exception", "[query] malformed query, expected [START_OBJECT] but found [VALUE_STRING]"},
		{"query body not object", "POST", "/idx/_search", `{"query":{"match":"benchmark"}}`, 400, "parsing_exception", "[match] query malformed"},
		{"unknown key", "POST", "/idx/_search", `{"sort":[{"title":"asc"}],"query":{"match_all":{}}}`, 400, "parsing_exception", "Unknown key for a START_ARRAY in [sort]."},
		{"match two fields", "POST", "/idx/_search", `{"query":{"match":{"a":"x","b":"y"}}}`, 400, "parsing_exception", "doesn't support multiple fields, found [a] and [b]"},
		{"match no field", "POST", "/idx/_search", `{"query":{"match":{}}}`, 400, "parsing_exception", "No text specified"},
		{"match no query", "POST", "/idx/_search", `{"query":{"match":{"text":{"operator":"and"}}}}`, 400, "parsing_exception", "[match] requires query value"},
		{"match bad option", "POST", "/idx/_search", `{"query":{"match":{"text":{"query":"x","fuzziness":2}}}}`, 400, "parsing_exception", "[match] query does not support [fuzziness]"},
		{"match bad operator", "POST", "/idx/_search", `{"query":{"match":{"text":{"query":"x","operator":"xor"}}}}`, 400, "parsing_exception", "unknown [operator] value [xor]"},
		{"match array", "POST", "/idx/_search", `{"query":{"match":{"text":["x"]}}}`, 400, "parsing_exception", "unknown token [START_ARRAY]"},
		{"query_string no query", "POST", "/idx/_search", `{"query":{"query_string":{}}}`, 400, "parsing_exception", "[query_string] requires query value"},
		{"query_string object", "POST", "/idx/_search", `{"query":{"query_string":{"query":{}}}}`, 400, "parsing_exception", "[query] must be a string"},
		{"match_all option", "POST", "/idx/_search", `{"query":{"match_all":{"x":1}}}`, 400, "parsing_exception", "[match_all] query does not support [x]"},
		{"size not int", "POST", "/idx/_search", `{"size":1.5}`, 400, "parsing_exception", "[size] expected an integer"},
		{"negative from", "GET", "/idx/_search?q=x&from=-1", "", 400, "illegal_argument_exception", "[from] parameter cannot be negative"},
		{"negative size", "POST", "/idx/_search", `{"size":-2}`, 400, "illegal_argument_exception", "[size] parameter cannot be negative"},
		{"bad from param", "GET", "/idx/_search?from=ten", "", 400, "illegal_argument_exception", "Failed to parse int parameter [from] with value [ten]"},
		{"bad operator param", "GET", "/idx/_search?q=x&default_operator=xor", "", 400, "illegal_argument_exception", "operator [xor] is not allowed"},
		{"window", "GET", "/idx/_search?from=9995&size=10", "", 400, "illegal_argument_exception", "Result window is too large"},
		{"bad variant", "GET", "/idx/_search?q=x&x_variant=1e3", "", 400, "illegal_argument_exception", "x_variant [1e3]"},
		{"body too large", "POST", "/idx/_search", `{"query":{"match":{"text":"` + strings.Repeat("a ", MaxBodyBytes/2) + `"}}}`, 413, "content_too_long_exception", "over the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(t, e, tt.method, tt.target, strings.NewReader(tt.body))
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d; body %.300s", w.Code, tt.status, w.Body)
			}
			var r esError
			decode(t, w.Body.Bytes(), &r)
			if r.Status != tt.status || r.Error.Type != tt.typ || !strings.Contains(r.Error.Reason, tt.reason) {
				t.Errorf("error = %d %q %q, want %d %q containing %q", r.Status, r.Error.Type, r.Error.Reason, tt.status, tt.typ, tt.reason)
			}
			if len(r.Error.RootCause) != 1 || r.Error.RootCause[0].Type != r.Error.Type || r.Error.RootCause[0].Reason != r.Error.Reason {
				t.Errorf("root_cause = %+v, want one cause equal to the error", r.Error.RootCause)
			}
		})
	}
}

// TestESVariant checks the demo's x_variant parameter: every hit URL
// carries ?v=N, and the page is served under it.
func TestESVariant(t *testing.T) {
	e := testEngine(t)
	w := do(t, e, "GET", "/idx/_search?q=benchmark&x_variant=42", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", w.Code, w.Body)
	}
	var r esResponse
	decode(t, w.Body.Bytes(), &r)
	if len(r.Hits.Hits) != 5 {
		t.Fatalf("%d hits, want 5", len(r.Hits.Hits))
	}
	for _, h := range r.Hits.Hits {
		if !strings.HasSuffix(h.Source.URL, ".html?v=42") {
			t.Errorf("_source.url = %q, want it to end in .html?v=42", h.Source.URL)
		}
	}
	u := strings.TrimPrefix(r.Hits.Hits[0].Source.URL, "http://demo.test")
	if w := do(t, e, "GET", u, nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "<html") {
		t.Errorf("GET %s = %d, want the page", u, w.Code)
	}
}

func TestESPagination(t *testing.T) {
	e := testEngine(t)
	ids := func(target string) []string {
		var r esResponse
		decode(t, do(t, e, "GET", target, nil).Body.Bytes(), &r)
		var out []string
		for _, h := range r.Hits.Hits {
			out = append(out, h.ID)
		}
		return out
	}
	all := ids("/i/_search?q=llvm+tool&size=30")
	if len(all) != 30 {
		t.Fatalf("size=30 gave %d hits, want 30", len(all))
	}
	var pages []string
	for from := 0; from < 30; from += 7 {
		pages = append(pages, ids("/i/_search?q=llvm+tool&size=7&from="+strconv.Itoa(from))...)
	}
	if !slices.Equal(pages[:30], all) {
		t.Errorf("pages of 7 = %v, want %v", pages[:30], all)
	}
}

func TestTextInHits(t *testing.T) {
	e, err := New(sample.Docs(), Options{TextInHits: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var r esResponse
	decode(t, do(t, e, "GET", "/i/_search?q=benchmark&size=1", nil).Body.Bytes(), &r)
	if len(r.Hits.Hits) != 1 {
		t.Fatalf("got %d hits, want 1", len(r.Hits.Hits))
	}
	if txt := r.Hits.Hits[0].Source.Text; txt == nil || !strings.Contains(*txt, "benchmarking tips\nintroduction\n") {
		t.Errorf("_source.text = %.100q, want the canonical text", deref(txt))
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// searxResponse is the SearXNG JSON shape.
type searxResponse struct {
	Query           string `json:"query"`
	NumberOfResults int    `json:"number_of_results"`
	Results         []struct {
		URL       string   `json:"url"`
		Title     string   `json:"title"`
		Content   string   `json:"content"`
		Engine    string   `json:"engine"`
		Engines   []string `json:"engines"`
		Positions []int    `json:"positions"`
		Score     float64  `json:"score"`
	} `json:"results"`
	Answers             []any `json:"answers"`
	UnresponsiveEngines []any `json:"unresponsive_engines"`
}

func TestSearXNG(t *testing.T) {
	e := testEngine(t)
	get := func(target string) searxResponse {
		w := do(t, e, "GET", target, nil)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s status = %d, want 200; body %s", target, w.Code, w.Body)
		}
		var r searxResponse
		decode(t, w.Body.Bytes(), &r)
		return r
	}
	r1 := get("/searxng/search?q=llvm&format=json")
	r2 := get("/searxng/search?q=llvm&format=json&pageno=2")
	if r1.Query != "llvm" || r1.NumberOfResults != 53 || len(r1.Results) != 10 || len(r2.Results) != 10 {
		t.Fatalf("query, number_of_results, results = %q, %d, %d+%d, want llvm, 53, 10+10", r1.Query, r1.NumberOfResults, len(r1.Results), len(r2.Results))
	}
	seen := map[string]bool{}
	for i, res := range append(r1.Results, r2.Results...) {
		if res.Engine != SearXNGEngine || !slices.Equal(res.Engines, []string{SearXNGEngine}) || !slices.Equal(res.Positions, []int{i + 1}) {
			t.Errorf("result %d: engine %q, engines %v, positions %v", i, res.Engine, res.Engines, res.Positions)
		}
		if !strings.HasPrefix(res.URL, "http://demo.test/pages/") || res.Title == "" || res.Content == "" || seen[res.URL] {
			t.Errorf("result %d: url %q, title %q, content %q (repeated: %v)", i, res.URL, res.Title, res.Content, seen[res.URL])
		}
		seen[res.URL] = true
	}
	if last := get("/searxng/search?q=llvm&format=json&pageno=6"); len(last.Results) != 3 {
		t.Errorf("pageno=6 gave %d results, want 3", len(last.Results))
	}
	post := do(t, e, "POST", "/searxng/search", strings.NewReader("q=benchmark&format=json"))
	if post.Code != http.StatusBadRequest { // no form content type: q is missing
		t.Errorf("POST without form type status = %d, want 400", post.Code)
	}
	req := httptest.NewRequest("POST", "http://demo.test/searxng/search", strings.NewReader("q=benchmark&format=json"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	e.Handler().ServeHTTP(w, req)
	var rp searxResponse
	decode(t, w.Body.Bytes(), &rp)
	if w.Code != http.StatusOK || rp.NumberOfResults != 5 {
		t.Errorf("POST form: status %d, number_of_results %d, want 200, 5", w.Code, rp.NumberOfResults)
	}

	for _, target := range []string{
		"/searxng/search?format=json",
		"/searxng/search?q=x",
		"/searxng/search?q=x&format=html",
		"/searxng/search?q=x&format=json&pageno=0",
		"/searxng/search?q=x&format=json&pageno=two",
	} {
		if w := do(t, e, "GET", target, nil); w.Code != http.StatusBadRequest {
			t.Errorf("GET %s status = %d, want 400", target, w.Code)
		}
	}
}

// TestScorersDisagree checks that the SearXNG endpoint ranks differently
// from the Elasticsearch one on some queries, as two engines of a
// metasearch do, while finding the same pages.
func TestScorersDisagree(t *testing.T) {
	e := testEngine(t)
	differ := 0
	queries := []string{"benchmark", "code review", "table", "target", "hash table", "linker"}
	for _, q := range queries {
		s := e.get()
		e.run(s, query{text: q})
		es := slices.Clone(window(s.touched, 0, 10))
		e.put(s)
		s = e.get()
		e.run(s, query{text: q, scorer: scoreBoosted})
		sx := slices.Clone(window(s.touched, 0, 10))
		e.put(s)
		if !slices.Equal(es, sx) {
			differ++
		}
	}
	if differ < 3 {
		t.Errorf("the scorers differ on %d of %d queries, want at least 3", differ, len(queries))
	}
}

type rss struct {
	XMLName xml.Name `xml:"rss"`
	Version string   `xml:"version,attr"`
	Channel struct {
		Title        string `xml:"title"`
		TotalResults int    `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
		StartIndex   int    `xml:"http://a9.com/-/spec/opensearch/1.1/ startIndex"`
		ItemsPerPage int    `xml:"http://a9.com/-/spec/opensearch/1.1/ itemsPerPage"`
		Items        []struct {
			Title       string `xml:"title"`
			Link        string `xml:"link"`
			Description string `xml:"description"`
		} `xml:"item"`
	} `xml:"channel"`
}

func TestOpenSearch(t *testing.T) {
	e := testEngine(t)
	tests := []struct {
		target                       string
		total, start, perPage, items int
	}{
		{"/opensearch?q=benchmark", 5, 1, 10, 5},
		{"/opensearch?q=benchmark&start=3&count=2", 5, 3, 2, 2},
		{"/opensearch?q=benchmark&start=5", 5, 5, 10, 1},
		{"/opensearch?q=benchmark&start=9", 5, 9, 10, 0},
		{"/opensearch?q=%3Cb%3E+%26+code", 20, 1, 10, 10}, // as many as for "code"
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			w := do(t, e, "GET", tt.target, nil)
			if w.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/rss+xml; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			var r rss
			if err := xml.Unmarshal(w.Body.Bytes(), &r); err != nil {
				t.Fatalf("xml.Unmarshal: %v\n%s", err, w.Body)
			}
			c := r.Channel
			if r.Version != "2.0" || c.TotalResults != tt.total || c.StartIndex != tt.start || c.ItemsPerPage != tt.perPage || len(c.Items) != tt.items {
				t.Errorf("version %q, total %d, start %d, per page %d, items %d; want 2.0, %d, %d, %d, %d",
					r.Version, c.TotalResults, c.StartIndex, c.ItemsPerPage, len(c.Items), tt.total, tt.start, tt.perPage, tt.items)
			}
			for _, it := range c.Items {
				if !strings.HasPrefix(it.Link, "http://demo.test/pages/") || it.Title == "" || it.Description == "" {
					t.Errorf("item %+v", it)
				}
			}
		})
	}
	for _, target := range []string{"/opensearch", "/opensearch?q=x&start=0", "/opensearch?q=x&count=101", "/opensearch?q=x&count=-1", "/opensearch?q=x&start=a"} {
		if w := do(t, e, "GET", target, nil); w.Code != http.StatusBadRequest {
			t.Errorf("GET %s status = %d, want 400", target, w.Code)
		}
	}
}

func TestPages(t *testing.T) {
	e := testEngine(t)
	var body []byte
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		if d.ID == "sample://llvm/16/CodeReview" {
			body = d.Body
		}
	}
	w := do(t, e, "GET", "/pages/16/CodeReview.html", nil)
	if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), body) {
		t.Fatalf("GET page: status %d, %d bytes, want 200 and the %d bytes of the page", w.Code, w.Body.Len(), len(body))
	}
	h := w.Header()
	etag, lastMod := h.Get("ETag"), h.Get("Last-Modified")
	if ct := h.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q, want text/html; charset=utf-8", ct)
	}
	if len(etag) < 10 || etag[0] != '"' || lastMod != "Sun, 01 Jun 2025 12:00:00 GMT" {
		t.Errorf("ETag, Last-Modified = %q, %q, want a strong tag and Sun, 01 Jun 2025 12:00:00 GMT", etag, lastMod)
	}
	tests := []struct {
		name, method, path string
		header             map[string]string
		status             int
	}{
		{"if-none-match", "GET", "/pages/16/CodeReview.html", map[string]string{"If-None-Match": etag}, 304},
		{"if-none-match other", "GET", "/pages/16/CodeReview.html", map[string]string{"If-None-Match": `"other"`}, 200},
		{"if-modified-since", "GET", "/pages/16/CodeReview.html", map[string]string{"If-Modified-Since": lastMod}, 304},
		{"modified since earlier", "GET", "/pages/16/CodeReview.html", map[string]string{"If-Modified-Since": "Sat, 01 Jun 2024 12:00:00 GMT"}, 200},
		{"range", "GET", "/pages/16/CodeReview.html", map[string]string{"Range": "bytes=0-9"}, 206},
		{"head", "HEAD", "/pages/16/CodeReview.html", nil, 200},
		{"other page", "GET", "/pages/22/CommandGuide/llvm-as.html", nil, 200},
		{"unknown page", "GET", "/pages/16/Nope.html", nil, 404},
		{"no extension", "GET", "/pages/16/CodeReview", nil, 404},
		{"pages root", "GET", "/pages/", nil, 404},
		{"post", "POST", "/pages/16/CodeReview.html", nil, 405},
		{"index", "GET", "/", nil, 200},
		{"unknown path", "GET", "/nope", nil, 404},
		{"deep search path", "GET", "/a/b/_search", nil, 404},
		{"search put", "PUT", "/idx/_search", nil, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "http://demo.test"+tt.path, nil)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			e.Handler().ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Errorf("%s %s status = %d, want %d", tt.method, tt.path, w.Code, tt.status)
			}
		})
	}
}

// TestLoopback serves the engine on a real loopback listener and follows
// a hit's URL to its page, as the proxy's fetcher does.
func TestLoopback(t *testing.T) {
	e := testEngine(t)
	s, err := Start("", e)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL() = %q, want http://127.0.0.1:port", s.URL())
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(s.URL()+"/demo/_search", "application/json", strings.NewReader(`{"query":{"match":{"text":"fault maps"}},"size":3}`))
	if err != nil {
		t.Fatal(err)
	}
	var r esResponse
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	decode(t, b, &r)
	if len(r.Hits.Hits) != 3 {
		t.Fatalf("got %d hits, want 3", len(r.Hits.Hits))
	}
	for _, h := range r.Hits.Hits {
		if !strings.HasPrefix(h.Source.URL, s.URL()+"/pages/") {
			t.Errorf("hit url %q, want it under %s/pages/", h.Source.URL, s.URL())
		}
		page, err := c.Get(h.Source.URL)
		if err != nil {
			t.Fatal(err)
		}
		pb, _ := io.ReadAll(page.Body)
		page.Body.Close()
		if page.StatusCode != http.StatusOK || !bytes.Contains(pb, []byte("FaultMaps")) {
			t.Errorf("GET %s: status %d, %d bytes, want 200 and the FaultMaps page", h.Source.URL, page.StatusCode, len(pb))
		}
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown() = %v, want nil", err)
	}
	if _, err := c.Get(s.URL() + "/"); err == nil {
		t.Errorf("GET after Shutdown succeeded, want a connection error")
	}
}

func TestServe(t *testing.T) {
	e := testEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := Serve(ctx, "127.0.0.1:0", e)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr.String() + "/opensearch?q=benchmark")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET status = %d, want 200", resp.StatusCode)
	}
	cancel()
	if _, err := Serve(context.Background(), addr.String(), e); err == nil {
		// The port may be free again already after shutdown; then a
		// second Serve is fine, but not while the first one listens.
		t.Log("second Serve on the same address succeeded after cancel")
	}
	if _, err := Start("127.0.0.1:notaport", e); err == nil || !strings.HasPrefix(err.Error(), "demo: ") {
		t.Errorf("Start(bad address) error = %v, want a demo: error", err)
	}
}

func BenchmarkHandlerES(b *testing.B) {
	e := testEngine(b)
	h := e.Handler()
	r := httptest.NewRequest("GET", "http://demo.test/demo/_search?q=code+review", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b.SetBytes(int64(w.Body.Len()))
	b.ReportAllocs()
	for b.Loop() {
		w.Body.Reset()
		h.ServeHTTP(w, r)
	}
}

func BenchmarkHandlerESBody(b *testing.B) {
	e := testEngine(b)
	h := e.Handler()
	body := []byte(`{"from":0,"size":10,"query":{"match":{"text":"code review"}}}`)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		w.Body.Reset()
		r := httptest.NewRequest("POST", "http://demo.test/demo/_search", bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}
}
