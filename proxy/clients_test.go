package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/typedapi/types"
	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/proxy/engine"
)

// clientModes are the modes every client test runs in: each is asked by
// the X-Winnow-Mode header, which every client can send.
var clientModes = []string{"group", "remove", "annotate", "off"}

// hitView is what a client decoded of one hit, whatever the client.
type hitView struct {
	id, index, url string
	score          float64
	src            json.RawMessage
	dups           []hitView // inner_hits (winnow's are named "winnow")
}

// clientAnswer is what a client decoded of one answer.
type clientAnswer struct {
	total    int
	relation string
	hits     []hitView
}

// searchFunc runs q (size 3) on index through a client with winnow's mode.
type searchFunc func(t *testing.T, base, index, q, mode string) clientAnswer

// urlOf reads the url of a hit's _source ("" for none).
func urlOf(t *testing.T, src []byte) string {
	t.Helper()
	var s struct {
		URL string `json:"url"`
	}
	if len(src) > 0 {
		if err := json.Unmarshal(src, &s); err != nil {
			t.Fatalf("_source %s: %v", src, err)
		}
	}
	return s.URL
}

func esTyped(t *testing.T, base, index, q, mode string) clientAnswer {
	c, err := elasticsearch.NewTypedClient(elasticsearch.Config{Addresses: []string{base}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Search().Index(index).Q(q).Size(3).Header("X-Winnow-Mode", mode).Do(context.Background())
	if err != nil {
		t.Fatalf("typed Search: %v", err)
	}
	var a clientAnswer
	if tot := resp.Hits.Total; tot != nil {
		a.total, a.relation = int(tot.Value), tot.Relation.String()
	}
	view := func(h types.Hit) hitView {
		v := hitView{url: urlOf(t, h.Source_), index: h.Index_, src: h.Source_}
		if h.Id_ != nil {
			v.id = *h.Id_
		}
		if h.Score_ != nil {
			v.score = float64(*h.Score_)
		}
		return v
	}
	for _, h := range resp.Hits.Hits {
		v := view(h)
		for _, ih := range h.InnerHits {
			for _, d := range ih.Hits.Hits {
				v.dups = append(v.dups, view(d))
			}
		}
		a.hits = append(a.hits, v)
	}
	return a
}

func esAPI(t *testing.T, base, index, q, mode string) clientAnswer {
	c, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{base}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Search(c.Search.WithIndex(index), c.Search.WithQuery(q), c.Search.WithSize(3),
		c.Search.WithHeader(map[string]string{"X-Winnow-Mode": mode}))
	if err != nil {
		t.Fatalf("esapi Search: %v", err)
	}
	defer resp.Body.Close()
	if resp.IsError() {
		t.Fatalf("esapi Search: %s", resp)
	}
	return decodeAnswer(t, resp.Body)
}

// decodeAnswer decodes a search answer with encoding/json, as esapi's
// users do.
func decodeAnswer(t *testing.T, r io.Reader) clientAnswer {
	type hit struct {
		Index     string          `json:"_index"`
		ID        string          `json:"_id"`
		Score     *float64        `json:"_score"`
		Source    json.RawMessage `json:"_source"`
		InnerHits map[string]struct {
			Hits struct {
				Hits []hit `json:"hits"`
			} `json:"hits"`
		} `json:"inner_hits"`
	}
	var v struct {
		Hits struct {
			Total struct {
				Value    int    `json:"value"`
				Relation string `json:"relation"`
			} `json:"total"`
			Hits []hit `json:"hits"`
		} `json:"hits"`
	}
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		t.Fatal(err)
	}
	a := clientAnswer{total: v.Hits.Total.Value, relation: v.Hits.Total.Relation}
	view := func(h hit) hitView {
		v := hitView{id: h.ID, index: h.Index, url: urlOf(t, h.Source), src: h.Source}
		if h.Score != nil {
			v.score = *h.Score
		}
		return v
	}
	for _, h := range v.Hits.Hits {
		hv := view(h)
		for _, ih := range h.InnerHits {
			for _, d := range ih.Hits.Hits {
				hv.dups = append(hv.dups, view(d))
			}
		}
		a.hits = append(a.hits, hv)
	}
	return a
}

func openSearch(t *testing.T, base, index, q, mode string) clientAnswer {
	c, err := opensearchapi.NewClient(opensearchapi.Config{Client: opensearch.Config{Addresses: []string{base}}})
	if err != nil {
		t.Fatal(err)
	}
	size := 3
	resp, err := c.Search(context.Background(), &opensearchapi.SearchReq{Indices: []string{index},
		Params: opensearchapi.SearchParams{Query: q, Size: &size}, Header: http.Header{"X-Winnow-Mode": {mode}}})
	if err != nil {
		t.Fatalf("opensearch Search: %v", err)
	}
	a := clientAnswer{total: resp.Hits.Total.Value, relation: resp.Hits.Total.Relation}
	view := func(h opensearchapi.SearchHit) hitView {
		return hitView{id: h.ID, index: h.Index, url: urlOf(t, h.Source), src: h.Source, score: float64(h.Score)}
	}
	for _, h := range resp.Hits.Hits {
		hv := view(h)
		for _, ih := range h.InnerHits {
			for _, d := range ih.Hits.Hits {
				hv.dups = append(hv.dups, view(d))
			}
		}
		a.hits = append(a.hits, hv)
	}
	return a
}

var clients = []struct {
	name   string
	search searchFunc
}{
	{"go-elasticsearch typed", esTyped},
	{"go-elasticsearch esapi", esAPI},
	{"opensearch-go", openSearch},
}

// demoHitOwn reports whether a demo hit's _id and url are the same page:
// a client that read a nested duplicate's _id as the hit's own fails it.
func demoHitOwn(h hitView) bool {
	page := strings.TrimPrefix(h.id, "sample://llvm/")
	return page != h.id && strings.HasSuffix(h.url, "/pages/"+page+".html")
}

// TestClients runs the official Elasticsearch and OpenSearch Go clients
// through winnow in every mode against the demo engine: each decodes
// winnow's answer as its engine's, every hit keeps its own _id and
// _source, group mode's duplicates come as inner_hits, and hits.total is
// eq or a gte lower bound no smaller than the page.
func TestClients(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 5 * time.Second})
	// Warm the cache so every mode sees the same refinement.
	get(t, base+"/llvm/_search?q=benchmark&size=3")
	for _, c := range clients {
		for _, mode := range clientModes {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				a := c.search(t, base, "llvm", "benchmark", mode)
				if len(a.hits) == 0 {
					t.Fatal("no hits")
				}
				dups := 0
				for _, h := range a.hits {
					if !demoHitOwn(h) {
						t.Errorf("hit _id %q with url %q: not its own", h.id, h.url)
					}
					for _, dh := range h.dups {
						dups++
						if !demoHitOwn(dh) || dh.id == h.id {
							t.Errorf("duplicate %q (%q) of %q", dh.id, dh.url, h.id)
						}
					}
				}
				if (mode == "group") != (dups > 0) {
					t.Errorf("%d duplicates in inner_hits, want some in group mode only", dups)
				}
				if a.relation != "eq" && a.relation != "gte" || a.total < len(a.hits) {
					t.Errorf("hits.total %d %q for %d hits", a.total, a.relation, len(a.hits))
				}
			})
		}
	}
}

