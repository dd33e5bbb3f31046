package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/proxy/engine"
)

// canonicalPages serves on loopback an Elasticsearch answer and the pages
// it lists. The query q=plain lists /plain/13, /plain/14 and
// /plain/other: the Benchmarking page of LLVM 13 and 14 (near-duplicates)
// and the CodeReview page. q=declared lists the same pages under
// /declared/, where 13 (ranked first) declares 14 canonical with a
// relative href, 14 declares itself canonical, and other (unrelated
// content) declares 14 canonical too; q=header lists them under /header/
// with the same declarations in Link headers (rel="canonical").
func canonicalPages(t *testing.T) *httptest.Server {
	t.Helper()
	bodies := map[string]string{}
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		bodies[strings.TrimPrefix(d.ID, "sample://llvm/")] = string(d.Body)
	}
	page := map[string]string{"13": "13/Benchmarking", "14": "14/Benchmarking", "other": "13/CodeReview"}
	declares := map[string]string{"13": "14", "14": "14", "other": "/declared/14"}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/_search") {
			q := r.URL.Query().Get("q")
			w.Header().Set("Content-Type", "application/json")
			var hits []string
			for _, p := range []string{"13", "14", "other"} {
				hits = append(hits, fmt.Sprintf(`{"_id":"%s-%s","_source":{"url":"%s/%s/%s"}}`, q, p, srv.URL, q, p))
			}
			fmt.Fprintf(w, `{"took":1,"hits":{"total":{"value":3,"relation":"eq"},"hits":[%s]}}`, strings.Join(hits, ","))
			return
		}
		list, p, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		body, ok := bodies[page[p]]
		if !ok || (list != "plain" && list != "declared" && list != "header") {
			http.NotFound(w, r)
			return
		}
		switch list {
		case "declared":
			body = strings.Replace(body, "<head>", `<head><link rel="canonical" href="`+declares[p]+`">`, 1)
		case "header":
			w.Header().Add("Link", `<https://cdn.example/llvm.css>; rel=preload; as=style`)
			w.Header().Add("Link", "<"+strings.Replace(declares[p], "declared", "header", 1)+`>; rel="canonical"`)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// groupedHit is a hit of a group-mode answer with its nested duplicates.
type groupedHit struct {
	ID        string `json:"_id"`
	InnerHits struct {
		Winnow struct {
			Hits struct {
				Hits []struct {
					ID     string `json:"_id"`
					Winnow struct {
						Explain string `json:"explain"`
					} `json:"_winnow"`
				} `json:"hits"`
			} `json:"hits"`
		} `json:"winnow"`
	} `json:"inner_hits"`
	Winnow *struct {
		Explain string `json:"explain"`
	} `json:"_winnow"`
}

func groupedHits(t *testing.T, body string) []groupedHit {
	t.Helper()
	var a struct {
		Hits struct{ Hits []groupedHit } `json:"hits"`
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("answer is not Elasticsearch JSON: %v\n%s", err, body)
	}
	return a.Hits.Hits
}

// TestDeclaredCanonicalWins runs the proxy in group mode over two
// near-duplicate pages: the higher ranked one wins, unless it declares the
// lower ranked one canonical, which then wins and says why. A page that
// declares a page of other content canonical stays alone: declarations
// choose winners, they group nothing.
func TestDeclaredCanonicalWins(t *testing.T) {
	srv := canonicalPages(t)
	s, base := startProxy(t, Options{Engines: []Engine{esEngine(srv.URL)}, Budget: 5 * time.Second})

	// winners returns, for each hit shown, its ID and its duplicates'.
	winners := func(body string) map[string][]string {
		out := map[string][]string{}
		for _, h := range groupedHits(t, body) {
			out[h.ID] = nil
			for _, d := range h.InnerHits.Winnow.Hits.Hits {
				out[h.ID] = append(out[h.ID], d.ID)
			}
		}
		return out
	}
	_, body := get(t, base+"/llvm/_search?q=plain&size=3", "X-Winnow-Mode", "group")
	if got, want := winners(body), map[string][]string{"plain-13": {"plain-14"}, "plain-other": nil}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("without declarations: groups %v, want %v (the better ranked page wins)\n%s", got, want, body)
	}

	q := base + "/llvm/_search?q=declared&size=3"
	_, first := get(t, q, "X-Winnow-Mode", "group")
	if got, want := winners(first), map[string][]string{"declared-14": {"declared-13"}, "declared-other": nil}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("13 declares 14 canonical: groups %v, want %v\n%s", got, want, first)
	}
	// The group answer's duplicates carry their verdict, not the
	// sentence: that comes with winnow_explain.
	_, explained := get(t, q, "X-Winnow-Mode", "group", "X-Winnow-Explain", "1")
	wantNote := "winner: " + srv.URL + "/declared/13 declares it canonical"
	for _, c := range []struct {
		body string
		full bool
	}{{first, false}, {explained, true}} {
		for _, h := range groupedHits(t, c.body) {
			if h.ID != "declared-14" {
				continue
			}
			e := h.InnerHits.Winnow.Hits.Hits[0].Winnow.Explain
			if c.full && (!strings.HasPrefix(e, "duplicate: ") || !strings.HasSuffix(e, "; "+wantNote)) {
				t.Errorf("with winnow_explain, the duplicate's explanation %q does not end in %q", e, wantNote)
			}
			if !c.full && e != "" {
				t.Errorf("without winnow_explain, the duplicate's explanation is %q, want it left out", e)
			}
		}
	}

	// The cache keeps the declared URL, and not a page's own. Ristretto
	// applies sets through a buffer: wait for them first.
	s.ref.wait()
	s.cache.c.Wait()
	for p, want := range map[string]string{"13": srv.URL + "/declared/14", "14": "", "other": srv.URL + "/declared/14"} {
		key, _ := s.ref.keys.key(srv.URL + "/declared/" + p)
		switch e, ok := s.ref.cache.get(key); {
		case !ok:
			t.Errorf("no cache entry for %s", p)
		case e.canonical != want:
			t.Errorf("cache entry of %s: canonical %q, want %q", p, e.canonical, want)
		}
	}

	// Again from the cache (the full path on cached entries), then from
	// the remembered list: the same answer, byte for byte.
	for i := range 3 {
		if _, again := get(t, q, "X-Winnow-Mode", "group"); again != first {
			t.Errorf("query %d from the cache differs from the first:\n%s\nwant\n%s", i+2, again, first)
		}
	}
	_, annotated := get(t, q, "X-Winnow-Mode", "annotate")
	var a struct {
		Hits struct {
			Hits []struct {
				ID     string                           `json:"_id"`
				Winnow struct{ Winner, Explain string } `json:"_winnow"`
			}
		}
	}
	if err := json.Unmarshal([]byte(annotated), &a); err != nil {
		t.Fatal(err)
	}
	for _, h := range a.Hits.Hits {
		if h.ID == "declared-14" && h.Winnow.Explain != wantNote {
			t.Errorf("annotate: the winner explains %q, want %q", h.Winnow.Explain, wantNote)
		}
	}
}

