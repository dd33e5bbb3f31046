package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/internal/realengine"
	"github.com/winnow-search/winnow/proxy/engine"
)

// realIndex is the index (Solr core) the gateway tests load.
const realIndex = "winnow_gateway"

// realPage is what a client read of one page of a real engine.
type realPage struct {
	ids     []string // the hits, then their grouped duplicates
	grouped int
	last    []any // the last hit's sort values (search_after)
	cursor  string
	total   int
	header  http.Header
	pitID   string
}

// realClient is one official client (or net/http for Solr) speaking to
// winnow in front of a real engine, in one winnow mode.
type realClient interface {
	// first asks for the first page of all documents sorted by id, size
	// at a time, by a scroll (scroll) or a point in time (pit).
	first(t *testing.T, size int, how string) realPage
	// next asks for the page after p.
	next(t *testing.T, size int, how string, p realPage) realPage
	done(t *testing.T, how string, p realPage)
}

// realGateway loads docs into index on a real engine of kind (started
// if need be), puts winnow in front of it (Solr: the core's handlers,
// the first its search path) and returns the engine's and winnow's URLs,
// the documents loaded, and a check that the index still holds them and
// its definition (mapping and settings, or schema) after what was done.
func realGateway(t *testing.T, kind, index string, docs []realengine.Doc, solrHandlers ...string) (base, proxyURL string, count int, unchanged func(after string)) {
	t.Helper()
	base = realengine.Start(t, kind)
	realengine.Load(t, kind, base, index, docs)
	e := Engine{Name: kind, URL: base, Adapter: engine.Config{Kind: kind, TextField: "body"}, Timeout: 30 * time.Second}
	if kind == "solr" {
		e.Adapter.Path = "/" + index + "/" + solrHandlers[0]
		e.Adapter.SolrHandlers = solrHandlers
	}
	_, proxyURL = startProxy(t, Options{Engines: []Engine{e}, Budget: 5 * time.Second})
	count = realengine.DocCount(t, kind, base, index)
	def := realengine.Definition(t, kind, base, index)
	if count != len(docs) {
		t.Fatalf("%d documents loaded, want %d", count, len(docs))
	}
	return base, proxyURL, count, func(after string) {
		t.Helper()
		if n := realengine.DocCount(t, kind, base, index); n != count {
			t.Errorf("after %s: %d documents, want %d", after, n, count)
		}
		if now := realengine.Definition(t, kind, base, index); !bytes.Equal(now, def) {
			t.Errorf("after %s the index definition changed:\n%s\nwas\n%s", after, now, def)
		}
	}
}

// TestRealEngineGateway runs the gateway in front of real OpenSearch,
// Elasticsearch and Solr holding the demo's LLVM pages: every write and
// admin probe is refused and leaves the index (document count, mapping
// and settings or schema) unchanged; the official clients page through
// scroll and point in time + search_after (Solr: cursorMark) in every
// mode, getting each document once (as a hit or a grouped duplicate) or
// counted as removed; msearch refines each sub-search; count, aggregations
// and the engine's errors come back as the engine gives them.
func TestRealEngineGateway(t *testing.T) {
	d := startDemo(t, demo.Options{})
	docs, err := realengine.Sample(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range realengine.Kinds {
		t.Run(kind, func(t *testing.T) {
			base, proxyURL, count, unchanged := realGateway(t, kind, realIndex, docs, "select", "search")
			probeReal(t, kind, strings.TrimPrefix(proxyURL, "http://"))
			unchanged("the probes")
			hows := []string{"scroll", "pit"}
			if kind == "solr" {
				hows = []string{"cursorMark"}
			}
			for _, mode := range clientModes {
				for _, how := range hows {
					t.Run(mode+"/"+how, func(t *testing.T) {
						pageAll(t, newRealClient(t, kind, proxyURL, mode), how, mode, count)
					})
				}
			}
			if kind != "solr" {
				checkOthersCursors(t, kind, base, strings.TrimPrefix(proxyURL, "http://"))
				checkHiddenIndices(t, base, strings.TrimPrefix(proxyURL, "http://"))
				checkDotIndicesNarrowed(t, kind, base, proxyURL)
				checkESRouteAnswers(t, kind, base, proxyURL, count)
			} else {
				checkSolrHandlers(t, base, proxyURL)
				checkSolrSmuggled(t, base, proxyURL)
				checkSolrSubquery(t, base)
				checkSolrJSONP(t, base, proxyURL)
			}
		})
	}
}

// probeReal sends every probe for kind to the gateway at addr: each is
// refused (403, or 400 from the HTTP server itself).
func probeReal(t *testing.T, kind, addr string) {
	probes := esWriteProbes
	if kind == "solr" {
		probes = solrWriteProbes
	}
	for _, p := range probes {
		if kind == "solr" {
			p.uri = strings.Replace(strings.Replace(p.uri, "/solr/core/", "/"+realIndex+"/", 1), "/solr/", "/", 1)
		} else {
			p.uri = strings.ReplaceAll(p.uri, "/idx", "/"+realIndex)
		}
		code, body := sendRaw(t, addr, p)
		if code != 403 && !(code == 400 && !strings.Contains(body, "winnow")) {
			t.Errorf("%s %s = %d %s, want refused", p.method, p.uri, code, body)
		}
	}
}

// pageAll pages through every document and checks each comes back once
// or is counted as removed, and that the engine's total is on every page.
func pageAll(t *testing.T, c realClient, how, mode string, count int) {
	seen := map[string]int{}
	removed, grouped, pages := 0, 0, 0
	p := c.first(t, 5, how)
	for len(p.ids) > 0 && pages < 60 {
		pages++
		if p.total != count {
			t.Errorf("page %d: total %d, want the engine's %d", pages, p.total, count)
		}
		for _, id := range p.ids {
			seen[id]++
		}
		grouped += p.grouped
		if got := p.header.Get(refinedHeader); mode != "off" && got != "yes" || mode == "off" && got != "no; reason=off" {
			t.Errorf("page %d: %s %q", pages, refinedHeader, got)
		}
		if mode == "remove" {
			var n int
			if _, err := fmt.Sscan(p.header.Get("X-Winnow-Removed"), &n); err != nil {
				t.Fatalf("page %d: X-Winnow-Removed %q", pages, p.header.Get("X-Winnow-Removed"))
			}
			removed += n
		}
		p = c.next(t, 5, how, p)
	}
	c.done(t, how, p)
	for id, n := range seen {
		if n > 1 {
			t.Errorf("%s came back %d times", id, n)
		}
	}
	if len(seen)+removed != count {
		t.Errorf("%d pages: %d documents shown, %d removed; want the engine's %d each once", pages, len(seen), removed, count)
	}
	if mode == "group" && grouped == 0 || mode == "remove" && removed == 0 {
		t.Errorf("%s: %d grouped, %d removed: no duplicate found among the LLVM releases", mode, grouped, removed)
	}
	t.Logf("%d pages, %d shown, %d grouped, %d removed", pages, len(seen), grouped, removed)
}

func newRealClient(t *testing.T, kind, base, mode string) realClient {
	h := http.Header{"X-Winnow-Mode": {mode}}
	switch kind {
	case "elasticsearch":
		es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{base}, Header: h})
		if err != nil {
			t.Fatal(err)
		}
		return &esReal{es: es}
	case "opensearch":
		c, err := opensearchapi.NewClient(opensearchapi.Config{Client: opensearch.Config{Addresses: []string{base}, Header: h}})
		if err != nil {
			t.Fatal(err)
		}
		return &osReal{c: c}
	}
	return &solrReal{base: base, mode: mode}
}