// TestClientsRecorded runs the clients through winnow in front of
// recorded real answers (Elasticsearch 7's and OpenSearch's documented
// _search answers, served as they were written, with the product header
// Elasticsearch sends).
func TestClientsRecorded(t *testing.T) {
	for _, rec := range []struct{ file, index, id string }{
		{"es7-search.json", "twitter", "0"},
		{"opensearch-search.json", "superheroes", "1"},
	} {
		body, err := os.ReadFile(filepath.Join("engine", "testdata", rec.file))
		if err != nil {
			t.Fatal(err)
		}
		backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Elastic-Product", "Elasticsearch")
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.Write(body)
		}))
		t.Cleanup(backend.Close)
		_, base := startProxy(t, Options{Engines: []Engine{{Name: "rec", URL: backend.URL,
			Adapter: engine.Config{Kind: "elasticsearch", Path: "/" + rec.index + "/_search"}}}})
		for _, c := range clients {
			for _, mode := range clientModes {
				t.Run(rec.file+"/"+c.name+"/"+mode, func(t *testing.T) {
					a := c.search(t, base, rec.index, "x", mode)
					if len(a.hits) != 1 || a.hits[0].id != rec.id || a.total != 1 || a.relation != "eq" {
						t.Errorf("answer = %+v, want the recorded hit %q, total 1 eq", a, rec.id)
					}
				})
			}
		}
	}
}

