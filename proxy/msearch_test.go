package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/proxy/engine"
)

// TestMsearchPerSubAnswer: each sub-search of an _msearch is rewritten
// as a single search would be (from and size over-fetched), and a
// sub-answer winnow cannot refine says so in a "winnow" member of its
// own, the others refined; the answer is marked partial, and an
// _msearch body that is not header and body pairs passes unrefined.
func TestMsearchPerSubAnswer(t *testing.T) {
	engURL, sentBodies := recordingEngine(t, "application/json", []byte(`{"took":1,"responses":[`+
		`{"took":1,"hits":{"total":{"value":2,"relation":"eq"},"hits":[{"_index":"i","_id":"1","_score":1,"_source":{"url":"http://127.0.0.1:9/1","title":"a"}},{"_index":"i","_id":"2","_score":1,"_source":{"url":"http://127.0.0.1:9/2","title":"b"}}]},"status":200},`+
		`{"hits":{"total":3,"hits":"not a list"},"status":200},`+
		`{"error":{"type":"index_not_found_exception","reason":"no such index"},"status":404}]}`))
	_, base := startProxy(t, Options{Engines: []Engine{{Name: "es", URL: engURL, Adapter: engine.Config{Kind: "elasticsearch"}}}})
	body := "{\"index\":\"i\"}\n{\"size\":2}\n{}\n{\"size\":2,\"search_after\":[1]}\n{\"index\":\"none\"}\n{}\n"
	resp, err := http.Post(base+"/_msearch", "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var ms struct {
		Responses []map[string]json.RawMessage `json:"responses"`
	}
	if err := json.Unmarshal(b, &ms); err != nil || resp.StatusCode != 200 || len(ms.Responses) != 3 {
		t.Fatalf("%d %v %s", resp.StatusCode, err, b)
	}
	if h := resp.Header.Get(refinedHeader); h != "partial" {
		t.Errorf("%s %q, want partial", refinedHeader, h)
	}
	if w, ok := ms.Responses[0]["winnow"]; ok {
		t.Errorf("the refined sub-answer says %s", w)
	}
	if w := string(ms.Responses[1]["winnow"]); w != `{"refined":"no","reason":"parse"}` {
		t.Errorf("the sub-answer winnow cannot parse says %q, want refined no, reason parse", w)
	}
	if _, ok := ms.Responses[2]["winnow"]; ok || ms.Responses[2]["error"] == nil {
		t.Errorf("the engine's error sub-answer changed: %s", b)
	}
	sent := sentBodies()[0]
	lines := strings.Split(strings.TrimSpace(sent), "\n")
	if len(lines) != 6 || !strings.Contains(lines[1], `"from":0`) || strings.Contains(lines[1], `"size":2}`) || lines[3] != `{"size":2,"search_after":[1]}` {
		t.Errorf("the engine got %q; want the first search over-fetched and the search_after one as sent", sent)
	}

	resp, err = http.Post(base+"/_msearch", "application/x-ndjson", strings.NewReader("{}\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := resp.Header.Get(refinedHeader); h != "no; reason=rewrite" {
		t.Errorf("a body of one line: %s %q, want no; reason=rewrite", refinedHeader, h)
	}
}

// TestMsearchSubAnswersRefinedTogether sends a multi-search of two
// sub-searches whose pages winnow must fetch, from a page server that
// answers one sub-search's pages only once the other's have been asked
// for. Refined one after the other, the first sub-answer's pages would
// wait past the budget and stay unsigned; refined together, both
// sub-answers group their two copies of one page.
func TestMsearchSubAnswersRefinedTogether(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, page := get(t, d.URL()+"/pages/22/PDB/HashTable.html")
	if len(page) < 1000 {
		t.Fatalf("the demo's page: %d bytes", len(page))
	}
	asked := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	var once [2]sync.Once
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := 0
		if strings.HasPrefix(r.URL.Path, "/1/") {
			k = 1
		}
		once[k].Do(func() { close(asked[k]) })
		select {
		case <-asked[1-k]:
		case <-time.After(30 * time.Second):
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	defer pages.Close()
	subAnswer := func(k string) string {
		hit := func(id string) string {
			return `{"_index":"i","_id":"` + k + id + `","_score":1,"_source":{"url":"` + pages.URL + "/" + k + "/" + id + `.html"}}`
		}
		return `{"took":1,"hits":{"total":{"value":2,"relation":"eq"},"hits":[` + hit("a") + "," + hit("b") + `]},"status":200}`
	}
	eng := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"took":1,"responses":[`+subAnswer("0")+","+subAnswer("1")+`]}`)
	}))
	defer eng.Close()
	_, base := startProxy(t, Options{Engines: []Engine{{Name: "es", URL: eng.URL, Adapter: engine.Config{Kind: "elasticsearch"}}},
		Budget: 5 * time.Second})
	resp, err := http.Post(base+"/_msearch", "application/x-ndjson", strings.NewReader("{}\n{\"size\":2}\n{}\n{\"size\":2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var ms struct {
		Responses []struct {
			Hits struct {
				Hits []map[string]json.RawMessage `json:"hits"`
			} `json:"hits"`
		} `json:"responses"`
	}
	if err := json.Unmarshal(b, &ms); err != nil || resp.StatusCode != 200 || len(ms.Responses) != 2 {
		t.Fatalf("%d %v %s", resp.StatusCode, err, b)
	}
	for i, sub := range ms.Responses {
		if len(sub.Hits.Hits) != 1 || sub.Hits.Hits[0]["inner_hits"] == nil {
			t.Errorf("sub-answer %d: %d hits at the top (%s); want the two copies of the page in one group", i, len(sub.Hits.Hits), b)
		}
	}
}
