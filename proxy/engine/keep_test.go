package engine

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestRenderRemoveKeep: in Remove mode a duplicate marked Keep (a
// near-duplicate the content-equivalence decision did not accept) stays in
// place with its annotation; the other duplicates go, and the total counts
// only those.
func TestRenderRemoveKeep(t *testing.T) {
	a := mustNew(t, Config{Kind: "elasticsearch"})
	body := esBody(t, 10)
	p, err := a.Parse(body, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	marks := esMarks()
	marks[1].Keep = true
	marks[1].Explain = "kept: not content-equivalent"
	out, err := a.Render(nil, p, marks, Remove, Window{From: 0, Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := urlsOf(t, out, "hits", "hits", "url"), []string{"https://example.org/0", "https://example.org/1", "https://example.org/3", "https://example.org/4", "https://example.org/6"}; !reflect.DeepEqual(got, want) {
		t.Errorf("URLs = %q, want %q", got, want)
	}
	var doc struct {
		Hits struct {
			Hits []struct {
				Winnow *struct {
					Winner, Relation, Explain string
				} `json:"_winnow"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, h := range doc.Hits.Hits {
		kept := i == 1
		if kept != (h.Winnow != nil) {
			t.Errorf("hit %d: _winnow %+v; want an annotation on the kept duplicate only", i, h.Winnow)
		}
		if kept && h.Winnow != nil && (h.Winnow.Explain != "kept: not content-equivalent" || h.Winnow.Winner != "https://example.org/0") {
			t.Errorf("kept hit annotated %+v", h.Winnow)
		}
	}
}
