package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/winnow-search/winnow/proxy/engine"
)

// TestMsearchPerSubAnswer: each sub-search of an _msearch is rewritten
// as a single search would be (from and size over-fetched), and a
// sub-answer winnow cannot refine says so in a "winnow" member of its
// own, the others refined; the answer is marked partial, and an
// _msearch body that is not header and body pairs passes unrefined.
func TestMsearchPerSubAnswer(t *testing.T) {
	var mu sync.Mutex
	var got []string
	eng := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"took":1,"responses":[`+
			`{"took":1,"hits":{"total":{"value":2,"relation":"eq"},"hits":[{"_index":"i","_id":"1","_score":1,"_source":{"url":"http://127.0.0.1:9/1","title":"a"}},{"_index":"i","_id":"2","_score":1,"_source":{"url":"http://127.0.0.1:9/2","title":"b"}}]},"status":200},`+
			`{"hits":{"total":3,"hits":"not a list"},"status":200},`+
			`{"error":{"type":"index_not_found_exception","reason":"no such index"},"status":404}]}`)
	}))
	defer eng.Close()
	_, base := startProxy(t, Options{Engines: []Engine{{Name: "es", URL: eng.URL, Adapter: engine.Config{Kind: "elasticsearch"}}}})
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
	mu.Lock()
	sent := got[0]
	mu.Unlock()
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
