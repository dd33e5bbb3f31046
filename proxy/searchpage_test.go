package proxy

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/proxy/engine"
)

// TestSearchPageAsUsed checks the search page as a person uses it: the
// front page for a plain GET /, the mode selector, the user's ranks,
// highlighted snippets, the "why grouped?" view and the page past the
// last.
func TestSearchPageAsUsed(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{
		esEngine(d.URL()),
		{Name: "searx", URL: d.URL(), Adapter: engine.Config{Kind: "searxng", Path: "/searxng/search"}},
	}, Budget: 3 * time.Second})

	t.Run("GET / without Accept", func(t *testing.T) {
		for _, accept := range []string{"", "*/*", "text/html,application/xhtml+xml"} {
			if _, body := get(t, base+"/", "Accept", accept); !strings.Contains(body, `<form id="search"`) {
				t.Errorf("GET / with Accept %q: not the search page:\n%.300s", accept, body)
			}
		}
		if _, body := get(t, base+"/", "Accept", "application/json"); strings.Contains(body, `<form id="search"`) {
			t.Errorf("GET / asking for JSON got the search page, want the engine's root")
		}
	})

	type item struct {
		URL, Title, Snippet, Explain string
		Rank                         int
		Scores                       []struct{ Name, Value, Threshold string }
	}
	var page struct {
		Mode   string
		Groups []struct {
			Result     item
			Duplicates []item
		}
	}
	search := func(query string) {
		t.Helper()
		code, body := get(t, base+"/_winnow/search.json?"+query)
		if code != 200 {
			t.Fatalf("%s: %d %s", query, code, body)
		}
		page.Groups = nil
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("mode selector", func(t *testing.T) {
		search("q=benchmark&mode=remove")
		if page.Mode != "remove" {
			t.Errorf("mode=remove: the page is in mode %q", page.Mode)
		}
		for _, g := range page.Groups {
			for _, dup := range g.Duplicates {
				// Only a near-duplicate the content-equivalence decision
				// did not accept stays, saying so.
				if !strings.HasPrefix(dup.Explain, "kept: ") {
					t.Errorf("mode=remove shows duplicate %s under %s: %q", dup.URL, g.Result.URL, dup.Explain)
				}
			}
		}
		if code, body := get(t, base+"/_winnow/search?q=x&mode=sideways"); code != 400 || !strings.Contains(body, "mode") {
			t.Errorf("mode=sideways: %d %s, want 400 naming it", code, body)
		}
	})

	t.Run("ranks and why grouped", func(t *testing.T) {
		search("q=benchmark")
		dups := 0
		for k, g := range page.Groups {
			if g.Result.Rank != k+1 {
				t.Errorf("group %d shows rank %d, want the user's %d", k, g.Result.Rank, k+1)
			}
			for _, d := range g.Duplicates {
				dups++
				if d.Rank != 0 {
					t.Errorf("similar result %s shows rank %d, outside the user's list", d.URL, d.Rank)
				}
				for _, s := range d.Scores {
					// The threshold in the table is the one the
					// summary line names.
					if s.Threshold != "" && !strings.Contains(d.Explain, s.Value+" "+s.Threshold) {
						t.Errorf("%s: table row %s %s %s is not in the summary %q", d.URL, s.Name, s.Value, s.Threshold, d.Explain)
					}
					if s.Name == "simhash" && strings.Contains(s.Value, ".") {
						t.Errorf("simhash distance %q printed as a fraction", s.Value)
					}
				}
			}
		}
		if dups == 0 {
			t.Fatal("no grouped results for benchmark")
		}
		_, html := get(t, base+"/?q=benchmark", "Accept", "text/html")
		if !strings.Contains(html, `<mark>`) {
			t.Errorf("snippets lost the engine's highlighting")
		}
		if !strings.Contains(html, `<span class="explain-url">http`) {
			t.Errorf("why grouped? does not name pages by URL")
		}
	})

	t.Run("past the last page", func(t *testing.T) {
		_, html := get(t, base+"/?q=benchmark&page=40", "Accept", "text/html")
		if !strings.Contains(html, "No more results") || !strings.Contains(html, `rel="prev"`) {
			t.Errorf("page 40: no \"no more results\" with a way back")
		}
	})
}

// TestSearchPageSearXNGPages pages a metasearch over a SearXNG engine
// alone. SearXNG answers a page of about ten results, whatever it is
// asked, so a metasearch deeper than its first page must ask it for its
// next pages: asked only pageno=1, the second page of ten was empty.
// The llvm search's 53 results are 25 once duplicates are removed: two
// full pages and a third of five.
func TestSearchPageSearXNGPages(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{
		{Name: "searx", URL: d.URL(), Adapter: engine.Config{Kind: "searxng", Path: "/searxng/search"}},
	}, Budget: 3 * time.Second})
	var page struct {
		Groups []struct {
			Result struct{ URL string }
		}
		Engines []struct {
			Name    string
			Results int
			Err     string
		}
	}
	seen := map[string]int{}
	for pg := 1; pg <= 3; pg++ {
		code, body := get(t, base+"/_winnow/search.json?q=llvm&mode=remove&page="+strconv.Itoa(pg))
		if code != 200 {
			t.Fatalf("page %d: %d %s", pg, code, body)
		}
		page.Groups, page.Engines = nil, nil
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatal(err)
		}
		if want := 10; len(page.Groups) != want && (pg < 3 || len(page.Groups) == 0) {
			t.Errorf("page %d: %d results, want %d (the demo's SearXNG has %d for llvm); engines %+v", pg, len(page.Groups), want, demoSearXNGTotal(t, d.URL(), "llvm"), page.Engines)
		}
		if len(page.Engines) != 1 || page.Engines[0].Err != "" || page.Engines[0].Results <= demo.SearXNGPageSize {
			t.Errorf("page %d: engines %+v, want SearXNG's results beyond its first page of %d", pg, page.Engines, demo.SearXNGPageSize)
		}
		for _, g := range page.Groups {
			if p, ok := seen[g.Result.URL]; ok {
				t.Errorf("%s on page %d and page %d", g.Result.URL, p, pg)
			}
			seen[g.Result.URL] = pg
		}
	}
}

// demoSearXNGTotal is the number_of_results the demo's SearXNG gives q.
func demoSearXNGTotal(t *testing.T, demoURL, q string) int {
	t.Helper()
	_, body := get(t, demoURL+"/searxng/search?format=json&q="+url.QueryEscape(q))
	var a struct {
		N int `json:"number_of_results"`
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatal(err)
	}
	return a.N
}