// esAnswerPage is an Elasticsearch or OpenSearch answer as read here.
type esAnswerPage struct {
	ScrollID string `json:"_scroll_id"`
	PitID    string `json:"pit_id"`
	Hits     struct {
		Total struct {
			Value    int    `json:"value"`
			Relation string `json:"relation"`
		} `json:"total"`
		Hits []struct {
			ID        string `json:"_id"`
			Sort      []any  `json:"sort"`
			InnerHits map[string]struct {
				Hits struct {
					Hits []struct {
						ID string `json:"_id"`
					} `json:"hits"`
				} `json:"hits"`
			} `json:"inner_hits"`
		} `json:"hits"`
	} `json:"hits"`
}

func (a esAnswerPage) page(h http.Header) realPage {
	p := realPage{cursor: a.ScrollID, pitID: a.PitID, total: a.Hits.Total.Value, header: h}
	for _, hit := range a.Hits.Hits {
		p.ids = append(p.ids, hit.ID)
		for _, d := range hit.InnerHits["winnow"].Hits.Hits {
			p.ids = append(p.ids, d.ID)
			p.grouped++
		}
		p.last = hit.Sort
	}
	return p
}

// realSort puts the releases of one page next to each other, so a
// page of results holds duplicates to refine.
const realSort = `[{"page":"asc"},{"id":"asc"}]`

func pitBody(size int, id string, after []any) string {
	b := map[string]any{"size": size, "pit": map[string]any{"id": id, "keep_alive": "1m"}, "sort": json.RawMessage(realSort), "track_total_hits": true}
	if after != nil {
		b["search_after"] = after
	}
	out, _ := json.Marshal(b)
	return string(out)
}

func readES(t *testing.T, r *esapi.Response, err error) realPage {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.IsError() {
		t.Fatalf("%s: %s", r.Status(), b)
	}
	var a esAnswerPage
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return a.page(r.Header)
}

// esReal is go-elasticsearch's esapi.
type esReal struct {
	es  *elasticsearch.Client
	pit string
}

func (c *esReal) first(t *testing.T, size int, how string) realPage {
	es := c.es
	if how == "scroll" {
		r, err := es.Search(es.Search.WithIndex(realIndex), es.Search.WithScroll(time.Minute),
			es.Search.WithBody(strings.NewReader(fmt.Sprintf(`{"size":%d,"sort":%s}`, size, realSort))))
		return readES(t, r, err)
	}
	r, err := es.OpenPointInTime([]string{realIndex}, "1m")
	if err != nil || r.IsError() {
		t.Fatalf("open point in time: %v %v", err, r)
	}
	var pit struct {
		ID string `json:"id"`
	}
	json.NewDecoder(r.Body).Decode(&pit)
	r.Body.Close()
	c.pit = pit.ID
	r, err = es.Search(es.Search.WithBody(strings.NewReader(pitBody(size, c.pit, nil))))
	return readES(t, r, err)
}

func (c *esReal) next(t *testing.T, size int, how string, p realPage) realPage {
	es := c.es
	if how == "scroll" {
		r, err := es.Scroll(es.Scroll.WithScrollID(p.cursor), es.Scroll.WithScroll(time.Minute))
		return readES(t, r, err)
	}
	if p.pitID != "" {
		c.pit = p.pitID
	}
	r, err := es.Search(es.Search.WithBody(strings.NewReader(pitBody(size, c.pit, p.last))))
	return readES(t, r, err)
}

func (c *esReal) done(t *testing.T, how string, p realPage) {
	es := c.es
	var r *esapi.Response
	var err error
	if how == "scroll" {
		r, err = es.ClearScroll(es.ClearScroll.WithScrollID(p.cursor))
	} else {
		r, err = es.ClosePointInTime(es.ClosePointInTime.WithBody(strings.NewReader(`{"id":"` + c.pit + `"}`)))
	}
	if err != nil || r.IsError() {
		t.Errorf("%s: clearing: %v %v", how, err, r)
	}
}

// osReal is opensearch-go's opensearchapi.
type osReal struct {
	c   *opensearchapi.Client
	pit string
}

func osPage(t *testing.T, hits opensearchapi.SearchHits, scrollID *string, h http.Header) realPage {
	// Read back as the other clients' answers are.
	b, err := json.Marshal(map[string]any{"hits": hits})
	if err != nil {
		t.Fatal(err)
	}
	var a esAnswerPage
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if scrollID != nil {
		a.ScrollID = *scrollID
	}
	return a.page(h)
}

