package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/indextag"
	"github.com/winnow-search/winnow/internal/realengine"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/proxy/engine"
)

// TestTaggedIndex puts the proxy in front of a real index that winnow
// index tagged. The pages' addresses lead nowhere, so nothing can be
// fetched: the hits are grouped by their tags alone, as winnow dedup
// groups the pages, without a fetch or a signature. An untagged copy of a
// page added afterwards takes today's path (signed from the html field
// its hit carries) and joins its original's group.
func TestTaggedIndex(t *testing.T) {
	for _, kind := range []string{"opensearch", "elasticsearch"} {
		t.Run(kind, func(t *testing.T) {
			base := strings.TrimSuffix(realengine.Start(t, kind), "/")
			docs, err := realengine.Sample("http://127.0.0.1:9") // the discard port: no page is served
			if err != nil {
				t.Fatal(err)
			}
			index := "proxy-tags-" + kind
			realengine.Load(t, kind, base, index, docs)
			tagIndex(t, base, index, kind)

			s, proxyURL := startProxy(t, Options{Engines: []Engine{{Name: "es", URL: base,
				Adapter: engine.Config{Kind: "elasticsearch", Path: "/" + index + "/_search"}, Timeout: 5 * time.Second}},
				Budget: 2 * time.Second, TopK: 100})
			groups := groupedAnswer(t, proxyURL+"/"+index+"/_search?q=*:*&size=50")
			got := s.Stats().Signatures
			if got.Fetched != 0 || got.Text != 0 || got.Service == 0 {
				t.Errorf("signatures %+v: want every grouped hit from its tags, none fetched or signed", got)
			}
			tags := storedGroups(t, base, index)
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

			// An untagged copy of a page: the online path signs it from
			// its html and groups it with the tagged original.
			const original = "sample://llvm/13/FaultMaps"
			var html string
			for _, d := range docs {
				if d.ID == original {
					html = d.HTML
				}
			}
			b, _ := json.Marshal(map[string]any{"id": "copy", "url": "http://127.0.0.1:9/copy.html", "html": html})
			realengine.Do(t, "PUT", base+"/"+index+"/_doc/copy?refresh=true", "application/json", b)
			s2, proxyURL := startProxy(t, Options{Engines: []Engine{{Name: "es", URL: base,
				Adapter: engine.Config{Kind: "elasticsearch", Path: "/" + index + "/_search", Fields: engine.FieldPaths{Text: "html"}}, Timeout: 5 * time.Second}},
				Budget: 2 * time.Second, TopK: 100})
			groups = groupedAnswer(t, proxyURL+"/"+index+"/_search?q=*:*&size=60")
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
	c := config.Default()
	group, remove, err := offline.Decisions(c)
	if err != nil {
		t.Fatal(err)
	}
	rank, err := offline.Winners(c)
	if err != nil {
		t.Fatal(err)
	}
	target, err := indextag.ParseTarget(base+"/"+index, kind)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := indextag.Run(context.Background(), indextag.Options{Target: target, Signer: offline.Signer(c), Group: group, Remove: remove,
		Rank: rank, Fields: offline.CorpusOptions(c).Fields, Apply: true})
	if err != nil || rep.Clusters == 0 {
		t.Fatalf("winnow index: %v, %d clusters", err, rep.Clusters)
	}
}

// groupedAnswer asks the proxy and returns the answer's groups: each
// top-level hit's ID with the IDs nested under it (inner_hits.winnow).
func groupedAnswer(t *testing.T, u string) map[string][]string {
	t.Helper()
	code, body := get(t, u)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", u, code, body)
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
	groups := map[string][]string{}
	for _, h := range r.Hits.Hits {
		groups[h.ID] = nil
		for _, d := range h.InnerHits.Winnow.Hits.Hits {
			groups[h.ID] = append(groups[h.ID], d.ID)
		}
	}
	return groups
}

// storedGroups reads every document's winnow_group.
func storedGroups(t *testing.T, base, index string) map[string]string {
	t.Helper()
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
	m := map[string]string{}
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