// TestLinkHeaderCanonicalWins runs TestDeclaredCanonicalWins's pages with
// their canonical URLs declared in Link headers only, beside a preload
// link, as some servers and CMSs declare them: 13 declares 14 canonical,
// so 14 wins and says why.
func TestLinkHeaderCanonicalWins(t *testing.T) {
	srv := canonicalPages(t)
	s, base := startProxy(t, Options{Engines: []Engine{esEngine(srv.URL)}, Budget: 5 * time.Second})
	_, body := get(t, base+"/llvm/_search?q=header&size=3", "X-Winnow-Mode", "group", "X-Winnow-Explain", "1")
	var winner string
	for _, h := range groupedHits(t, body) {
		if len(h.InnerHits.Winnow.Hits.Hits) > 0 {
			winner = h.ID + " over " + h.InnerHits.Winnow.Hits.Hits[0].ID
			if e, note := h.InnerHits.Winnow.Hits.Hits[0].Winnow.Explain, "winner: "+srv.URL+"/header/13 declares it canonical"; !strings.HasSuffix(e, note) {
				t.Errorf("the duplicate's explanation %q does not end in %q", e, note)
			}
		}
	}
	if winner != "header-14 over header-13" {
		t.Fatalf("13 declares 14 canonical in its Link header: %q, want header-14 over header-13\n%s", winner, body)
	}
	s.ref.wait()
	s.cache.c.Wait()
	key, _ := s.ref.keys.key(srv.URL + "/header/other")
	if e, ok := s.ref.cache.get(key); !ok || e.canonical != srv.URL+"/header/14" {
		t.Errorf("cache entry of other: %+v, %v; want canonical %s/header/14", e, ok, srv.URL)
	}
}