func (c *osReal) first(t *testing.T, size int, how string) realPage {
	ctx := context.Background()
	if how == "scroll" {
		r, err := c.c.Search(ctx, &opensearchapi.SearchReq{Indices: []string{realIndex},
			Body:   strings.NewReader(fmt.Sprintf(`{"size":%d,"sort":%s}`, size, realSort)),
			Params: opensearchapi.SearchParams{Scroll: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		return osPage(t, r.Hits, r.ScrollID, r.Inspect().Response.Header)
	}
	r, err := c.c.PointInTime.Create(ctx, opensearchapi.PointInTimeCreateReq{Indices: []string{realIndex},
		Params: opensearchapi.PointInTimeCreateParams{KeepAlive: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	c.pit = r.PitID
	return c.next(t, size, how, realPage{})
}

func (c *osReal) next(t *testing.T, size int, how string, p realPage) realPage {
	ctx := context.Background()
	if how == "scroll" {
		r, err := c.c.Scroll.Get(ctx, opensearchapi.ScrollGetReq{ScrollID: p.cursor, Params: opensearchapi.ScrollGetParams{Scroll: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		return osPage(t, opensearchapi.SearchHits{Total: r.Hits.Total, Hits: r.Hits.Hits}, r.ScrollID, r.Inspect().Response.Header)
	}
	r, err := c.c.Search(ctx, &opensearchapi.SearchReq{Body: strings.NewReader(pitBody(size, c.pit, p.last))})
	if err != nil {
		t.Fatal(err)
	}
	return osPage(t, r.Hits, nil, r.Inspect().Response.Header)
}

func (c *osReal) done(t *testing.T, how string, p realPage) {
	ctx := context.Background()
	var err error
	if how == "scroll" {
		_, err = c.c.Scroll.Delete(ctx, opensearchapi.ScrollDeleteReq{ScrollIDs: []string{p.cursor}})
	} else {
		_, err = c.c.PointInTime.Delete(ctx, opensearchapi.PointInTimeDeleteReq{PitID: []string{c.pit}})
	}
	if err != nil {
		t.Errorf("%s: clearing: %v", how, err)
	}
}

// solrReal pages a Solr core (index, default realIndex) by cursorMark
// with net/http.
type solrReal struct{ base, mode, index string }

func (c *solrReal) get(t *testing.T, size int, mark string) realPage {
	q := url.Values{"q": {"*:*"}, "rows": {fmt.Sprint(size)}, "sort": {"page asc, id asc"}, "cursorMark": {mark}, "wt": {"json"}}
	index := c.index
	if index == "" {
		index = realIndex
	}
	u := c.base + "/" + index + "/select?" + q.Encode()
	code, body := get(t, u, "X-Winnow-Mode", c.mode)
	var a struct {
		Response struct {
			NumFound int `json:"numFound"`
			Docs     []struct {
				ID string `json:"id"`
			} `json:"docs"`
		} `json:"response"`
		Expanded map[string]struct {
			Docs []struct {
				ID string `json:"id"`
			} `json:"docs"`
		} `json:"expanded"`
		Next string `json:"nextCursorMark"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &a) != nil {
		t.Fatalf("%s: %d %s", u, code, body)
	}
	// The header comes from a second identical request: get drops it.
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("X-Winnow-Mode", c.mode)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	p := realPage{total: a.Response.NumFound, cursor: a.Next, header: resp.Header}
	if a.Next == mark {
		return p // the end: Solr gives the same mark back
	}
	for _, d := range a.Response.Docs {
		p.ids = append(p.ids, d.ID)
		for _, x := range a.Expanded[d.ID].Docs {
			p.ids = append(p.ids, x.ID)
			p.grouped++
		}
	}
	return p
}

func (c *solrReal) first(t *testing.T, size int, how string) realPage { return c.get(t, size, "*") }
func (c *solrReal) next(t *testing.T, size int, how string, p realPage) realPage {
	return c.get(t, size, p.cursor)
}
func (c *solrReal) done(*testing.T, string, realPage) {}

// checkOthersCursors opens a scroll and a point in time on the engine
// itself, as another client of the engine, and sends through winnow
// every way found to clear all scrolls or points in time (_all): each
// is refused, and the other client's scroll and point in time still
// serve their next page.
func checkOthersCursors(t *testing.T, kind, base, addr string) {
	var scroll struct {
		ID string `json:"_scroll_id"`
	}
	json.Unmarshal(realengine.Do(t, "POST", base+"/"+realIndex+"/_search?scroll=1m", "application/json", []byte(`{"size":1}`)), &scroll)
	var pit struct {
		ID   string `json:"id"`
		OSID string `json:"pit_id"`
	}
	pitPath := "/_pit"
	if kind == "opensearch" {
		pitPath = "/_search/point_in_time"
	}
	json.Unmarshal(realengine.Do(t, "POST", base+"/"+realIndex+pitPath+"?keep_alive=1m", "", nil), &pit)
	pitID := pit.ID + pit.OSID
	if scroll.ID == "" || pitID == "" {
		t.Fatalf("no scroll (%q) or point in time (%q) opened", scroll.ID, pitID)
	}
	for _, p := range []probe{
		{method: "DELETE", uri: "/_search/scroll/_all"},
		{method: "DELETE", uri: "/_search/scroll?scroll_id=_all"},
		{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":"_all"}`},
		{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":/**/"_all"}`},
		{method: "DELETE", uri: "/_search/point_in_time/_all"},
		{method: "DELETE", uri: "/_search/point_in_time", body: `{"pit_id":["_all"]}`},
	} {
		if code, body := sendRaw(t, addr, p); code != 403 {
			t.Errorf("%s %s %s = %d %.300s, want 403", p.method, p.uri, p.body, code, body)
		}
	}
	realengine.Do(t, "POST", base+"/_search/scroll", "application/json", []byte(`{"scroll":"1m","scroll_id":"`+scroll.ID+`"}`))
	realengine.Do(t, "POST", base+"/_search", "application/json", []byte(`{"size":1,"pit":{"id":"`+pitID+`","keep_alive":"1m"}}`))
	realengine.Do(t, "DELETE", base+"/_search/scroll", "application/json", []byte(`{"scroll_id":"`+scroll.ID+`"}`))
	if kind == "opensearch" {
		realengine.Do(t, "DELETE", base+pitPath, "application/json", []byte(`{"pit_id":["`+pitID+`"]}`))
	} else {
		realengine.Do(t, "DELETE", base+pitPath, "application/json", []byte(`{"id":"`+pitID+`"}`))
	}
}

// checkHiddenIndices puts a document in an index whose name starts with
// '.' and one in a hidden index (index.hidden) and asks for them through
// winnow the ways found to reach them past the gate's look at the path:
// named in a multi-search's lines, or opened by expand_wildcards. Each
// is refused, and no answer holds either document.
func checkHiddenIndices(t *testing.T, base, addr string) {
	const dot, hidden, secret = ".winnow_gateway_dot", "winnow_gateway_hidden", "winnow-gateway-secret"
	for _, ix := range []struct{ name, settings string }{{dot, `{}`}, {hidden, `{"index.hidden":true}`}} {
		realengine.Do(t, "PUT", base+"/"+ix.name, "application/json", []byte(`{"settings":`+ix.settings+`}`))
		t.Cleanup(func() { realengine.Do(t, "DELETE", base+"/"+ix.name, "", nil) })
		realengine.Do(t, "PUT", base+"/"+ix.name+"/_doc/1?refresh=true", "application/json", []byte(`{"body":"`+secret+`"}`))
	}
	ms := func(lines ...string) probe {
		return probe{method: "POST", uri: "/_msearch", ctype: "application/x-ndjson", body: strings.Join(lines, "\n") + "\n"}
	}
	for _, p := range []probe{
		ms(`{"index":"`+dot+`"}`, `{}`),
		ms(`{"indices":"`+dot+`"}`, `{}`),
		ms(`{"index":["`+realIndex+`","`+dot+`"]}`, `{}`),
		ms(``, `{}`, `{"index":"`+dot+`"}`, `{}`),
		ms(`{"index":"`+realIndex+`*","expand_wildcards":"all"}`, `{}`),
		{method: "GET", uri: "/" + realIndex + "*/_search?q=body:" + secret + "&expand_wildcards=all"},
		{method: "GET", uri: "/" + realIndex + "*/_search?q=body:" + secret + "&expand_wildcards=open,hidden"},
	} {
		code, body := sendRaw(t, addr, p)
		if code != 403 || strings.Contains(body, secret) {
			t.Errorf("%s %s %q = %d %.300s, want 403", p.method, p.uri, p.body, code, body)
		}
	}
}

// checkDotIndicesNarrowed puts a document in an index whose name starts
// with '.' (not hidden), in a plain index and its alias, and in a data
// stream (its backing index named ".ds-..."), each with marker:yes. The
// engine's own "*", "_all" and no index find the dot index's document;
// through winnow they, a pattern starting with '*', _count and
// _msearch lines find the plain index's and the data stream's, never
// the dot index's; the data stream, the alias, logs-* and the plain
// index are searched as before, and a cross-cluster expression is
// refused.
func checkDotIndicesNarrowed(t *testing.T, kind, base, proxyURL string) {
	const dot, plain, alias, stream = ".winnow_gateway_narrow", "winnow_gateway_plain", "winnow_gateway_alias", "logs-winnow_gateway"
	put := func(method, path, body string) {
		realengine.Do(t, method, base+path, "application/json", []byte(body))
	}
	for _, ix := range []string{dot, plain} {
		put("PUT", "/"+ix, `{}`)
		t.Cleanup(func() { realengine.Do(t, "DELETE", base+"/"+ix, "", nil) })
		put("PUT", "/"+ix+"/_doc/1?refresh=true", `{"marker":"yes","body":"in `+ix+`"}`)
	}
	put("POST", "/_aliases", `{"actions":[{"add":{"index":"`+plain+`","alias":"`+alias+`"}}]}`)
	emptyDataStream(t, base, stream, "winnow_gateway_stream")
	put("PUT", "/_index_template/winnow_gateway_stream", `{"index_patterns":["`+stream+`*"],"data_stream":{},"priority":500}`)
	t.Cleanup(func() { emptyDataStream(t, base, stream, "winnow_gateway_stream") })
	put("POST", "/"+stream+"/_doc?refresh=true", `{"@timestamp":"2026-01-01T00:00:00Z","marker":"yes","body":"in the stream"}`)
	// Names ending with a digit, as a data stream's backing index does,
	// marked "two": "*" + a name's tail is narrowed otherwise.
	const two, twoOld = "winnow_gateway_2", "winnow_gateway_2_old"
	for _, ix := range []string{two, twoOld} {
		put("PUT", "/"+ix, `{}`)
		t.Cleanup(func() { realengine.Do(t, "DELETE", base+"/"+ix, "", nil) })
		put("PUT", "/"+ix+"/_doc/1?refresh=true", `{"marker":"two","body":"in `+ix+`"}`)
	}

	// indices asks for the marker's documents and names the indices
	// that answered: "." for the dot index, "ds" for a backing index.
	indices := func(u, body string) string {
		req, _ := http.NewRequest("POST", u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if strings.Contains(u, "_msearch") {
			req.Header.Set("Content-Type", "application/x-ndjson")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return fmt.Sprintf("%d %.300s", resp.StatusCode, b)
		}
		var a struct {
			Count     *int `json:"count"`
			Responses []struct {
				esRawHits
			} `json:"responses"`
			esRawHits
		}
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%s: %v %.300s", u, err, b)
		}
		if a.Count != nil {
			return fmt.Sprint(*a.Count)
		}
		answers := []esRawHits{a.esRawHits}
		if a.Responses != nil {
			answers = answers[:0]
			for _, r := range a.Responses {
				answers = append(answers, r.esRawHits)
			}
		}
		var names []string
		for _, h := range answers {
			var got []string
			for _, hit := range h.Hits.Hits {
				switch {
				case hit.Index == dot:
					got = append(got, ".")
				case strings.HasPrefix(hit.Index, ".ds-"+stream):
					got = append(got, "ds")
				default:
					got = append(got, hit.Index)
				}
			}
			slices.Sort(got)
			names = append(names, strings.Join(got, ","))
		}
		return strings.Join(names, " | ")
	}
	const q = "?q=marker:yes&winnow_mode=off"
	all := "., ds, " + plain
	// The engine's own answers: what the gateway let through before.
	for _, path := range []string{"/_search", "/*/_search", "/_all/_search"} {
		if got := strings.ReplaceAll(indices(base+path+"?q=marker:yes", ""), ",", ", "); got != all {
			t.Errorf("the engine's %s found %q, want %q (the dot index's document too)", path, got, all)
		}
	}
	const q2 = "?q=marker:two&winnow_mode=off"
	// What the gateway narrows "*" + a tail to must not name an index
	// (the engine answers 404 when there is none so named) nor fail
	// allow_no_indices=false because one of its patterns, or an
	// exclusion, matches nothing; the engine's own answers first.
	for _, c := range []struct{ path, want string }{
		{"/*gateway_plain/_search?q=marker:yes", plain},
		{"/*gateway_plain/_search?q=marker:yes&allow_no_indices=false", plain},
		{"/*narrow/_search?q=marker:yes", "."},
		{"/*000001/_search?q=marker:yes", ""},
		{"/*gateway_2/_search?q=marker:two", two},
		{"/*gateway_2*/_search?q=marker:two&allow_no_indices=false", two + "," + twoOld},
		{"/_search?q=marker:yes&allow_no_indices=false", ".,ds," + plain},
		{"/*nothing_named_so/_search?q=marker:yes&allow_no_indices=false", "404 "},
	} {
		if got := strings.ReplaceAll(indices(base+c.path, ""), ",", ", "); !strings.HasPrefix(got, strings.ReplaceAll(c.want, ",", ", ")) {
			t.Errorf("the engine's %s found %q, want %q", c.path, got, c.want)
		}
	}
	ms := func(lines ...string) string { return strings.Join(lines, "\n") + "\n" }
	for _, c := range []struct{ path, body, want string }{
		{"/_search" + q, "", "ds," + plain},
		{"/*/_search" + q, "", "ds," + plain},
		{"/**/_search" + q, "", "ds," + plain},
		{"/_all/_search" + q, "", "ds," + plain},
		{"/*gateway*/_search" + q, "", "ds," + plain},
		{"/*gateway*,-logs-*/_search" + q, "", plain},
		{"/logs-*/_search" + q, "", "ds"},
		{"/" + stream + "/_search" + q, "", "ds"},
		{"/" + alias + "/_search" + q, "", plain},
		{"/" + plain + "/_search" + q, "", plain},
		{"/_search?scroll=1m&winnow_mode=off", `{"query":{"term":{"marker":"yes"}}}`, "ds," + plain},
		{"/_count?q=marker:yes", "", "2"},
		{"/*/_count?q=marker:yes", "", "2"},
		{"/_msearch?winnow_mode=off", ms(`{}`, `{"query":{"term":{"marker":"yes"}}}`, `{"index":"*"}`, `{"query":{"term":{"marker":"yes"}}}`, `{"index":["_all"]}`, `{"query":{"term":{"marker":"yes"}}}`), "ds," + plain + " | ds," + plain + " | ds," + plain},
		{"/" + plain + "/_msearch?winnow_mode=off", ms(`{}`, `{"query":{"term":{"marker":"yes"}}}`, `{"indices":"*"}`, `{"query":{"term":{"marker":"yes"}}}`), plain + " | ds," + plain},
		{"/*gateway_plain/_search" + q, "", plain},
		{"/*gateway_plain/_search" + q + "&allow_no_indices=false", "", plain},
		{"/*winnow_gateway/_search" + q, "", "ds"},
		{"/*narrow/_search" + q, "", ""},
		{"/*000001/_search" + q, "", ""},
		{"/*gateway_2/_search" + q2, "", two},
		{"/*winnow_gateway_2/_search" + q2, "", two},
		{"/*gateway_2*/_search" + q2 + "&allow_no_indices=false", "", two + "," + twoOld},
		{"/_search" + q + "&allow_no_indices=false", "", "ds," + plain},
		{"/*/_count?q=marker:yes&allow_no_indices=false&ignore_unavailable=true", "", "2"},
		{"/_search" + q + "&expand_wildcards=none", "", ""},
		{"/_all/_count?q=marker:yes&expand_wildcards=none", "", "0"},
		{"/_msearch?winnow_mode=off&allow_no_indices=false", ms(`{}`, `{"query":{"term":{"marker":"yes"}}}`, `{"index":"*gateway_plain","allow_no_indices":false}`, `{"query":{"term":{"marker":"yes"}}}`, `{"index":"`+plain+`"}`, `{"query":{"term":{"marker":"yes"}}}`), "ds," + plain + " | " + plain + " | " + plain},
	} {
		if got := indices(proxyURL+c.path, c.body); got != c.want {
			t.Errorf("through winnow %s %q found %q, want %q", c.path, c.body, got, c.want)
		}
	}
	// allow_no_indices=false and a wildcard that matches no index (but
	// a dot-named one): the engine's 404, through winnow too.
	for _, c := range []struct{ path, reason string }{
		{"/*nothing_named_so/_search?q=marker:yes&allow_no_indices=false", "no such index [*nothing_named_so]"},
		{"/*nothing_named_so/_count?allow_no_indices=false", "no such index [*nothing_named_so]"},
		{"/" + plain + ",nothing_named_so*/_search?allow_no_indices=false&ignore_unavailable=true", "no such index [nothing_named_so*]"},
		{"/*narrow/_search?q=marker:yes&allow_no_indices=false", "no such index [*narrow]"},
		{"/_search?q=marker:yes&allow_no_indices=false&expand_wildcards=none", "no such index [_all]"},
	} {
		for _, u := range []string{base, proxyURL} {
			if u == base && strings.Contains(c.path, "narrow") {
				continue // the engine finds the dot index's document
			}
			if got := indices(u+c.path, ""); !strings.HasPrefix(got, "404 ") || !strings.Contains(got, "index_not_found_exception") || !strings.Contains(got, c.reason) {
				t.Errorf("%s%s found %q, want 404 index_not_found_exception %s", u, c.path, got, c.reason)
			}
		}
	}
	for _, path := range []string{"/*:" + dot + "/_search", "/*:*/_search", "/_all::data/_search"} {
		if got := indices(proxyURL+path+q, ""); !strings.HasPrefix(got, "403 ") {
			t.Errorf("through winnow %s = %s, want 403", path, got)
		}
	}
	checkIndexLookups(t, kind, base, proxyURL, dot, plain)
}

// checkIndexLookups searches plain with bodies that read the dot index
// dot (marker:yes, as plain's document): the engine answers each from
// dot's document (a terms lookup's hit, a geo_shape's error saying the
// document is there, a lookup runtime field's fields, indices_boost
// failing or not); through winnow each is refused, and a lookup of
// plain itself passes.
func checkIndexLookups(t *testing.T, kind, base, proxyURL, dot, plain string) {
	send := func(u, body string) (int, string) {
		resp, err := http.Post(u, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	terms := func(ix string) string {
		return `{"query":{"terms":{"marker":{"index":"` + ix + `","id":"1","path":"marker"}}}}`
	}
	probes := []struct{ body, engine string }{
		{terms(dot), `"_id":"1"`},
		{`{"query":{"geo_shape":{"loc":{"indexed_shape":{"index":"` + dot + `","id":"1","path":"loc"}}}}}`, "Shape with name [1] found"},
		{`{"indices_boost":[{"` + dot + `":2}]}`, `"hits"`},
		{`{"query":{"more_like_this":{"fields":["body"],"like":[{"_index":"` + dot + `","_id":"1"}],"min_term_freq":1,"min_doc_freq":1}}}`, ""},
	}
	if kind == "elasticsearch" {
		probes = append(probes, struct{ body, engine string }{
			`{"runtime_mappings":{"x":{"type":"lookup","target_index":"` + dot + `","input_field":"marker","target_field":"marker","fetch_fields":["body"]}},"fields":["x"]}`,
			`"in ` + dot + `"`})
	}
	for _, p := range probes {
		if _, got := send(base+"/"+plain+"/_search", p.body); !strings.Contains(got, p.engine) {
			t.Errorf("the engine answered %s with %.300s, want %s from %s's document", p.body, got, p.engine, dot)
		}
		for _, route := range []string{"/_search", "/_count"} {
			if code, got := send(proxyURL+"/"+plain+route, p.body); code != 403 || strings.Contains(got, dot+`"`) && !strings.Contains(got, "security_exception") {
				t.Errorf("through winnow %s %s = %d %.300s, want 403", route, p.body, code, got)
			}
		}
	}
	if code, got := send(proxyURL+"/"+plain+"/_search?winnow_mode=off", terms(plain)); code != 200 || !strings.Contains(got, `"_id":"1"`) {
		t.Errorf("through winnow a terms lookup of %s = %d %.300s, want its document", plain, code, got)
	}
}

// emptyDataStream deletes a data stream and its index template, if
// they are there, or, on Elasticsearch's integration-test distribution,
// which has no _data_stream API, empties the stream (rolled over, its
// former write index deleted) and keeps the template it uses.
func emptyDataStream(t *testing.T, base, stream, template string) {
	send := func(method, path string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, _ := send("DELETE", "/_data_stream/"+stream); code == http.StatusMethodNotAllowed {
		code, b := send("POST", "/"+stream+"/_rollover")
		var r struct {
			Old string `json:"old_index"`
		}
		if json.Unmarshal(b, &r); code == 200 && r.Old != "" {
			realengine.Do(t, "DELETE", base+"/"+r.Old, "", nil)
		}
		return
	}
	send("DELETE", "/_index_template/"+template)
}

// checkESRouteAnswers checks the routes winnow passes as the engine
// answers them: _count, aggregations with size=0, an engine error, and
// _msearch refined sub-search by sub-search (checkMsearch).
func checkESRouteAnswers(t *testing.T, kind, engineURL, proxyURL string, count int) {
	do := func(base, method, path, body string) (int, http.Header, []byte) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	same := func(path, body string, drop ...string) {
		c1, _, direct := do(engineURL, "POST", path, body)
		c2, _, through := do(proxyURL, "POST", path, body)
		var a, b map[string]any
		json.Unmarshal(direct, &a)
		json.Unmarshal(through, &b)
		for _, k := range append(drop, "took") {
			delete(a, k)
			delete(b, k)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if c1 != c2 || !bytes.Equal(ja, jb) {
			t.Errorf("POST %s %s: through winnow %d %s, the engine %d %s", path, body, c2, through, c1, direct)
		}
	}
	same("/"+realIndex+"/_count", `{"query":{"match":{"body":"benchmark"}}}`)
	same("/"+realIndex+"/_search", `{"size":0,"aggs":{"pages":{"terms":{"field":"page","size":5}}}}`)
	same("/"+realIndex+"/_search", `{"size":0,"track_total_hits":7,"query":{"match_all":{}}}`)
	same("/no_such_index/_search", `{"query":{"match_all":{}}}`)
	same("/"+realIndex+"/_search", `{"query":{"no_such_query":{}}}`)
	checkMsearch(t, kind, proxyURL)
	// A refined search: every hit is the engine's own, highlight and
	// _source filtering included.
	body := `{"size":6,"query":{"match":{"body":"benchmark"}},"_source":["url","title"],"highlight":{"fields":{"body":{}}}}`
	_, _, direct := do(engineURL, "POST", "/"+realIndex+"/_search?size=30", body)
	own := map[string]string{}
	var da esRawHits
	json.Unmarshal(direct, &da)
	for _, hit := range da.Hits.Hits {
		own[hit.ID] = string(hit.Source) + string(hit.Highlight) + hit.Index
	}
	for _, mode := range clientModes {
		_, _, through := do(proxyURL, "POST", "/"+realIndex+"/_search?winnow_mode="+mode, body)
		var ta esRawHits
		if err := json.Unmarshal(through, &ta); err != nil || len(ta.Hits.Hits) == 0 {
			t.Fatalf("%s: %v %s", mode, err, through)
		}
		for _, hit := range ta.Hits.Hits {
			if got := string(hit.Source) + string(hit.Highlight) + hit.Index; own[hit.ID] != got {
				t.Errorf("%s: hit %s is %s, the engine's is %s", mode, hit.ID, got, own[hit.ID])
			}
		}
	}
}

// esRawHits is an answer's hits, each part kept as the engine wrote it.
type esRawHits struct {
	Hits struct {
		Hits []struct {
			Index     string          `json:"_index"`
			ID        string          `json:"_id"`
			Source    json.RawMessage `json:"_source"`
			Highlight json.RawMessage `json:"highlight"`
		} `json:"hits"`
	} `json:"hits"`
}

// checkSolrHandlers: the configured second handler (/search of the
// shipped configset, default field title) is a search the gateway
// refines; one not configured, and qt, stream.* and shards on a
// configured one, are refused before they reach the engine.
func checkSolrHandlers(t *testing.T, base, proxyURL string) {
	direct, err := http.Get(base + "/" + realIndex + "/search?q=LLVM&wt=json")
	if err != nil {
		t.Fatal(err)
	}
	direct.Body.Close()
	if direct.StatusCode == http.StatusNotFound {
		// A Solr started before the shipped configset gained /search
		// (configsets are copied at start): the test's own core gets
		// the same handler through Solr's Config API.
		add := `{"add-requesthandler":{"name":"/search","class":"solr.SearchHandler","defaults":{"echoParams":"explicit","rows":10,"df":"title","wt":"json"}}}`
		resp, err := http.Post(base+"/"+realIndex+"/config", "application/json", strings.NewReader(add))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		t.Logf("this Solr predates the configset's /search: added to core %s with the Config API (%s)", realIndex, resp.Status)
		if direct, err = http.Get(base + "/" + realIndex + "/search?q=LLVM&wt=json"); err != nil {
			t.Fatal(err)
		}
		direct.Body.Close()
	}
	if direct.StatusCode != 200 {
		t.Fatalf("the engine's own /%s/search: %s", realIndex, direct.Status)
	}
	for _, p := range []struct {
		uri  string
		want int
	}{
		{"/" + realIndex + "/search?q=LLVM&rows=20&wt=json", 200},
		{"/" + realIndex + "/search?q=LLVM&qt=/update", 403},
		{"/" + realIndex + "/search?q=LLVM&stream.body=x", 403},
		{"/" + realIndex + "/search?q=LLVM&shards=127.0.0.1:1/solr/x", 403},
		{"/" + realIndex + "/browse?q=LLVM", 403},
		{"/" + realIndex + "/update/search?q=LLVM", 403},
	} {
		req, _ := http.NewRequest("GET", proxyURL+p.uri, nil)
		req.Header.Set("X-Winnow-Mode", "group")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", p.uri, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != p.want {
			t.Errorf("GET %s: %d %s, want %d", p.uri, resp.StatusCode, b, p.want)
			continue
		}
		if p.want != 200 {
			continue
		}
		var a struct {
			Response struct {
				NumFound int               `json:"numFound"`
				Docs     []json.RawMessage `json:"docs"`
			} `json:"response"`
		}
		if err := json.Unmarshal(b, &a); err != nil || a.Response.NumFound == 0 || len(a.Response.Docs) == 0 {
			t.Errorf("GET %s: %v, %d found, %d docs: %.300s", p.uri, err, a.Response.NumFound, len(a.Response.Docs), b)
		}
		if got := resp.Header.Get(refinedHeader); got != "yes" {
			t.Errorf("GET %s: %s %q, want yes", p.uri, refinedHeader, got)
		}
	}
}

// checkSolrJSONP asks for an answer as JSONP (json.wrf): Solr wraps it
// in the callback a <script> tag of any web page would run; through
// winnow it is refused.
func checkSolrJSONP(t *testing.T, base, proxyURL string) {
	const q = "/" + realIndex + "/select?q=*:*&rows=1&wt=json&json.wrf=steal"
	if got := realengine.Do(t, "GET", base+q, "", nil); !bytes.HasPrefix(got, []byte("steal(")) {
		t.Errorf("Solr answered json.wrf with %.200s, want a call of steal", got)
	}
	resp, err := http.Get(proxyURL + q)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got, _ := io.ReadAll(resp.Body); resp.StatusCode != 403 || bytes.Contains(got, []byte("steal(")) {
		t.Errorf("through winnow json.wrf = %d %.200s, want 403", resp.StatusCode, got)
	}
}

// checkSolrSmuggled sends Solr parameters the gate refuses (here
// shards, a request from Solr to another host) where Solr reads them and
// a gate reading a POST's UTF-8 form would not: in a GET's body, in a
// form in UTF-16, in a query string in UTF-16 (ie). Solr itself reads
// each; through winnow each is refused.
func checkSolrSmuggled(t *testing.T, base, proxyURL string) {
	shards := "127.0.0.1:1/solr/" + realIndex
	for _, p := range []probe{
		{method: "GET", uri: "?q=*:*", ctype: "application/x-www-form-urlencoded", body: "shards=" + shards},
		{method: "GET", uri: "?q=*:*", ctype: "application/json", body: `{"params":{"shards":"` + shards + `"}}`},
		{method: "POST", uri: "", ctype: "application/x-www-form-urlencoded; charset=UTF-16LE", body: utf16Form("q", "*:*", "shards", shards)},
		{method: "GET", uri: "?" + utf16Form("q", "*:*", "shards", shards) + "&ie=UTF-16LE"},
	} {
		send := func(u string) (int, string) {
			req, err := http.NewRequest(p.method, u+"/"+realIndex+"/select"+p.uri, strings.NewReader(p.body))
			if err != nil {
				t.Fatal(err)
			}
			if p.ctype != "" {
				req.Header.Set("Content-Type", p.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		// The same search without shards is Solr's 200: another status
		// (its allowUrls refusal, or a failure to reach the shard) is
		// Solr acting on shards.
		if code, direct := send(base); code == 200 {
			t.Errorf("%s %s %q: Solr did not read shards, the probe proves nothing: %.300s", p.method, p.uri, p.ctype, direct)
		}
		if code, through := send(proxyURL); code != 403 || !strings.Contains(through, "this gateway is read-only") {
			t.Errorf("%s %s %q: through winnow %d %.300s; want winnow's 403", p.method, p.uri, p.ctype, code, through)
		}
	}
}

// checkSolrSubquery: a [subquery] document transformer's parameters
// (x.*) are a request of its own, to the handler x.qt names. Through
// winnow, one asking Solr's /update to optimize a core of two segments
// is refused and the core keeps its two segments.
func checkSolrSubquery(t *testing.T, base string) {
	const core = realIndex + "_subquery"
	realengine.Load(t, "solr", base, core, []realengine.Doc{{ID: "a", Title: "a", Body: "one"}})
	e := Engine{Name: "solr", URL: base, Adapter: engine.Config{Kind: "solr", Path: "/" + core + "/select"}, Timeout: 30 * time.Second}
	_, proxyURL := startProxy(t, Options{Engines: []Engine{e}})
	realengine.Do(t, "POST", base+"/"+core+"/update?commit=true", "application/json", []byte(`[{"id":"b","title":"b","body":"two"}]`))
	segments := func() int {
		var st struct {
			Status map[string]struct {
				Index struct {
					SegmentCount int `json:"segmentCount"`
				} `json:"index"`
			} `json:"status"`
		}
		json.Unmarshal(realengine.Do(t, "GET", base+"/admin/cores?action=STATUS&wt=json&core="+core, "", nil), &st)
		return st.Status[core].Index.SegmentCount
	}
	before := segments()
	if before < 2 {
		t.Fatalf("core %s has %d segments, want 2 to see an optimize", core, before)
	}
	u := proxyURL + "/" + core + "/select?q=*:*&fl=id,x:%5Bsubquery%5D&x.q=*:*&x.qt=/update&x.optimize=true&x.maxSegments=1"
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), "this gateway is read-only") {
		t.Errorf("[subquery] with x.qt=/update: %d %.300s, want winnow's 403", resp.StatusCode, b)
	}
	if after := segments(); after != before {
		t.Errorf("core %s: %d segments after the [subquery], %d before: the search optimized the core", core, after, before)
	}
}

// msearchBody is a multi-search of three: a sorted search whose page
// holds duplicates, one of an index that does not exist (the engine's
// error), and aggregations alone (size 0).
var msearchBody = "{\"index\":\"" + realIndex + "\"}\n" + `{"size":10,"sort":` + realSort + `,"query":{"match_all":{}}}` + "\n" +
	`{"index":"no_such_index"}` + "\n" + `{"query":{"match_all":{}}}` + "\n" +
	"{\"index\":\"" + realIndex + "\"}\n" + `{"size":0,"aggs":{"pages":{"terms":{"field":"page","size":5}}}}` + "\n"

// checkMsearch sends msearchBody through winnow with the engine's
// official client in each mode: the first sub-answer is what the same
// search alone gets through winnow (the same hits and grouped
// duplicates, the same removed count), the second is the engine's
// error, untouched, the third its aggregations; the answer says it was
// refined.
func checkMsearch(t *testing.T, kind, proxyURL string) {
	for _, mode := range []string{"group", "remove", "annotate"} {
		h := http.Header{"X-Winnow-Mode": {mode}}
		// The same search alone, through winnow.
		req, _ := http.NewRequest("POST", proxyURL+"/"+realIndex+"/_search", strings.NewReader(strings.Split(msearchBody, "\n")[1]))
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var single esAnswerPage
		err = json.NewDecoder(resp.Body).Decode(&single)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		alone := single.page(resp.Header)
		var (
			subs   []realPage
			failed []bool
			aggs   json.RawMessage
			header http.Header
		)
		switch kind {
		case "elasticsearch":
			es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{proxyURL}, Header: h})
			if err != nil {
				t.Fatal(err)
			}
			r, err := es.Msearch(strings.NewReader(msearchBody))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			var ms struct {
				Responses []struct {
					esAnswerPage
					Error        json.RawMessage `json:"error"`
					Winnow       json.RawMessage `json:"winnow"`
					Aggregations json.RawMessage `json:"aggregations"`
				} `json:"responses"`
			}
			if err := json.Unmarshal(b, &ms); err != nil || r.IsError() {
				t.Fatalf("%s: msearch: %s %v %s", mode, r.Status(), err, b)
			}
			for _, sub := range ms.Responses {
				subs = append(subs, sub.page(r.Header))
				failed = append(failed, sub.Error != nil)
				if sub.Winnow != nil {
					t.Errorf("%s: a sub-answer says %s", mode, sub.Winnow)
				}
				if sub.Aggregations != nil {
					aggs = sub.Aggregations
				}
			}
			header = r.Header
		case "opensearch":
			c, err := opensearchapi.NewClient(opensearchapi.Config{Client: opensearch.Config{Addresses: []string{proxyURL}, Header: h}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.MSearch(context.Background(), opensearchapi.MSearchReq{Body: strings.NewReader(msearchBody)})
			if r == nil || r.Inspect().Response == nil {
				t.Fatalf("%s: msearch: %v", mode, err)
			}
			// err is the no_such_index sub-answer's (the client reports
			// each failed sub-search).
			for _, sub := range r.Responses {
				var p realPage
				for _, hit := range sub.Hits.Hits {
					p.ids = append(p.ids, hit.ID)
					for _, d := range hit.InnerHits["winnow"].Hits.Hits {
						p.ids = append(p.ids, d.ID)
						p.grouped++
					}
				}
				subs = append(subs, p)
				failed = append(failed, sub.Error != nil)
				if sub.Aggregations != nil {
					aggs = sub.Aggregations
				}
			}
			header = r.Inspect().Response.Header
		}
		if len(subs) != 3 || !failed[1] || failed[0] || failed[2] {
			t.Fatalf("%s: %d sub-answers, failed %v; want 3, the second the engine's error", mode, len(subs), failed)
		}
		if got := header.Get(refinedHeader); got != "yes" {
			t.Errorf("%s: msearch %s %q, want yes", mode, refinedHeader, got)
		}
		if strings.Join(subs[0].ids, ",") != strings.Join(alone.ids, ",") || subs[0].grouped != alone.grouped {
			t.Errorf("%s: msearch's first sub-answer %v (%d grouped), the search alone %v (%d grouped)", mode, subs[0].ids, subs[0].grouped, alone.ids, alone.grouped)
		}
		if mode == "group" && alone.grouped == 0 {
			t.Errorf("group: no duplicate grouped among %v", alone.ids)
		}
		if mode == "remove" && header.Get("X-Winnow-Removed") != resp.Header.Get("X-Winnow-Removed") {
			t.Errorf("remove: msearch removed %q, the search alone %q", header.Get("X-Winnow-Removed"), resp.Header.Get("X-Winnow-Removed"))
		}
		if !bytes.Contains(aggs, []byte(`"buckets"`)) {
			t.Errorf("%s: the aggregations sub-answer lost its buckets: %s", mode, aggs)
		}
	}
}
