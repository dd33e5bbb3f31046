package proxy

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/proxy/engine"
)

// serveRecorded serves body as a search engine answering every request,
// with the product header Elasticsearch sends.
func serveRecorded(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// recordingEngine serves answer, as contentType, to every request and
// returns its URL and the request bodies it was sent so far.
func recordingEngine(t *testing.T, contentType string, answer []byte) (string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(bodies)
	}
}

// sourceWithoutURL is a _source as a map, without the url the test data
// adds to the real hits.
func sourceWithoutURL(t *testing.T, src json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(src, &m); err != nil {
		t.Fatalf("_source %s: %v", src, err)
	}
	delete(m, "url")
	return m
}

// groupIDs is the _ids of a hit's group other than its own, sorted: a real
// collapse answer lists the winner among its inner hits, winnow does not.
func groupIDs(h hitView) []string {
	var ids []string
	for _, d := range h.dups {
		if d.id != h.id {
			ids = append(ids, d.id)
		}
	}
	slices.Sort(ids)
	return ids
}

// bakery starts winnow in front of the recorded OpenSearch hits of the
// bakery example (their urls pointed at the demo engine's pages on
// loopback) and a server giving OpenSearch's real collapse answer for
// them. It returns winnow's address, the real answer's server, and both
// recorded files; the pages are signed once, so every client sees the
// same refinement.
func bakery(t *testing.T) (base, realURL string, hits, collapsed []byte) {
	t.Helper()
	d := startDemo(t, demo.Options{})
	hits, err := os.ReadFile("testdata/opensearch-bakery-search.json")
	if err != nil {
		t.Fatal(err)
	}
	collapsed, err = os.ReadFile("testdata/opensearch-collapse-inner-hits.json")
	if err != nil {
		t.Fatal(err)
	}
	engineSrv := serveRecorded(t, bytes.ReplaceAll(hits, []byte("http://pages.test"), []byte(d.URL())))
	_, base = startProxy(t, Options{Budget: 5 * time.Second, Engines: []Engine{{Name: "rec", URL: engineSrv.URL,
		Adapter: engine.Config{Kind: "elasticsearch", Path: "/bakery-items/_search"}}}})
	get(t, base+"/bakery-items/_search?q=cakes&size=3")
	return base, serveRecorded(t, collapsed).URL, hits, collapsed
}

// TestClientsRecordedCollapse runs winnow in group mode in front of a
// recorded OpenSearch answer of four real hits (two documents of each of
// two items) and decodes its answer with each official client, as the
// client decodes the real collapse answer with inner_hits that OpenSearch
// gave for the same documents: the winners, each with its own _index,
// _id, _score and _source, and their groups' duplicates in inner_hits
// must be the real answer's. Each hit's url (added to the recorded hits)
// is a page the demo engine serves on loopback, the hits of one item two
// releases of one LLVM page, so winnow groups by content what OpenSearch
// grouped by the item field.
func TestClientsRecordedCollapse(t *testing.T) {
	base, realURL, _, collapsed := bakery(t)
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			want := c.search(t, realURL, "bakery-items", "cakes", "off")
			if len(want.hits) != 2 {
				t.Fatalf("the client read %d hits of the real collapse answer, want 2", len(want.hits))
			}
			got := c.search(t, base, "bakery-items", "cakes", "group")
			if len(got.hits) != len(want.hits) {
				t.Fatalf("winnow's answer has %d hits %q, want the real collapse answer's %d", len(got.hits), hitIDs(got.hits), len(want.hits))
			}
			for i, w := range want.hits {
				g := got.hits[i]
				if g.id != w.id || g.index != w.index || math.Abs(g.score-w.score) > 1e-6 {
					t.Errorf("hit %d: _index %q _id %q _score %g, want %q %q %g", i, g.index, g.id, g.score, w.index, w.id, w.score)
				}
				if gs, ws := sourceWithoutURL(t, g.src), sourceWithoutURL(t, w.src); !reflect.DeepEqual(gs, ws) {
					t.Errorf("hit %d (%s): _source %v, want %v", i, g.id, gs, ws)
				}
				if gd, wd := groupIDs(g), groupIDs(w); !slices.Equal(gd, wd) {
					t.Errorf("hit %d (%s): inner_hits %q, want the real collapse group %q", i, g.id, gd, wd)
				}
				for _, dup := range g.dups {
					if dup.index != "bakery-items" || len(dup.src) == 0 || dup.url == g.url {
						t.Errorf("hit %d: inner hit %q has _index %q, _source %s: not its own", i, dup.id, dup.index, dup.src)
					}
				}
			}
		})
	}
	// Real collapse answers of both engines: OpenSearch's above and
	// Elasticsearch's from its reference (second-level collapsing, so its
	// inner hits carry fields; a sort carries sort): winnow's inner_hits
	// have every other key they have, at every level.
	esCollapsed, err := os.ReadFile("testdata/es-collapse-inner-hits.json")
	if err != nil {
		t.Fatal(err)
	}
	_, body := get(t, base+"/bakery-items/_search?q=cakes&size=3")
	gotShape := innerHitShape(t, []byte(body))
	for name, real := range map[string][]byte{"OpenSearch": collapsed, "Elasticsearch": esCollapsed} {
		t.Run("shape of "+name, func(t *testing.T) {
			wantShape := innerHitShape(t, real)
			for _, k := range wantShape {
				if k != "hit.sort" && k != "hit.fields" && !slices.Contains(gotShape, k) {
					t.Errorf("winnow's inner_hits lack %q: %q; %s's collapse answer has %q", k, gotShape, name, wantShape)
				}
			}
		})
	}
	esSrv := serveRecorded(t, esCollapsed)
	for _, c := range clients {
		t.Run(c.name+" reads Elasticsearch's", func(t *testing.T) {
			a := c.search(t, esSrv.URL, "my-index-000001", "search", "off")
			if len(a.hits) != 1 || a.hits[0].id != "oX9uXXoB0da05OCR3adK" || len(a.hits[0].dups) != 1 || a.hits[0].dups[0].id != a.hits[0].id {
				t.Errorf("the client read %+v of Elasticsearch's collapse answer", hitIDs(a.hits))
			}
		})
	}
}

