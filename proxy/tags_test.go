package proxy

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/indextag"
	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/internal/realengine"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/similarity"
)

// TestTaggedIndex puts the proxy in front of a real index that winnow
// index tagged. The pages' addresses lead nowhere, so nothing can be
// fetched: the hits are grouped by their tags alone, as winnow dedup
// groups the pages, without a fetch or a signature. An untagged copy of a
// page added afterwards takes today's path (signed from the html field
// its hit carries) and joins its original's group.
func TestTaggedIndex(t *testing.T) {
	for _, kind := range realengine.Kinds {
		t.Run(kind, func(t *testing.T) {
			base := strings.TrimSuffix(realengine.Start(t, kind), "/")
			solr := kind == "solr"
			docs, err := realengine.Sample("http://127.0.0.1:9") // the discard port: no page is served
			if err != nil {
				t.Fatal(err)
			}
			index := "proxy-tags-" + kind
			realengine.Load(t, kind, base, index, docs)
			tagIndex(t, base, index, kind)

			// The engine as the proxy sees it, and the search a client sends.
			engineURL, cfg, search := base, engine.Config{Kind: "elasticsearch", Path: "/" + index + "/_search"}, "/"+index+"/_search?q=*:*&size=60"
			if solr {
				engineURL = strings.TrimSuffix(base, "/solr")
				cfg = engine.Config{Kind: "solr", Path: "/solr/" + index + "/select"}
				search = "/solr/" + index + "/select?q=*:*&rows=60&wt=json"
			}
			// The answers carry each page's stored text (Solr's near 1 MB):
			// a cache of 64 MiB keeps entries up to 4 MiB.
			s, proxyURL := startProxy(t, Options{Engines: []Engine{{Name: kind, URL: engineURL, Adapter: cfg, Timeout: 5 * time.Second}},
				Budget: 2 * time.Second, TopK: 100, AnswerCacheBytes: 64 << 20})
			groups := groupedAnswer(t, proxyURL+search, solr)
			got := s.Stats().Signatures
			if got.Fetched != 0 || got.Text != 0 || got.Service == 0 {
				t.Errorf("signatures %+v: want every grouped hit from its tags, none fetched or signed", got)
			}
			tags := storedGroups(t, base, index, solr)
			if len(groups) != distinct(tags) {
				t.Errorf("%d groups in the answer, the index holds %d", len(groups), distinct(tags))
			}
			for winner, members := range groups {
				for _, m := range members {
					if tags[m] != tags[winner] {
						t.Errorf("%s grouped under %s: tags %s and %s", m, winner, tags[m], tags[winner])
					}
				}
			}
			// The same search again: a tag-grouped answer depends on its
			// bytes alone, so from its second sighting on it is served
			// from the answer cache, grouped as before (the engine's took
			// or QTime may differ between the answers).
			for range 2 {
				again := groupedAnswer(t, proxyURL+search, solr)
				if !maps.EqualFunc(again, groups, slices.Equal) {
					t.Errorf("the same search grouped anew: %v, first %v", again, groups)
				}
			}
			if hits := s.memo.answers.hits.Load(); hits == 0 {
				t.Errorf("answer cache hits = 0 after three identical searches; want the tagged answer served from it")
			}

			// An untagged copy of a page: the online path signs it from
			// its html and groups it with the tagged original.
			const original = "sample://llvm/13/FaultMaps"
			var html string
			for _, d := range docs {
				if d.ID == original {
					html = d.HTML
				}
			}
			copyDoc := map[string]any{"id": "copy", "url": "http://127.0.0.1:9/copy.html", "html": html}
			if solr {
				b, _ := json.Marshal([]any{copyDoc})
				realengine.Do(t, "POST", base+"/"+index+"/update?commit=true", "application/json", b)
			} else {
				b, _ := json.Marshal(copyDoc)
				realengine.Do(t, "PUT", base+"/"+index+"/_doc/copy?refresh=true", "application/json", b)
			}
			cfg.Fields.Text = "html"
			s2, proxyURL := startProxy(t, Options{Engines: []Engine{{Name: kind, URL: engineURL, Adapter: cfg, Timeout: 5 * time.Second}},
				Budget: 2 * time.Second, TopK: 100})
			groups = groupedAnswer(t, proxyURL+search, solr)
			if got := s2.Stats().Signatures; got.Text == 0 || got.Fetched != 0 {
				t.Errorf("with the copy: signatures %+v; want the untagged list signed from the hits' html", got)
			}
			found := false
			for winner, members := range groups {
				for _, m := range members {
					if m == "copy" && tags[winner] == tags[original] {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("the untagged copy is not grouped with %s's group: %v", original, groups)
			}
		})
	}
}

// tagIndex runs winnow index -apply on the index.
func tagIndex(t *testing.T, base, index, kind string) {
	t.Helper()
	// The default configuration's settings, built without package options
	// (which imports proxy): winnow index as it runs by default.
	decide := func(p similarity.Purpose) similarity.Decision {
		d, err := similarity.NewDecision(p, similarity.DecisionSpec{Method: "default"}, similarity.DecisionFields{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	group, remove := decide(similarity.PurposeGroup), decide(similarity.PurposeRemove)
	rank := offline.NewRanking(cluster.WinnerRules{})
	signer := page.Signer{Canon: canon.Options{Content: canon.ContentMain}, Signature: similarity.Options{}.WithDefaults()}
	target, err := indextag.ParseTarget(base+"/"+index, kind)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := indextag.Run(context.Background(), indextag.Options{Target: target, Signer: signer, Group: group, Remove: remove,
		Rank: rank, Apply: true})
	if err != nil || rep.Clusters == 0 {
		t.Fatalf("winnow index: %v, %d clusters", err, rep.Clusters)
	}
}

// groupedAnswer asks the proxy and returns the answer's groups: each
// top-level hit's ID with the IDs nested under it (Elasticsearch:
// inner_hits.winnow; Solr: the expanded section).
func groupedAnswer(t *testing.T, u string, solr bool) map[string][]string {
	t.Helper()
	code, body := get(t, u)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", u, code, body)
	}
	groups := map[string][]string{}
	if solr {
		type docs struct {
			Docs []struct {
				ID string `json:"id"`
			} `json:"docs"`
		}
		var r struct {
			Response docs            `json:"response"`
			Expanded map[string]docs `json:"expanded"`
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("answer: %v: %.300s", err, body)
		}
		for _, d := range r.Response.Docs {
			groups[d.ID] = nil
			for _, x := range r.Expanded[d.ID].Docs {
				groups[d.ID] = append(groups[d.ID], x.ID)
			}
		}
		return groups
	}
	var r struct {
		Hits struct {
			Hits []struct {
				ID        string `json:"_id"`
				InnerHits struct {
					Winnow struct {
						Hits struct {
							Hits []struct {
								ID string `json:"_id"`
							} `json:"hits"`
						} `json:"hits"`
					} `json:"winnow"`
				} `json:"inner_hits"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("answer: %v: %.300s", err, body)
	}
	for _, h := range r.Hits.Hits {
		groups[h.ID] = nil
		for _, d := range h.InnerHits.Winnow.Hits.Hits {
			groups[h.ID] = append(groups[h.ID], d.ID)
		}
	}
	return groups
}

// storedGroups reads every document's winnow_group.
func storedGroups(t *testing.T, base, index string, solr bool) map[string]string {
	t.Helper()
	m := map[string]string{}
	if solr {
		var r struct {
			Response struct {
				Docs []struct {
					ID    string `json:"id"`
					Group string `json:"winnow_group"`
				} `json:"docs"`
			} `json:"response"`
		}
		if err := json.Unmarshal(realengine.Do(t, "GET", base+"/"+index+"/select?q=*:*&rows=1000&fl=id,winnow_group&wt=json", "", nil), &r); err != nil {
			t.Fatal(err)
		}
		for _, d := range r.Response.Docs {
			m[d.ID] = d.Group
		}
		return m
	}
	b := realengine.Do(t, "POST", base+"/"+index+"/_search", "application/json",
		[]byte(`{"size":1000,"_source":["winnow_group"],"query":{"match_all":{}}}`))
	var r struct {
		Hits struct {
			Hits []struct {
				ID     string `json:"_id"`
				Source struct {
					Group string `json:"winnow_group"`
				} `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	for _, h := range r.Hits.Hits {
		m[h.ID] = h.Source.Group
	}
	return m
}

func distinct(m map[string]string) int {
	seen := map[string]bool{}
	for _, v := range m {
		seen[v] = true
	}
	return len(seen)
}

// TestTaggedAloneMarked: on a list whose every hit is tagged, a page
// alone in its group is marked a cluster of its own (as a signed page
// alone is), and a group's members are marked under the tagged winner,
// with nothing fetched (the addresses lead nowhere).
func TestTaggedAloneMarked(t *testing.T) {
	d := startDemo(t, demo.Options{})
	s, _ := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}})
	results := []engine.Result{
		{URL: "http://127.0.0.1:9/a", Group: "00000000000000aa"},
		{URL: "http://127.0.0.1:9/b", Group: "00000000000000bb"},
		{URL: "http://127.0.0.1:9/c", Group: "00000000000000bb", GroupWinner: true},
	}
	ref := s.ref.refine(context.Background(), results, s.refineOptions())
	want := []engine.Mark{
		{Cluster: "00000000000000aa", Winner: 0},
		{Cluster: "00000000000000bb", Winner: 2, Relation: "duplicate"},
		{Cluster: "00000000000000bb", Winner: 2},
	}
	for i, w := range want {
		m := ref.marks[i]
		if m.Cluster != w.Cluster || m.Winner != w.Winner || m.Relation != w.Relation {
			t.Errorf("mark %d = cluster %q winner %d relation %q, want %q %d %q", i, m.Cluster, m.Winner, m.Relation, w.Cluster, w.Winner, w.Relation)
		}
	}
	if ref.fetched != 0 || ref.service != len(results) {
		t.Errorf("fetched %d, grouped by tags %d of %d", ref.fetched, ref.service, len(results))
	}
}
