package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/internal/realengine"
	"github.com/winnow-search/winnow/proxy/engine"
)

// metaRealIndex is the index (Solr core) the real-engine metasearch
// test loads on each engine: a name of its own, so that test binaries
// running the gateway tests at the same time do not replace it.
const metaRealIndex = "metahunt_meta"

// markupTitle is the title of a page indexed beside the sample: markup
// and "<" that are the title's text, not the engine's highlighting.
const markupTitle = `Zorblax <script>alert(1)</script> std::vector<int> & a < b`

// metaRealPage is the part of /_winnow/search.json the real-engine test
// reads.
type metaRealPage struct {
	Engines []struct {
		Name    string
		Results int
		Error   string
	}
	Groups []struct {
		Result struct {
			URL, Title, Snippet string
			Engines             []string
		}
		// Duplicates and Removed: the group's other results.
		Duplicates, Removed []struct{ URL string }
	}
	Next string
}

// TestRealEngineMetasearch runs the metasearch over real OpenSearch,
// Elasticsearch, Solr and Xapian Omega, all holding the demo's LLVM
// pages under the same URLs (the markupTitle page besides, in the
// Lucene engines), as an operator running it over real engines would:
// paging through a query gives every result of the engines' answers
// once; what readers type reaches the Lucene engines as words (no field
// names, wildcards or syntax errors); an engine's refusal says why; the
// page shows titles as indexed.
func TestRealEngineMetasearch(t *testing.T) {
	d := startDemo(t, demo.Options{})
	docs, err := realengine.Sample(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, realengine.Doc{ID: "markup", URL: d.URL() + "/pages/markup.html", Page: "markup",
		Title: markupTitle, Body: "zorblax <img src=x onerror=alert(2)> a < b"})
	var engines []Engine
	bases := map[string]string{}
	for _, kind := range []string{"opensearch", "elasticsearch", "solr"} {
		base := realengine.Start(t, kind)
		bases[kind] = base
		realengine.Load(t, kind, base, metaRealIndex, docs)
		e := Engine{Name: kind, URL: base, Adapter: engine.Config{Kind: kind, Path: "/" + metaRealIndex + "/_search"}, Timeout: 10 * time.Second}
		if kind == "solr" {
			e.Adapter.Path = "/" + metaRealIndex + "/select"
		}
		engines = append(engines, e)
	}
	tools := findOmega(t)
	conf := buildOmegaIndex(t, tools, t.TempDir(), writeOmegaPages(t, nil), d.URL()+"/pages/")
	omega, _ := startOmega(t, tools, conf)
	engines = append(engines, omegaEngine(omega.URL, 10*time.Second))
	_, base := startProxy(t, Options{Engines: engines, Budget: 3 * time.Second})

	search := func(t *testing.T, query string) metaRealPage {
		t.Helper()
		code, body := get(t, base+"/_winnow/search.json?"+query)
		if code != 200 {
			t.Fatalf("search.json?%s: %d %s", query, code, body)
		}
		var p metaRealPage
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatalf("search.json?%s: %v\n%s", query, err, body)
		}
		return p
	}

	t.Run("paging", func(t *testing.T) {
		for _, tc := range []struct {
			q    string
			size int
			// settings are the request's winnow_ parameters, which
			// every page must keep: under others a page groups
			// otherwise.
			settings string
		}{{"code review", 2, ""}, {"code review", 3, ""}, {"llvm", 4, ""}, {"llvm", 4, "winnow_method=jaccard&winnow_threshold=0.1"}} {
			want := engineUnion(t, engines, tc.q)
			seen := map[string]int{}
			next := "?" + url.Values{"q": {tc.q}, "size": {strconv.Itoa(tc.size)}}.Encode()
			if tc.settings != "" {
				next += "&" + tc.settings
			}
			for pages := 0; next != ""; pages++ {
				if pages > len(want) {
					t.Fatalf("%q size %d: more pages than results", tc.q, tc.size)
				}
				p := search(t, strings.TrimPrefix(next, "?"))
				for _, g := range p.Groups {
					seen[g.Result.URL]++
					for _, r := range append(g.Duplicates, g.Removed...) {
						seen[r.URL]++
					}
				}
				next = p.Next
			}
			for u, n := range seen {
				if n > 1 {
					t.Errorf("%q size %d %s: %s shown on %d pages", tc.q, tc.size, tc.settings, u, n)
				}
				if !want[u] {
					t.Errorf("%q size %d: %s shown, no engine answered it", tc.q, tc.size, u)
				}
			}
			for u := range want {
				if seen[u] == 0 {
					t.Errorf("%q size %d %s: %s, in an engine's answer, on no page", tc.q, tc.size, tc.settings, u)
				}
			}
		}
	})

	// What readers type: each was a field name, a wildcard, a parser
	// switch or a syntax error in Lucene's syntax, refused with 400 by
	// every Lucene engine or answered with every document.
	t.Run("queries", func(t *testing.T) {
		for _, q := range []string{"(", "foo)", "llvm/clang", `C:\path`, `a\`, "AND", "OR review", `"unbalanced`,
			"x^", "review -", "-onerror", "+", "year:>2010", "{!join from=id to=url}zorblax", "page:markup", "*", "url:*", "body:/.*/"} {
			p := search(t, url.Values{"q": {q}}.Encode())
			for _, e := range p.Engines {
				if e.Error != "" {
					t.Errorf("q=%q: %s failed: %s", q, e.Name, e.Error)
				}
				// "page:markup" as a field search finds the markup page;
				// as text it is one word (a colon joins letters), found
				// nowhere.
				if e.Name != "omega" && (strings.Contains(q, "*") || q == "page:markup") && e.Results > 0 {
					t.Errorf("q=%q: %s answered %d results; want none (no such words)", q, e.Name, e.Results)
				}
				if e.Name != "omega" && strings.Contains(q, "zorblax") && e.Results == 0 {
					t.Errorf("q=%q: %s found nothing; want the zorblax page", q, e.Name)
				}
			}
		}
	})

	// A reader's "-word" leaves out the pages holding the word, as in
	// web search engines; it was escaped to a plain word, which found
	// them ("zorblax OR onerror").
	t.Run("minus", func(t *testing.T) {
		for q, want := range map[string]bool{"zorblax -onerror": false, "zorblax +onerror": true, "zorblax -benchmark": true} {
			for _, e := range search(t, url.Values{"q": {q}}.Encode()).Engines {
				if e.Name == "omega" {
					continue // the zorblax page is not in its database
				}
				if e.Error != "" || (e.Results > 0) != want {
					t.Errorf("q=%q: %s answered %d results (error %q); want the zorblax page %v", q, e.Name, e.Results, e.Error, want)
				}
			}
		}
	})

	// A 10 KB query: longer than the request line Elasticsearch and
	// OpenSearch read (4096 bytes) and the URI Solr's Jetty takes. The
	// page says why each refused it, and shows Omega's results.
	t.Run("refusal", func(t *testing.T) {
		p := search(t, url.Values{"q": {strings.Repeat("benchmark ", 1000)}}.Encode())
		want := map[string]string{"opensearch": "larger than 4096 bytes", "elasticsearch": "larger than 4096 bytes", "solr": "HTTP 414 Request URI Too Long"}
		for _, e := range p.Engines {
			if w := want[e.Name]; w != "" && !strings.Contains(e.Error, w) {
				t.Errorf("%s: error %q, want the engine's reason (%q)", e.Name, e.Error, w)
			}
			if e.Name == "omega" && (e.Error != "" || e.Results == 0) {
				t.Errorf("omega: %d results, error %q; want its answer", e.Results, e.Error)
			}
		}
	})

	// Answers that are a success (200) holding part of the results:
	// OpenSearch and Elasticsearch searching an index whose body is a
	// number beside the sample's (an alias over indexes mapped apart),
	// with df=body, so the query fails on that index's shard; Solr with
	// timeAllowed=0, its time limit exceeded. Each engine's line says
	// so beside its results.
	t.Run("partial", func(t *testing.T) {
		numIndex := metaRealIndex + "_num"
		var partial []Engine
		for _, kind := range []string{"opensearch", "elasticsearch"} {
			base := bases[kind]
			realengine.Do(t, http.MethodDelete, base+"/"+numIndex+"?ignore_unavailable=true", "", nil)
			realengine.Do(t, http.MethodPut, base+"/"+numIndex, "application/json",
				[]byte(`{"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":{"properties":{"body":{"type":"long"}}}}`))
			realengine.Do(t, http.MethodPut, base+"/"+numIndex+"/_doc/1?refresh=true", "application/json", []byte(`{"body":5}`))
			partial = append(partial, Engine{Name: kind, URL: base, Timeout: 10 * time.Second,
				Adapter: engine.Config{Kind: kind, Path: "/" + metaRealIndex + "," + numIndex + "/_search", Extra: "df=body"}})
		}
		partial = append(partial, Engine{Name: "solr", URL: bases["solr"], Timeout: 10 * time.Second,
			Adapter: engine.Config{Kind: "solr", Path: "/" + metaRealIndex + "/select", Extra: "timeAllowed=0"}})
		_, pbase := startProxy(t, Options{Engines: partial, Budget: 3 * time.Second})
		code, body := get(t, pbase+"/_winnow/search.json?q=benchmark")
		var p struct {
			Engines []struct{ Name, Error, Partial string }
			Groups  []json.RawMessage
		}
		if err := json.Unmarshal([]byte(body), &p); code != 200 || err != nil {
			t.Fatalf("search.json: %d %v\n%s", code, err, body)
		}
		want := map[string]string{"opensearch": "1 of 2 shards failed: query_shard_exception", "elasticsearch": "1 of 2 shards failed: query_shard_exception", "solr": "partial results: "}
		for _, e := range p.Engines {
			if e.Error != "" || !strings.HasPrefix(e.Partial, want[e.Name]) {
				t.Errorf("%s: error %q, partial %q; want its answer, partial (%q...)", e.Name, e.Error, e.Partial, want[e.Name])
			}
		}
		if len(p.Groups) == 0 {
			t.Errorf("no results; want the sample index's Benchmarking pages")
		}
		code, html := get(t, pbase+"/_winnow/search?q=benchmark")
		if code != 200 || !strings.Contains(html, "partial: 1 of 2 shards failed") {
			t.Errorf("search page: %d, does not say the answer is partial", code)
		}
	})

	t.Run("markup", func(t *testing.T) {
		p := search(t, "q=zorblax")
		if len(p.Groups) != 1 || p.Groups[0].Result.Title != markupTitle {
			t.Fatalf("q=zorblax: %+v; want one result titled %q, as indexed", p.Groups, markupTitle)
		}
		code, html := get(t, base+"/_winnow/search?q=zorblax")
		if code != 200 || !strings.Contains(html, "Zorblax &lt;script&gt;alert(1)&lt;/script&gt; std::vector&lt;int&gt; &amp; a &lt; b</a>") {
			t.Errorf("search page: %d; want the title escaped, whole\n%s", code, html)
		}

		// Omega highlights in its snippets (<strong>, escaped once
		// more than its HTML); the Lucene engines, asked without
		// highlighting and without a snippet field, give none. Only
		// Omega stems "benchmarked" to the Benchmarking pages.
		p = search(t, "q=benchmarked")
		if len(p.Groups) == 0 || !strings.Contains(p.Groups[0].Result.Snippet, "Benchmarking tips") || strings.Contains(p.Groups[0].Result.Snippet, "<") {
			t.Errorf("q=benchmarked: %+v; want Omega's Benchmarking page, its snippet as text", p.Groups)
		}
		if _, html := get(t, base+"/_winnow/search?q=benchmarked"); !strings.Contains(html, "<mark>Benchmarking</mark> tips") {
			t.Errorf("search page q=benchmarked: Omega's highlighting is not marked")
		}
		// The page from all four engines has Omega's snippet, whichever
		// engine listed it first.
		p = search(t, "q=benchmark")
		if len(p.Groups) == 0 || len(p.Groups[0].Result.Engines) != 4 || !strings.Contains(p.Groups[0].Result.Snippet, "Benchmarking tips") {
			t.Errorf("q=benchmark: first group %+v; want the Benchmarking page from all four engines, with Omega's snippet", p.Groups[:min(len(p.Groups), 1)])
		}
	})
}

// engineUnion asks each engine directly for its first 1000 results for q,
// as the metasearch asks it, and returns the URLs of all their answers.
func engineUnion(t *testing.T, engines []Engine, q string) map[string]bool {
	t.Helper()
	union := map[string]bool{}
	for _, e := range engines {
		ad, err := engine.New(e.Adapter)
		if err != nil {
			t.Fatal(err)
		}
		req, err := ad.Search(engine.Query{Q: q, Size: 1000})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(strings.TrimSuffix(e.URL, "/") + req.Path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %v\n%s", e.Name, req.Path, resp.StatusCode, err, body)
		}
		p, err := ad.Parse(body, resp.Header.Get("Content-Type"))
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		for _, r := range p.Results {
			union[r.URL] = true
		}
	}
	if len(union) == 0 {
		t.Fatalf("no engine answered %q", q)
	}
	return union
}
