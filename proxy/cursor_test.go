package proxy

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/proxy/engine"
)

// cursorDocs are the documents of the cursor engine: n pages of text,
// every fifth the copy of the one before it under another URL.
func cursorDocs(n int) []map[string]any {
	rng := rand.New(rand.NewPCG(7, 11))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx%d", i, rng.IntN(1000))
	}
	docs := make([]map[string]any, n)
	for i := range docs {
		var text string
		if i%5 == 4 {
			text = docs[i-1]["text"].(string)
		} else {
			words := make([]string, 250)
			for j := range words {
				words[j] = vocab[rng.IntN(len(vocab))]
			}
			text = strings.Join(words, " ")
		}
		docs[i] = map[string]any{"url": fmt.Sprintf("http://127.0.0.1:1/doc%d", i), "title": fmt.Sprint("Doc ", i), "text": text}
	}
	return docs
}

// startCursorEngine serves docs as Elasticsearch does through its
// cursors: a scroll (first page with ?scroll=, then /_search/scroll by
// body or path), a point in time with search_after, and their clearing.
// Each page holds the size the request asked for; sort keys are the
// documents' positions.
func startCursorEngine(t *testing.T, docs []map[string]any) *httptest.Server {
	page := func(w http.ResponseWriter, from, size int, scrollID string) {
		var hits []map[string]any
		for i := from; i < min(from+size, len(docs)); i++ {
			hits = append(hits, map[string]any{"_index": "idx", "_id": strconv.Itoa(i), "_score": 1.0 / float64(i+1), "_source": docs[i], "sort": []int{i}})
		}
		ans := map[string]any{"took": 1, "timed_out": false,
			"hits": map[string]any{"total": map[string]any{"value": len(docs), "relation": "eq"}, "max_score": 1.0, "hits": hits}}
		if scrollID != "" {
			ans["_scroll_id"] = scrollID
		}
		if hits == nil {
			ans["hits"].(map[string]any)["hits"] = []any{}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		json.NewEncoder(w).Encode(ans)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct {
			Size        *int   `json:"size"`
			ScrollID    string `json:"scroll_id"`
			SearchAfter []int  `json:"search_after"`
			PIT         *struct {
				ID string `json:"id"`
			} `json:"pit"`
		}
		if len(b) > 0 {
			if err := json.Unmarshal(b, &body); err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
		}
		size := 10
		if body.Size != nil {
			size = *body.Size
		}
		if s := r.URL.Query().Get("size"); s != "" {
			size, _ = strconv.Atoi(s)
		}
		// A scroll ID is "size:next".
		scrollPage := func(id string) {
			sz, next, _ := strings.Cut(id, "-")
			n, _ := strconv.Atoi(sz)
			from, _ := strconv.Atoi(next)
			page(w, from, n, fmt.Sprintf("%d-%d", n, from+n))
		}
		switch {
		case r.Method == "DELETE" && body.ScrollID == "":
			http.Error(w, "no scroll_id", 400)
		case r.Method == "DELETE":
			io.WriteString(w, `{"succeeded":true,"num_freed":1}`)
		case r.URL.Path == "/idx/_pit":
			io.WriteString(w, `{"id":"pit-1"}`)
		case r.URL.Path == "/_search/scroll":
			scrollPage(body.ScrollID)
		case strings.HasPrefix(r.URL.Path, "/_search/scroll/"):
			scrollPage(strings.TrimPrefix(r.URL.Path, "/_search/scroll/"))
		case r.URL.Query().Has("scroll"):
			page(w, 0, size, fmt.Sprintf("%d-%d", size, size))
		case body.PIT != nil && body.PIT.ID != "pit-1":
			http.Error(w, "no such point in time: "+body.PIT.ID, 404)
		case body.PIT != nil:
			from := 0
			if len(body.SearchAfter) == 1 {
				from = body.SearchAfter[0] + 1
			}
			page(w, from, size, "")
		default:
			http.Error(w, "not a cursor request: "+r.URL.RequestURI(), 400)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCursorPagingEveryResultOnce pages through a scroll (by body and
// by path) and a point in time with search_after, in every mode: each
// result of the engine comes back exactly once, as a hit or a grouped
// duplicate, or is counted as removed (X-Winnow-Removed); none is
// skipped or repeated, and hits.total is the engine's on every page.
func TestCursorPagingEveryResultOnce(t *testing.T) {
	docs := cursorDocs(23)
	srv := startCursorEngine(t, docs)
	e := Engine{Name: "es", URL: srv.URL, Adapter: engine.Config{Kind: "elasticsearch", TextField: "text"}}
	_, base := startProxy(t, Options{Engines: []Engine{e}})
	post := func(method, path, body, mode string) (esAnswerPage, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Winnow-Mode", mode)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var pg esAnswerPage
		if resp.StatusCode != 200 || json.Unmarshal(b, &pg) != nil {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return pg, resp.Header
	}
	for _, mode := range []string{"group", "remove", "annotate", "off"} {
		for _, how := range []string{"scroll-body", "scroll-path", "pit"} {
			t.Run(mode+"/"+how, func(t *testing.T) {
				seen := map[string]int{}
				removed, grouped, pages := 0, 0, 0
				pg, h := post("POST", "/idx/_search?scroll=1m", `{"size":4}`, mode)
				var pit string // as the client sees it: sealed
				if how == "pit" {
					pit = openPIT(t, base+"/idx/_pit?keep_alive=1m")
					pg, h = post("POST", "/_search", `{"size":4,"pit":{"id":"`+pit+`"},"sort":[{"_shard_doc":"asc"}]}`, mode)
				}
				lastScroll := pg.ScrollID
				for len(pg.Hits.Hits) > 0 && pages < 20 {
					pages++
					if pg.Hits.Total.Value != len(docs) || pg.Hits.Total.Relation != "eq" {
						t.Errorf("page %d: total %+v, want the engine's %d eq", pages, pg.Hits.Total, len(docs))
					}
					last := 0
					for _, hit := range pg.Hits.Hits {
						seen[hit.ID]++
						for _, d := range hit.InnerHits["winnow"].Hits.Hits {
							seen[d.ID]++
							grouped++
						}
						if len(hit.Sort) == 1 {
							last = max(last, int(hit.Sort[0].(float64)))
						}
					}
					if mode == "remove" {
						n, err := strconv.Atoi(h.Get("X-Winnow-Removed"))
						if err != nil {
							t.Fatalf("page %d: X-Winnow-Removed %q", pages, h.Get("X-Winnow-Removed"))
						}
						removed += n
					}
					switch how {
					case "scroll-body":
						pg, h = post("POST", "/_search/scroll", `{"scroll":"1m","scroll_id":"`+pg.ScrollID+`"}`, mode)
					case "scroll-path":
						pg, h = post("GET", "/_search/scroll/"+pg.ScrollID+"?scroll=1m", "", mode)
					case "pit":
						pg, h = post("POST", "/_search", fmt.Sprintf(`{"size":4,"pit":{"id":%q},"sort":[{"_shard_doc":"asc"}],"search_after":[%d]}`, pit, last), mode)
					}
					lastScroll = cmp.Or(pg.ScrollID, lastScroll)
				}
				for i := range docs {
					if n := seen[strconv.Itoa(i)]; n > 1 {
						t.Errorf("doc %d came back %d times", i, n)
					}
				}
				if got := len(seen) + removed; got != len(docs) {
					t.Errorf("%d results shown and %d removed, want the engine's %d each once", len(seen), removed, len(docs))
				}
				if mode == "group" && grouped == 0 || mode == "remove" && removed == 0 {
					t.Errorf("%s: %d grouped, %d removed: the duplicates were not found, the test proves little", mode, grouped, removed)
				}
				if how == "scroll-body" {
					if _, h := post("DELETE", "/_search/scroll", `{"scroll_id":"`+lastScroll+`"}`, mode); h.Get(refinedHeader) != "" {
						t.Errorf("clear scroll marked %s %q", refinedHeader, h.Get(refinedHeader))
					}
				}
			})
		}
	}
}

// TestTotalIsTheEngines checks that hits.total means one thing whatever
// the page size and the mode: the engine's own total, the documents
// matching, duplicates included; and that a first page of a query that
// matches holds hits in every mode.
func TestTotalIsTheEngines(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 3 * time.Second})
	const q = "/llvm/_search?q=benchmark+tips+code+review"
	for _, size := range []int{1, 3, 10} {
		_, raw := get(t, d.URL()+q+"&size="+strconv.Itoa(size))
		want := decodeES(t, raw).Hits.Total
		if want.Value == 0 {
			t.Fatalf("the demo matches nothing for %s: the test proves nothing", q)
		}
		for _, mode := range clientModes {
			code, body := get(t, base+q+"&size="+strconv.Itoa(size), "X-Winnow-Mode", mode)
			a := decodeES(t, body)
			if code != 200 || a.Hits.Total != want || len(a.Hits.Hits) == 0 {
				t.Errorf("size=%d %s: %d, total %+v, %d hits; want the engine's %+v and hits", size, mode, code, a.Hits.Total, len(a.Hits.Hits), want)
			}
		}
	}
}

// TestOversizedCursorPagePassesThrough: a scroll page larger than the
// bound on bytes in flight allows one answer (with a Content-Length, so
// none of it is read; chunked, so it is read up to the bound) is relayed
// unrefined and whole, the bytes read and then the rest of the stream,
// marked X-Winnow-Refined: no; reason=budget, asked of the engine once;
// a working engine is never made a 502.
func TestOversizedCursorPagePassesThrough(t *testing.T) {
	const bound = 16 << 20
	var asked atomic.Int64
	eng := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		chunked := strings.Contains(r.URL.Path, "chunked")
		w.Header().Set("Content-Type", "application/json")
		if !chunked {
			_, n := answerSum(r.URL.RequestURI(), 20_000_000)
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		largeAnswer(w, r.URL.RequestURI(), 20_000_000)
	}))
	defer eng.Close()
	s, base := startProxy(t, Options{Engines: []Engine{largeEngine(eng.URL)}, AnswerBytesInFlight: bound})
	for _, path := range []string{
		"/big/_search?scroll=1m&size=3",
		"/big-chunked/_search?scroll=1m&size=3",
		"/_search/scroll?scroll=1m&scroll_id=" + sealed("chunked"),
	} {
		before := asked.Load()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, resp.Body)
		resp.Body.Close()
		want, _ := answerSum(strings.Replace(path, sealed("chunked"), "chunked", 1), 20_000_000)
		if err != nil || resp.StatusCode != 200 || [32]byte(h.Sum(nil)) != want {
			t.Errorf("GET %s: %d, %v, the engine's answer byte for byte: %v; want 200 and the engine's answer", path, resp.StatusCode, err, [32]byte(h.Sum(nil)) == want)
		}
		if got := resp.Header.Get(refinedHeader); got != "no; reason=budget" {
			t.Errorf("GET %s: %s %q, want %q", path, refinedHeader, got, "no; reason=budget")
		}
		if n := asked.Load() - before; n != 1 {
			t.Errorf("GET %s: the engine was asked %d times, want once", path, n)
		}
	}
	if n := unrefinedOverBound(t, base); n != 3 {
		t.Errorf("winnow_answers_unrefined_total{reason=\"budget\"} = %d, want 3", n)
	}
	if n := settledUsed(s); n != 0 {
		t.Errorf("%d bytes still held after every answer", n)
	}
}