// TestClientErrors checks that winnow's own refusals reach a client as
// its engine's errors: a bad winnow_mode (400) and a write to a read-only
// gateway (403), with Elasticsearch's error type.
func TestClientErrors(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}})
	c, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{base}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Search(c.Search.WithIndex("llvm"), c.Search.WithQuery("x"), c.Search.WithHeader(map[string]string{"X-Winnow-Mode": "sideways"}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "X-Winnow-Mode") || !strings.Contains(string(b), `"type":"illegal_argument_exception"`) {
		t.Errorf("bad mode: %d %s", resp.StatusCode, b)
	}
	resp, err = c.Indices.Delete([]string{"llvm"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), `"type":"security_exception"`) {
		t.Errorf("DELETE /llvm: %d %s, want 403 security_exception", resp.StatusCode, b)
	}
}

// TestIPv6Engine runs winnow in front of the demo engine on IPv6
// loopback.
func TestIPv6Engine(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	ln.Close()
	d := startDemoAt(t, "[::1]:0")
	if !strings.HasPrefix(d.URL(), "http://[::1]:") {
		t.Fatalf("demo at %s", d.URL())
	}
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}})
	code, body := get(t, base+"/llvm/_search?q=benchmark&size=3")
	if code != 200 || len(decodeES(t, body).Hits.Hits) == 0 {
		t.Errorf("through winnow to %s: %d %s", d.URL(), code, body)
	}
}

// TestResultWindow asks for the last page of Elasticsearch's result
// window: legal directly, so legal through winnow, whose over-fetch
// shrinks to fit (the demo refuses from+size over 10,000 as Elasticsearch
// does).
func TestResultWindow(t *testing.T) {
	d := startDemo(t, demo.Options{})
	if code, _ := get(t, d.URL()+"/llvm/_search?q=the&from=9990&size=30"); code != 400 {
		t.Fatalf("the demo answers from=9990&size=30 with %d, want 400: the test would prove nothing", code)
	}
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}})
	for _, mode := range clientModes {
		code, body := get(t, base+"/llvm/_search?q=the&from=9990&size=10&winnow_mode="+mode)
		if code != 200 {
			t.Errorf("%s: from=9990&size=10 through winnow: %d %s", mode, code, body)
		}
	}
}

// TestGateway checks the read-only gateway: searches pass, writes and
// admin routes get 403 in the engine's error shape, and an engine whose
// config allows writes gets them.
func TestGateway(t *testing.T) {
	var seen []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"acknowledged":true}`)
	}))
	t.Cleanup(backend.Close)
	refused := []struct{ method, path string }{
		{"DELETE", "/idx"}, {"POST", "/_bulk"}, {"PUT", "/_cluster/settings"}, {"PUT", "/idx/_doc/1"},
		{"POST", "/idx/_doc"}, {"GET", "/_cat/indices"}, {"POST", "/idx/_delete_by_query"}, {"GET", "/_nodes"},
	}
	for _, open := range []bool{false, true} {
		e := Engine{Name: "es", URL: backend.URL, AllowWrites: open, Adapter: engine.Config{Kind: "elasticsearch"}}
		_, base := startProxy(t, Options{Engines: []Engine{e}})
		seen = nil
		for _, r := range refused {
			req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case !open && (resp.StatusCode != 403 || !strings.Contains(string(b), `"type":"security_exception"`) || resp.Header.Get("X-Elastic-Product") != "Elasticsearch"):
				t.Errorf("read-only: %s %s = %d %s, want 403 in Elasticsearch's shape", r.method, r.path, resp.StatusCode, b)
			case open && resp.StatusCode != 200:
				t.Errorf("allow_writes: %s %s = %d, want it forwarded", r.method, r.path, resp.StatusCode)
			}
		}
		if !open && len(seen) != 0 {
			t.Errorf("read-only: the backend saw %q", seen)
		}
		for _, p := range []string{"/_search?q=x", "/idx/_search", "/idx/_count", "/_msearch", "/"} {
			if code, _ := get(t, base+p); code == 403 {
				t.Errorf("open=%v: GET %s refused", open, p)
			}
		}
	}
}
