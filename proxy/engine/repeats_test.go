package engine

import (
	"encoding/json"
	"testing"
)

// TestGroupRepeats renders duplicates whose cluster IDs, explanations and
// probabilities repeat, change and come back, as the group rendering
// writes a repeated one by copying where it wrote it last.
func TestGroupRepeats(t *testing.T) {
	a := mustNew(t, Config{Kind: "elasticsearch"})
	p, err := a.Parse(esBody(t, 7), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	dup := func(cluster string, win int, explain string, prob float64) Mark {
		return Mark{Cluster: cluster, Winner: win, Relation: "duplicate", Explain: explain, Decision: "group", Probability: prob}
	}
	marks := []Mark{
		{Cluster: "a", Winner: 0}, dup("a", 0, "x", 0.5), dup("a", 0, "y \"q\"", 0.25), dup("a", 0, "x", 0.5),
		{Cluster: "b\n", Winner: 4}, dup("b\n", 4, "x", 0.25), dup("b\n", 4, "", 0.25),
	}
	out, err := a.Render(nil, p, marks, Group, Window{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	type winnow struct {
		Cluster, Relation, Decision, Explain string
		Probability                          float64
	}
	var ans struct {
		Hits struct {
			Hits []struct {
				Winnow    winnow `json:"_winnow"`
				InnerHits struct {
					Winnow struct {
						Hits struct {
							Hits []struct {
								Winnow winnow `json:"_winnow"`
							}
						}
					}
				} `json:"inner_hits"`
			}
		}
	}
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	hits := ans.Hits.Hits
	if len(hits) != 2 {
		t.Fatalf("%d hits, want 2\n%s", len(hits), out)
	}
	for k, w := range []int{0, 4} {
		h := hits[k]
		if h.Winnow.Cluster != marks[w].Cluster {
			t.Errorf("winner %d: cluster %q, want %q", w, h.Winnow.Cluster, marks[w].Cluster)
		}
		var want []Mark
		for _, m := range marks {
			if m.Winner == w && m.Relation != "" {
				want = append(want, m)
			}
		}
		got := h.InnerHits.Winnow.Hits.Hits
		if len(got) != len(want) {
			t.Fatalf("winner %d: %d duplicates, want %d\n%s", w, len(got), len(want), out)
		}
		for i, m := range want {
			g := got[i].Winnow
			if g != (winnow{m.Cluster, m.Relation, m.Decision, m.Explain, m.Probability}) {
				t.Errorf("winner %d duplicate %d: %+v, want %+v", w, i, g, m)
			}
		}
	}
}