// hitIDs is the _ids of hits.
func hitIDs(hits []hitView) []string {
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.id)
	}
	return ids
}

// innerHitShape is the keys of the first hit's inner_hits, at every level
// a client reads: the group ("hits"), its hits object, its total and one
// inner hit, each prefixed by its level.
func innerHitShape(t *testing.T, body []byte) []string {
	t.Helper()
	var a struct {
		Hits struct {
			Hits []struct {
				InnerHits map[string]map[string]map[string]json.RawMessage `json:"inner_hits"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(body, &a); err != nil || len(a.Hits.Hits) == 0 {
		t.Fatalf("answer %s: %v", body, err)
	}
	var keys []string
	for _, group := range a.Hits.Hits[0].InnerHits {
		for k := range group {
			keys = append(keys, "group."+k)
		}
		hits := group["hits"]
		for k := range hits {
			keys = append(keys, "hits."+k)
		}
		var total map[string]any
		json.Unmarshal(hits["total"], &total)
		for k := range total {
			keys = append(keys, "total."+k)
		}
		var inner []map[string]any
		json.Unmarshal(hits["hits"], &inner)
		if len(inner) > 0 {
			for k := range inner[0] {
				keys = append(keys, "hit."+k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// TestSolrRecordedGroup runs winnow in group mode in front of a recorded
// Solr answer of four articles (with facets, highlighting and spellcheck
// sections). The test gives each doc a url, a page the demo engine serves
// on loopback: the first two docs two releases of one LLVM page, the
// others distinct pages. Winnow's answer must keep the three winners with
// their recorded fields, list the second doc under the first in Solr's
// expanded section (as Collapse and Expand does, keyed by the uniqueKey),
// count the distinct results in numFound, and keep the other sections as
// recorded.
func TestSolrRecordedGroup(t *testing.T) {
	d := startDemo(t, demo.Options{})
	recorded, err := os.ReadFile("testdata/solr-articles-search.json")
	if err != nil {
		t.Fatal(err)
	}
	pages := []string{"13/Benchmarking", "14/Benchmarking", "13/CodeReview", "13/FaultMaps"}
	body := recorded
	for _, p := range pages {
		// Each doc opens with its article_title: give the next one a url.
		at := bytes.Index(body, []byte(`{"article_title":`))
		if at < 0 {
			t.Fatal("fewer docs than pages")
		}
		body = slices.Concat(body[:at], []byte(`{"url":"`+d.URL()+`/pages/`+p+`.html",`), body[at+1:])
	}
	engineSrv := serveRecorded(t, body)
	_, base := startProxy(t, Options{Budget: 5 * time.Second, Engines: []Engine{{Name: "solr", URL: engineSrv.URL,
		Adapter: engine.Config{Kind: "solr", Path: "/solr/articles/select"}}}})
	path := "/solr/articles/select?q=*:*&wt=json&rows=15"
	get(t, base+path) // sign the pages once
	code, out := get(t, base+path)
	type docs struct {
		NumFound int              `json:"numFound"`
		Docs     []map[string]any `json:"docs"`
	}
	var got, want struct {
		Response   docs            `json:"response"`
		Expanded   map[string]docs `json:"expanded"`
		Facets     json.RawMessage `json:"facet_counts"`
		Highlight  json.RawMessage `json:"highlighting"`
		Spellcheck json.RawMessage `json:"spellcheck"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 200 || err != nil {
		t.Fatalf("winnow's answer: %d, %v\n%s", code, err, out)
	}
	if err := json.Unmarshal(recorded, &want); err != nil {
		t.Fatal(err)
	}
	ids := func(ds []map[string]any) []any {
		var out []any
		for _, d := range ds {
			out = append(out, d["id"])
		}
		return out
	}
	if g := ids(got.Response.Docs); !reflect.DeepEqual(g, []any{"23680099", "23720655", "23717275"}) || got.Response.NumFound != 4 {
		t.Errorf("winners %q, numFound %d; want the first, third and fourth docs, the engine's numFound 4", g, got.Response.NumFound)
	}
	for _, g := range got.Response.Docs {
		delete(g, "url")
		delete(g, "_winnow")
		for _, w := range want.Response.Docs {
			if w["id"] == g["id"] && !reflect.DeepEqual(g, w) {
				t.Errorf("doc %v: %v, want the recorded %v", g["id"], g, w)
			}
		}
	}
	if e := got.Expanded["23680099"]; len(got.Expanded) != 1 || e.NumFound != 1 || !reflect.DeepEqual(ids(e.Docs), []any{"23670912"}) {
		t.Errorf("expanded %+v; want 23680099's group to hold the second doc, 23670912", got.Expanded)
	}
	for name, pair := range map[string][2]json.RawMessage{"facet_counts": {got.Facets, want.Facets}, "highlighting": {got.Highlight, want.Highlight},
		"spellcheck": {got.Spellcheck, want.Spellcheck}} {
		if !bytes.Equal(pair[0], pair[1]) {
			t.Errorf("%s: %s, want the recorded %s", name, pair[0], pair[1])
		}
	}
}

// TestClientsRecordedModes runs the recorded OpenSearch hits of
// TestClientsRecordedCollapse through winnow in remove and annotate mode
// and decodes the answers with each official client: remove keeps the
// real collapse answer's winners, in its order; annotate keeps the page's
// hits, each with its own recorded _index, _id and _source.
func TestClientsRecordedModes(t *testing.T) {
	base, realURL, hits, _ := bakery(t)
	type recordedHit struct {
		ID     string          `json:"_id"`
		Index  string          `json:"_index"`
		Source json.RawMessage `json:"_source"`
	}
	var recorded struct {
		Hits struct {
			Hits []recordedHit `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(hits, &recorded); err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			want := c.search(t, realURL, "bakery-items", "cakes", "off")
			// Remove mode drops only what the content-equivalence decision
			// accepts: every winner stays, in order, and a near-duplicate
			// it does not accept (two releases of the Benchmarking page) is
			// kept, annotated.
			removed := c.search(t, base, "bakery-items", "cakes", "remove")
			annotated := c.search(t, base, "bakery-items", "cakes", "annotate")
			var winners []string
			for _, id := range hitIDs(removed.hits) {
				if slices.Contains(hitIDs(want.hits), id) {
					winners = append(winners, id)
				}
			}
			if w := hitIDs(want.hits); !slices.Equal(winners, w) {
				t.Errorf("remove mode: hits %q, want the real collapse answer's winners %q among them, in order", hitIDs(removed.hits), w)
			}
			if len(removed.hits) >= len(annotated.hits) {
				t.Errorf("remove mode kept all %d hits %q, want the content-equivalent duplicate removed", len(removed.hits), hitIDs(removed.hits))
			}
			if len(annotated.hits) < len(want.hits) {
				t.Fatalf("annotate mode: %d hits %q, want at least the %d winners", len(annotated.hits), hitIDs(annotated.hits), len(want.hits))
			}
			for _, h := range annotated.hits {
				i := slices.IndexFunc(recorded.Hits.Hits, func(r recordedHit) bool { return r.ID == h.id })
				if i < 0 {
					t.Errorf("annotate mode: hit %q is not a recorded hit", h.id)
					continue
				}
				r := recorded.Hits.Hits[i]
				if h.index != r.Index || !reflect.DeepEqual(sourceWithoutURL(t, h.src), sourceWithoutURL(t, r.Source)) {
					t.Errorf("annotate mode: hit %q has _index %q, _source %s; want its own %q, %s", h.id, h.index, h.src, r.Index, r.Source)
				}
			}
		})
	}
}

// TestSolrErrorFormat checks that a request winnow refuses gets Solr's
// error in the format the request asked for: XML for wt=xml (as Solr
// writes it, readable by an XML client), JSON otherwise.
func TestSolrErrorFormat(t *testing.T) {
	engineSrv := serveRecorded(t, []byte(`{"responseHeader":{"status":0,"QTime":1},"response":{"numFound":0,"start":0,"docs":[]}}`))
	_, base := startProxy(t, Options{Budget: 5 * time.Second, Engines: []Engine{{Name: "solr", URL: engineSrv.URL,
		Adapter: engine.Config{Kind: "solr", Path: "/solr/articles/select"}}}})
	bad := "/solr/articles/select?q=*:*&winnow_minconfidence=5&wt="
	code, out := get(t, base+bad+"xml")
	var x struct {
		XMLName xml.Name `xml:"response"`
		Lists   []struct {
			Name string `xml:"name,attr"`
			Ints []struct {
				Name  string `xml:"name,attr"`
				Value int    `xml:",chardata"`
			} `xml:"int"`
			Strs []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:",chardata"`
			} `xml:"str"`
		} `xml:"lst"`
	}
	if err := xml.Unmarshal([]byte(out), &x); code != 400 || err != nil || len(x.Lists) != 2 || x.Lists[1].Name != "error" {
		t.Fatalf("wt=xml, bad parameter: %d, %v\n%s; want 400 and Solr's XML error", code, err, out)
	}
	msg, status := "", 0
	for _, s := range x.Lists[1].Strs {
		if s.Name == "msg" {
			msg = s.Value
		}
	}
	for _, i := range x.Lists[0].Ints {
		if i.Name == "status" {
			status = i.Value
		}
	}
	if !strings.Contains(msg, "winnow_minconfidence") || status != 400 {
		t.Errorf("XML error msg %q, status %d; want the parameter named and status 400", msg, status)
	}
	code, out = get(t, base+bad+"json")
	var j struct {
		Error struct {
			Msg  string `json:"msg"`
			Code int    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &j); code != 400 || err != nil || j.Error.Code != 400 || !strings.Contains(j.Error.Msg, "winnow_minconfidence") {
		t.Errorf("wt=json, bad parameter: %d, %v, %+v\n%s; want Solr's JSON error", code, err, j, out)
	}
}

// TestSolrFormSettings: winnow's own parameters in a Solr search POSTed
// as a form (SolrJ's METHOD.POST puts every parameter in the body) are
// read as in the query string and stripped from what the engine gets; a
// misspelt one is refused. They were passed to Solr unread: the search
// got the server's mode.
func TestSolrFormSettings(t *testing.T) {
	d := startDemo(t, demo.Options{})
	recorded, err := os.ReadFile("testdata/solr-articles-search.json")
	if err != nil {
		t.Fatal(err)
	}
	body := recorded
	for _, p := range []string{"13/Benchmarking", "14/Benchmarking", "13/CodeReview", "13/FaultMaps"} {
		at := bytes.Index(body, []byte(`{"article_title":`))
		body = slices.Concat(body[:at], []byte(`{"url":"`+d.URL()+`/pages/`+p+`.html",`), body[at+1:])
	}
	engineURL, forms := recordingEngine(t, "application/json; charset=UTF-8", body)
	_, base := startProxy(t, Options{Budget: 5 * time.Second, Engines: []Engine{{Name: "solr", URL: engineURL,
		Adapter: engine.Config{Kind: "solr", Path: "/solr/articles/select"}}}})
	form := "q=%2A%3A%2A&wt=json&rows=15&winnow_mode=remove"
	post(t, base+"/solr/articles/select", form) // sign the pages once
	code, out := post(t, base+"/solr/articles/select", form)
	var got struct {
		Expanded map[string]any `json:"expanded"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 200 || err != nil {
		t.Fatalf("winnow's answer: %d, %v\n%s", code, err, out)
	}
	// The answer of remove mode asked in the query string: nothing
	// expanded (group mode, the server's, expands the second release of
	// Benchmarking under the first).
	_, want := get(t, base+"/solr/articles/select?q=%2A%3A%2A&wt=json&rows=15&winnow_mode=remove")
	if got.Expanded != nil || out != want {
		t.Errorf("form winnow_mode=remove: expanded %v; want remove mode's answer:\n%.300s", got.Expanded, want)
	}
	for _, f := range forms() {
		if strings.Contains(f, "winnow") {
			t.Errorf("the engine got winnow's parameter: %q", f)
		}
	}
	if code, out := post(t, base+"/solr/articles/select", "q=x&winnow_mod=remove"); code != 400 || !strings.Contains(out, "winnow_mod") {
		t.Errorf("a misspelt form parameter: %d %.300s, want 400 naming it", code, out)
	}
}
