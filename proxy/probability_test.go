package proxy

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/similarity"
)

// winnowNotes decodes an Elasticsearch answer's hits with their _winnow
// members as the proxy wrote them, numbers included.
func winnowNotes(t *testing.T, body string) []map[string]any {
	t.Helper()
	var a struct {
		Hits struct {
			Hits []struct {
				Winnow map[string]any `json:"_winnow"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("answer is not Elasticsearch JSON: %v\n%s", err, body)
	}
	var notes []map[string]any
	for _, h := range a.Hits.Hits {
		if h.Winnow != nil {
			notes = append(notes, h.Winnow)
		}
	}
	return notes
}

// TestWinnowProbability reads the calibrated probability of each
// annotated duplicate from real answers: in annotate mode the
// near-duplicate decision's, at least its min_confidence; in remove mode,
// for a near-duplicate kept because it is not content-equivalent, the
// content-equivalence decision's, below its min_confidence.
func TestWinnowProbability(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 3 * time.Second})
	q := base + "/llvm/_search?q=benchmark+tips+code+review&size=4"

	check := func(t *testing.T, params, decision string, inRange func(p float64) bool) {
		t.Helper()
		_, body := get(t, q+params)
		found := 0
		for _, w := range winnowNotes(t, body) {
			explain, _ := w["explain"].(string)
			if !strings.Contains(explain, "duplicate") {
				continue // a winner's note
			}
			p, ok := w["probability"].(float64)
			if !ok || w["decision"] != decision {
				t.Errorf("%s: a duplicate's _winnow lacks decision %q and a numeric probability: %v", params, decision, w)
				continue
			}
			if !inRange(p) {
				t.Errorf("%s: probability %v out of range for %q: %v", params, p, explain, w)
			}
			found++
		}
		if found == 0 {
			t.Fatalf("%s: no annotated duplicate in %s", params, body)
		}
	}
	t.Run("annotate", func(t *testing.T) {
		minConf := similarity.DefaultModel(similarity.PurposeGroup).MinConfidence
		check(t, "&winnow_mode=annotate", "group", func(p float64) bool { return p >= minConf-1e-4 && p <= 1 })
	})
	t.Run("remove keeps with its probability", func(t *testing.T) {
		minConf := similarity.DefaultModel(similarity.PurposeRemove).MinConfidence
		check(t, "&winnow_mode=remove", "remove", func(p float64) bool { return p >= 0 && p < minConf })
	})
}

// TestRemoveVerdictsCached checks that remove mode keeps the
// content-equivalence verdicts of the server's decision across queries:
// after a first query, every cached verdict is replaced by a marked one,
// and a second query (answer cache off, so the list is refined again)
// shows the marked probability, which only the cache holds.
func TestRemoveVerdictsCached(t *testing.T) {
	d := startDemo(t, demo.Options{})
	s, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 3 * time.Second, AnswerCacheBytes: -1})
	q := base + "/llvm/_search?q=benchmark+tips+code+review&size=4&winnow_mode=remove"
	get(t, q)
	g := s.ref.removeVerdicts.m
	g.mu.Lock()
	n := len(g.cur) + len(g.prev)
	const marked = 0.4242
	for k, v := range g.cur {
		v.Probability = marked
		g.cur[k] = v
	}
	g.prev = nil
	g.mu.Unlock()
	if n == 0 {
		t.Fatal("a remove-mode query left no verdict in the remove verdict cache")
	}
	_, body := get(t, q)
	seen := 0
	for _, w := range winnowNotes(t, body) {
		if p, _ := w["probability"].(float64); p == marked {
			seen++
		} else if w["decision"] == "remove" {
			t.Errorf("a remove verdict was computed again, not read from the cache: %v", w)
		}
	}
	if seen == 0 {
		t.Errorf("the second query showed no cached remove verdict: %s", body)
	}
	// A request that sets its own decision does not use the server's cache.
	_, body = get(t, q+"&winnow_min_confidence=0.95")
	for _, w := range winnowNotes(t, body) {
		if p, _ := w["probability"].(float64); math.Abs(p-marked) < 1e-9 {
			t.Errorf("a request with its own decision read the server's verdict cache: %v", w)
		}
	}
}
