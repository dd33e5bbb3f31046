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

// noteProbability returns a duplicate's probability from its _winnow
// note: "probability", or "probability_at_most" when the decision only
// bounded it (it stopped aligning once it could not reach its
// confidence); bound reports which, ok that one of them is a number.
func noteProbability(w map[string]any) (p float64, bound, ok bool) {
	if p, ok := w["probability"].(float64); ok {
		_, both := w["probability_at_most"]
		return p, false, !both
	}
	p, ok = w["probability_at_most"].(float64)
	return p, true, ok
}

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
// content-equivalence decision's, below its min_confidence, and marked
// probability_at_most where the decision only bounded it.
func TestWinnowProbability(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 3 * time.Second})
	q := base + "/llvm/_search?q=benchmark+tips+code+review&size=10"

	check := func(t *testing.T, params, decision string, inRange func(p float64) bool) (bounds int) {
		t.Helper()
		_, body := get(t, q+params)
		found := 0
		for _, w := range winnowNotes(t, body) {
			explain, _ := w["explain"].(string)
			if !strings.Contains(explain, "duplicate") {
				continue // a winner's note
			}
			p, bound, ok := noteProbability(w)
			if !ok || w["decision"] != decision {
				t.Errorf("%s: a duplicate's _winnow lacks decision %q and one numeric probability: %v", params, decision, w)
				continue
			}
			// A bound is said as one, in the note and in the explanation.
			if saysBound := strings.Contains(explain, ") <= "); bound != saysBound {
				t.Errorf("%s: probability_at_most %v but the explanation says a bound: %v (%q)", params, bound, saysBound, explain)
			}
			if bound {
				bounds++
			}
			if !inRange(p) {
				t.Errorf("%s: probability %v out of range for %q: %v", params, p, explain, w)
			}
			found++
		}
		if found == 0 {
			t.Fatalf("%s: no annotated duplicate in %s", params, body)
		}
		return bounds
	}
	t.Run("annotate", func(t *testing.T) {
		minConf := similarity.DefaultModel(similarity.PurposeGroup).MinConfidence
		check(t, "&winnow_mode=annotate", "group", func(p float64) bool { return p >= minConf-1e-4 && p <= 1 })
	})
	t.Run("remove keeps with its probability", func(t *testing.T) {
		minConf := similarity.DefaultModel(similarity.PurposeRemove).MinConfidence
		// Some of the demo's releases of CodeReview, Benchmarking and
		// GettingStartedTutorials are kept with a bound: the decision
		// stopped aligning them (size=10: three releases of Benchmarking
		// whose words agree and whose version numbers differ fill the
		// first places, kept at 0 by the numbers-only rule).
		if n := check(t, "&winnow_mode=remove", "remove", func(p float64) bool { return p >= 0 && p < minConf }); n == 0 {
			t.Error("remove mode kept no near-duplicate with a bounded probability; the demo's kept releases are rejected by a bound")
		}
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
		if p, _, _ := noteProbability(w); p == marked {
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
		if p, _, _ := noteProbability(w); math.Abs(p-marked) < 1e-9 {
			t.Errorf("a request with its own decision read the server's verdict cache: %v", w)
		}
	}
}

// TestExplainRemove: winnow_explain=1 in remove mode annotates every
// result as remove mode treats it, dropping none: each duplicate remove
// mode drops is explained by the content-equivalence decision that
// accepted it, with its probability, each near-duplicate it keeps says
// so, and together they are exactly what remove mode drops and keeps.
func TestExplainRemove(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 3 * time.Second})
	q := base + "/llvm/_search?q=benchmark+tips+code+review&size=30"
	ids := func(body string) map[string]bool {
		set := map[string]bool{}
		for _, h := range decodeES(t, body).Hits.Hits {
			set[h.ID] = true
		}
		return set
	}
	_, body := get(t, q+"&winnow_mode=remove")
	shown := ids(body)
	code, body := get(t, q+"&winnow_mode=remove&winnow_explain=1")
	if code != 200 {
		t.Fatalf("explain: %d %s", code, body)
	}
	var a struct {
		Hits struct {
			Hits []struct {
				ID     string         `json:"_id"`
				Winnow map[string]any `json:"_winnow"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatal(err)
	}
	minConf := similarity.DefaultModel(similarity.PurposeRemove).MinConfidence
	removed, kept := 0, 0
	for _, h := range a.Hits.Hits {
		w := h.Winnow
		explain, _ := w["explain"].(string)
		switch {
		case strings.HasPrefix(explain, "removed by the content-equivalence decision: "):
			removed++
			p, bound, ok := noteProbability(w)
			if !ok || bound || w["decision"] != "remove" || p < minConf-1e-4 {
				t.Errorf("%s would be removed, but its note does not give the content-equivalence probability >= %v: %v", h.ID, minConf, w)
			}
			if shown[h.ID] {
				t.Errorf("%s: explain says remove mode drops it, but remove mode shows it", h.ID)
			}
		case strings.HasPrefix(explain, "kept: "):
			kept++
			if _, _, ok := noteProbability(w); !ok || w["decision"] != "remove" {
				t.Errorf("%s is kept, but its note lacks the content-equivalence decision: %v", h.ID, w)
			}
			if !shown[h.ID] {
				t.Errorf("%s: explain says remove mode keeps it, but remove mode drops it", h.ID)
			}
		case w != nil && w["decision"] != nil:
			t.Errorf("%s: a duplicate explained by another decision: %v", h.ID, w)
		default:
			if !shown[h.ID] {
				t.Errorf("%s: not a duplicate in explain, but remove mode drops it (%v)", h.ID, w)
			}
		}
	}
	if removed == 0 || kept == 0 {
		t.Errorf("explain in remove mode: %d duplicates removed, %d kept; want some of each\n%s", removed, kept, body)
	}
	if len(a.Hits.Hits) != len(shown)+removed {
		t.Errorf("explain shows %d results, remove mode %d of which %d removed: explain must drop none", len(a.Hits.Hits), len(shown), removed)
	}
}

// TestAnnotateWinnerNote: in annotate mode a winner's _winnow names its
// cluster and winner and has no empty "relation" or "explain" members;
// its duplicates have both.
func TestAnnotateWinnerNote(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 3 * time.Second})
	_, body := get(t, base+"/llvm/_search?q=benchmark+tips+code+review&size=10&winnow_mode=annotate")
	winners, dups := 0, 0
	for _, w := range winnowNotes(t, body) {
		for _, k := range []string{"relation", "explain"} {
			if v, ok := w[k]; ok && v == "" {
				t.Errorf("annotate: a note with an empty %q: %v", k, w)
			}
		}
		if _, ok := w["relation"]; ok {
			dups++
		} else if w["cluster"] != "" && w["winner"] != "" {
			winners++
		}
	}
	if winners == 0 || dups == 0 {
		t.Errorf("annotate: %d winners, %d duplicates annotated; want some of each\n%s", winners, dups, body)
	}
}