// TestDeclaredCanonicalRememberedList checks that the remembered-list path
// gives exactly the marks of the full path for a list whose pages declare
// canonical URLs, with the list cache holding the clustering and without
// it, and that both paths compute one list key.
func TestDeclaredCanonicalRememberedList(t *testing.T) {
	srv := canonicalPages(t)
	s, base := startProxy(t, Options{Engines: []Engine{esEngine(srv.URL)}, Budget: 5 * time.Second})
	const path = "/llvm/_search?q=declared&size=3"
	get(t, base+path) // fetches and caches the pages
	s.ref.wait()
	s.cache.c.Wait() // ristretto applies sets through a buffer
	breq, _, err := s.transp.adapter.Rewrite(engine.Request{Method: "GET", Path: path}, s.o.Factor)
	if err != nil {
		t.Fatal(err)
	}
	_, body := get(t, srv.URL+breq.Path)
	p, err := s.transp.adapter.Parse([]byte(body), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	r, o, ctx := s.ref, s.refineOptions(), context.Background()
	r.hot = newHotLists(16) // forget the list the warm-up remembered
	r.lists = newListCache(16)

	full := r.refine(ctx, p.Results, o)
	if full.cached != 3 || full.hot == nil {
		t.Fatalf("full path: %d of 3 cached, remembered %v; want all, remembered", full.cached, full.hot != nil)
	}
	if w := full.marks[0].Winner; w != 1 || full.marks[1].Winner != 1 || full.marks[2].Winner != 2 {
		t.Fatalf("full path marks %+v: want result 1 (declared canonical by 0) winning 0, result 2 alone", full.marks)
	}
	if !strings.HasSuffix(full.marks[0].Explain, "declares it canonical") {
		t.Errorf("the duplicate's mark %q does not say why its winner won", full.marks[0].Explain)
	}

	remembered := r.refine(ctx, p.Results, o)
	if remembered.hot != full.hot || remembered.declared != nil {
		t.Fatal("the second refine did not take the remembered list")
	}
	if !slices.Equal(remembered.marks, full.marks) {
		t.Errorf("remembered list, list cached: marks %+v, want the full path's %+v", remembered.marks, full.marks)
	}

	// Without the list cache the remembered list clusters again, with the
	// winners it remembered.
	r.lists = newListCache(16)
	reclustered := r.refine(ctx, p.Results, o)
	if reclustered.hot != full.hot || !slices.Equal(reclustered.marks, full.marks) {
		t.Errorf("remembered list, clustered again: marks %+v, want the full path's %+v", reclustered.marks, full.marks)
	}
	// The full path finds that clustering under the key the remembered
	// list put it: one key on both paths.
	r.hot = newHotLists(16)
	again := r.refine(ctx, p.Results, o)
	if &again.clusters[0] != &reclustered.clusters[0] {
		t.Error("the full path computes another list key than the remembered list")
	}
	if !slices.Equal(again.marks, full.marks) {
		t.Errorf("full path again: marks %+v, want %+v", again.marks, full.marks)
	}
	// The declarations are part of the key: the same list without them
	// is another list.
	ids := make([]uint64, 3)
	for i, sg := range full.sigs {
		ids[i] = sigID(sg)
	}
	if r.lists.key(full.keys, ids, nil, nil) == full.hot.listKey {
		t.Error("the list key ignores the declared canonical URLs")
	}
	r.wait()
}

func TestDeclaredWinners(t *testing.T) {
	keys := []string{"a", "b", "c", "d"}
	tests := []struct {
		name     string
		declared []string
		service  []bool
		winners  []bool
		by       []int
	}{
		{"none", []string{"", "", "", ""}, nil, nil, nil},
		{"none, service winners kept", []string{"", "", "", ""}, []bool{false, true}, []bool{false, true}, nil},
		{"declared", []string{"c", "", "", ""}, nil, []bool{false, false, true, false}, []int{-1, -1, 0, -1}},
		{"itself", []string{"a", "", "", ""}, nil, nil, nil},
		{"not in the list", []string{"x", "", "", ""}, nil, nil, nil},
		{"best ranked declarer", []string{"", "d", "", "d"}, nil, []bool{false, false, false, true}, []int{-1, -1, -1, 1}},
		{"each other", []string{"b", "a", "", ""}, nil, []bool{true, true, false, false}, []int{1, 0, -1, -1}},
		{"with service winners", []string{"", "", "b", ""}, []bool{true}, []bool{true, true, false, false}, []int{-1, 2, -1, -1}},
	}
	for _, tt := range tests {
		winners, by := declaredWinners(keys, tt.declared, tt.service)
		if !slices.Equal(winners, tt.winners) || !slices.Equal(by, tt.by) || (by == nil) != (tt.by == nil) {
			t.Errorf("%s: declaredWinners = %v, %v; want %v, %v", tt.name, winners, by, tt.winners, tt.by)
		}
	}
}
