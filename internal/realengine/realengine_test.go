package realengine

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/corpus/sample"
)

// sampleDocs is the demo's pages, checked.
func sampleDocs(t *testing.T) []Doc {
	t.Helper()
	docs, err := Sample("http://127.0.0.1:8081")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != sample.Count {
		t.Fatalf("Sample: %d documents, want %d", len(docs), sample.Count)
	}
	return docs
}

// wantPage is the sorted IDs of page's releases in docs: for FaultMaps,
// the documents a search for "fault maps" has to find.
func wantPage(docs []Doc, page string) []string {
	var ids []string
	for _, d := range docs {
		if d.Page == page {
			ids = append(ids, d.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

func TestSample(t *testing.T) {
	docs := sampleDocs(t)
	for _, d := range docs {
		if d.Title == "" || d.Body == "" || d.HTML == "" || d.Page == "" || !strings.HasPrefix(d.URL, "http://127.0.0.1:8081/pages/") {
			t.Errorf("%s: a field is empty or URL %q is not on the demo engine", d.ID, d.URL)
		}
	}
	if got := wantPage(docs, "FaultMaps"); len(got) < 3 {
		t.Errorf("FaultMaps in %d releases, want at least 3 (a near-duplicate cluster)", len(got))
	}
}

// TestEngines starts each real engine, loads the demo's pages, and checks
// that a real query finds the documents of one page (every release of
// FaultMaps), that collapsing on the page keyword leaves one hit per
// page, and that the count and definition read back.
func TestEngines(t *testing.T) {
	docs := sampleDocs(t)
	want := wantPage(docs, "FaultMaps")
	for _, kind := range Kinds {
		t.Run(kind, func(t *testing.T) {
			base := Start(t, kind)
			const index = "realengine_test"
			Load(t, kind, base, index, docs)
			if n := DocCount(t, kind, base, index); n != len(docs) {
				t.Fatalf("DocCount = %d, want %d", n, len(docs))
			}
			def := Definition(t, kind, base, index)
			if !strings.Contains(string(def), "winnow_group") {
				t.Errorf("Definition lacks winnow_group: %.300s", def)
			}
			if again := Definition(t, kind, base, index); string(again) != string(def) {
				t.Errorf("Definition changed between two reads with nothing in between")
			}

			hits := search(t, kind, base, index, "stackmap fault maps", false)
			var got []string
			for _, h := range hits {
				if h.page == "FaultMaps" {
					got = append(got, h.id)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("search found FaultMaps pages %q, want %q", got, want)
			}
			if len(hits) == 0 || hits[0].page != "FaultMaps" {
				t.Errorf("top hit %+v, want a FaultMaps page", hits[:min(1, len(hits))])
			}

			collapsed := search(t, kind, base, index, "stackmap fault maps", true)
			seen := map[string]bool{}
			for _, h := range collapsed {
				if seen[h.page] {
					t.Errorf("collapse on page returned page %s twice", h.page)
				}
				seen[h.page] = true
			}
			if !seen["FaultMaps"] || len(collapsed) >= len(hits) {
				t.Errorf("collapse: %d hits (pages %v) against %d without; want one FaultMaps and fewer hits", len(collapsed), keys(seen), len(hits))
			}
			if kind == "solr" {
				// The expand component returns the rest of each group.
				v := url.Values{"q": {"body:fault"}, "fq": {"{!collapse field=page}"}, "expand": {"true"}, "expand.rows": {"10"}, "rows": {"50"}, "fl": {"id"}}
				var r struct {
					Expanded map[string]struct{ NumFound int } `json:"expanded"`
				}
				decode(t, Do(t, http.MethodGet, base+"/"+index+"/select?"+v.Encode(), "", nil), &r)
				if n := r.Expanded["FaultMaps"].NumFound; n != len(want)-1 {
					t.Errorf("expand: FaultMaps group has %d more documents, want %d", n, len(want)-1)
				}
			}
		})
	}
}

type hit struct{ id, page string }

// search runs q over body and title on the engine itself (50 hits),
// collapsed on the page keyword when collapse is set.
func search(t *testing.T, kind, base, index, q string, collapse bool) []hit {
	t.Helper()
	var hits []hit
	switch kind {
	case "opensearch", "elasticsearch":
		req := map[string]any{
			"size":    50,
			"_source": []string{"id", "page"},
			"query":   map[string]any{"multi_match": map[string]any{"query": q, "fields": []string{"title^3", "body"}}},
		}
		if collapse {
			req["collapse"] = map[string]any{"field": "page"}
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Hits struct {
				Hits []struct {
					ID     string                `json:"_id"`
					Source struct{ Page string } `json:"_source"`
				} `json:"hits"`
			} `json:"hits"`
		}
		decode(t, Do(t, http.MethodPost, base+"/"+index+"/_search", "application/json", b), &r)
		for _, h := range r.Hits.Hits {
			hits = append(hits, hit{h.ID, h.Source.Page})
		}
	case "solr":
		v := url.Values{"q": {q}, "defType": {"edismax"}, "qf": {"title^3 body"}, "rows": {"50"}, "fl": {"id,page"}}
		if collapse {
			v.Set("fq", "{!collapse field=page}")
		}
		var r struct {
			Response struct {
				Docs []struct{ ID, Page string }
			} `json:"response"`
		}
		decode(t, Do(t, http.MethodGet, base+"/"+index+"/select?"+v.Encode(), "", nil), &r)
		for _, d := range r.Response.Docs {
			hits = append(hits, hit{d.ID, d.Page})
		}
	}
	return hits
}

func keys(m map[string]bool) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}
