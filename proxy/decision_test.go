package proxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
)

// TestDecisionParams: the request parameters mean what config's
// decision.* keys mean; one that cannot apply is a 400 naming it, on the
// search page and in the engine's error shape on the transparent path.
func TestDecisionParams(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 3 * time.Second})
	for _, q := range []string{base + "/_winnow/search.json?q=benchmark+tips+code+review&size=4", base + "/llvm/_search?q=benchmark+tips+code+review&size=4"} {
		decisionParams(t, q)
	}
}

func decisionParams(t *testing.T, q string) {
	tests := []struct {
		name, params string
		code         int
		field        string // named in a 400's body
	}{
		{"confidence for the mode's decision", "&winnow_mode=remove&winnow_min_confidence=0.8", 200, ""},
		{"paper method with threshold", "&winnow_method=lcs&winnow_threshold=0.8", 200, ""},
		{"threshold under the default decision", "&winnow_threshold=0.8", 400, "winnow_threshold"},
		{"confidence under a paper method", "&winnow_method=lcs&winnow_min_confidence=0.8", 400, "winnow_min_confidence"},
		{"confidence out of range", "&winnow_min_confidence=1.5", 400, "winnow_min_confidence"},
		{"simhash threshold out of range", "&winnow_method=simhash&winnow_threshold=65", 400, "winnow_threshold"},
		{"unknown method", "&winnow_method=cosine", 400, "winnow_method"},
		// A percent-encoded key is the same key, read and checked.
		{"encoded key, bad value", "&winnow%5Fmethod=cosine", 400, "winnow_method"},
		{"encoded unknown key", "&winnow%5fminconfidence=5", 400, "winnow_minconfidence"},
		{"encoded key", "&winnow%5Fmode=remove", 200, ""},
		// "model" is config's other name of the default method.
		{"model is the default method", "&winnow_method=model&winnow_min_confidence=0.8", 200, ""},
		// The hint names the knob as the client writes its settings: a
		// parameter, not the header it did not use.
		{"threshold's hint names the parameter", "&winnow_threshold=0.8", 400, "knob is winnow_min_confidence"},
		{"confidence's hint names the parameter", "&winnow_method=lcs&winnow_min_confidence=0.8", 400, "knob is winnow_threshold"},
		// A setting given twice with two values is an error, not the
		// first of them silently.
		{"parameter repeated with two values", "&winnow_min_confidence=0.5&winnow_min_confidence=0.6", 400, "winnow_min_confidence"},
		{"mode repeated with two values", "&winnow_mode=remove&winnow_mode=group", 400, "winnow_mode"},
		{"parameter repeated with one value", "&winnow_min_confidence=0.5&winnow_min_confidence=0.5", 200, ""},
		// An unknown winnow_ parameter is a typo that would change
		// nothing: a 400 naming it and the known ones.
		{"unknown parameter", "&winnow_minconfidence=5", 400, "unknown parameter winnow_minconfidence"},
		{"unknown parameter lists the known", "&winnow_minconfidence=5", 400, "winnow_mode, winnow_method, winnow_threshold, winnow_min_confidence, winnow_explain"},
		{"unknown parameter among known ones", "&winnow_mode=remove&winnow_explian=1", 400, "winnow_explian"},
		// winnow_explain is a boolean as config reads them.
		{"explain not a boolean", "&winnow_explain=maybe", 400, "winnow_explain"},
		{"explain true", "&winnow_explain=true", 200, ""},
		{"explain 0", "&winnow_explain=0", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := get(t, q+tt.params)
			if tt.code == 400 && strings.Contains(q, "_search") && !strings.Contains(body, "illegal_argument_exception") {
				t.Errorf("GET %s: %s; want Elasticsearch's error shape", tt.params, body)
			}
			if code != tt.code || tt.field != "" && !strings.Contains(body, tt.field) {
				t.Errorf("GET %s: %d %s; want %d naming %q", tt.params, code, body, tt.code, tt.field)
			}
		})
	}
	// The header form is the same setting; the error names the header.
	if code, body := get(t, q, "X-Winnow-Threshold", "0.8"); code != 400 || !strings.Contains(body, "X-Winnow-Threshold") || !strings.Contains(body, "X-Winnow-Min-Confidence") {
		t.Errorf("X-Winnow-Threshold under the default decision: %d %s; want 400 naming X-Winnow-Threshold and its knob X-Winnow-Min-Confidence", code, body)
	}
	// An unknown X-Winnow- header is refused like an unknown parameter.
	if code, body := get(t, q, "X-Winnow-Minconfidence", "0.5"); code != 400 || !strings.Contains(body, "X-Winnow-Minconfidence") || !strings.Contains(body, "X-Winnow-Min-Confidence") {
		t.Errorf("X-Winnow-Minconfidence: %d %s; want 400 naming it and the known X-Winnow-Min-Confidence", code, body)
	}
	if code, body := get(t, q, "X-Winnow-Explain", "maybe"); code != 400 || !strings.Contains(body, "X-Winnow-Explain") {
		t.Errorf("X-Winnow-Explain: maybe: %d %s; want 400 naming it", code, body)
	}
	// A parameter and a header that disagree are an error naming both;
	// that agree, the one setting.
	for _, tt := range []struct {
		params, header, value string
		code                  int
	}{
		{"&winnow_min_confidence=0.5", "X-Winnow-Min-Confidence", "0.6", 400},
		{"&winnow_method=lcs", "X-Winnow-Method", "simhash", 400},
		{"&winnow_mode=remove", "X-Winnow-Mode", "group", 400},
		{"&winnow_explain=1", "X-Winnow-Explain", "0", 400},
		{"&winnow_min_confidence=0.5", "X-Winnow-Min-Confidence", "0.5", 200},
	} {
		code, body := get(t, q+tt.params, tt.header, tt.value)
		if code != tt.code || code == 400 && (!strings.Contains(body, tt.header) || !strings.Contains(body, strings.SplitN(tt.params[1:], "=", 2)[0])) {
			t.Errorf("GET %s with %s: %s: %d %s; want %d naming both", tt.params, tt.header, tt.value, code, body, tt.code)
		}
	}
}

// TestSearchPageDecisions: the search page says which decision applied: in
// group mode each duplicate's near-duplicate probability, in remove mode
// only the duplicates the content-equivalence decision did not accept,
// each saying so.
func TestSearchPageDecisions(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 3 * time.Second})
	type item struct {
		URL, Explain string
		Kept         bool
		Scores       []struct{ Name, Value, Threshold string }
	}
	type page struct {
		Removed *int
		Groups  []struct {
			Duplicates, Removed []item
		}
	}
	read := func(mode string) (page, int) {
		code, body := get(t, base+"/_winnow/search.json?q=benchmark+tips+code+review&mode="+mode)
		var p page
		if err := json.Unmarshal([]byte(body), &p); err != nil || code != 200 {
			t.Fatalf("search.json mode %s: %d %v\n%s", mode, code, err, body)
		}
		n := 0
		for _, g := range p.Groups {
			n += len(g.Duplicates)
		}
		return p, n
	}
	group, grouped := read("group")
	for _, g := range group.Groups {
		for _, dup := range g.Duplicates {
			if !strings.Contains(dup.Explain, "P(near-duplicate)") || dup.Kept {
				t.Errorf("group: %s explained %q, kept %v; want the near-duplicate decision named", dup.URL, dup.Explain, dup.Kept)
			}
		}
	}
	remove, shown := read("remove")
	for _, g := range remove.Groups {
		for _, dup := range g.Duplicates {
			if !dup.Kept || !strings.HasPrefix(dup.Explain, "kept: a near-duplicate of ") || !strings.Contains(dup.Explain, "P(content-equivalent)") {
				t.Errorf("remove: %s shown with %q, kept %v; want only kept ones, saying why", dup.URL, dup.Explain, dup.Kept)
			}
		}
	}
	if grouped == 0 || shown >= grouped {
		t.Errorf("group mode shows %d duplicates, remove mode %d; want some, and fewer in remove mode", grouped, shown)
	}
	// The page counts what remove mode dropped and lists it apart, each
	// with the content-equivalence verdict's probability in its table,
	// as the kept ones have theirs (a bound where the decision stopped
	// early), not the near-duplicate decision's.
	removed := 0
	probability := func(it item, removedOne bool) {
		for _, sc := range it.Scores {
			if strings.HasPrefix(sc.Name, "P(near-duplicate)") {
				t.Errorf("remove: %s's table shows the near-duplicate decision: %+v", it.URL, sc)
			}
			if !strings.HasPrefix(sc.Name, "P(content-equivalent)") {
				continue
			}
			bound := strings.HasPrefix(sc.Value, "<= ")
			if removedOne && (bound || !strings.HasPrefix(sc.Threshold, ">= ")) || !removedOne && !strings.HasPrefix(sc.Threshold, "< ") ||
				bound != strings.Contains(sc.Name, "exited early") || !strings.Contains(it.Explain, sc.Value+" "+sc.Threshold) {
				t.Errorf("remove: %s (removed %v) shows %+v for %q", it.URL, removedOne, sc, it.Explain)
			}
			return
		}
		t.Errorf("remove: %s (removed %v) has no P(content-equivalent) row: %+v", it.URL, removedOne, it.Scores)
	}
	for _, g := range remove.Groups {
		for _, it := range g.Removed {
			removed++
			if !strings.HasPrefix(it.Explain, "removed by the content-equivalence decision: ") {
				t.Errorf("remove: %s listed as removed with %q", it.URL, it.Explain)
			}
			probability(it, true)
		}
		for _, it := range g.Duplicates {
			probability(it, false)
		}
	}
	if remove.Removed == nil || *remove.Removed != removed || removed != grouped-shown {
		t.Errorf("remove: the page says %v removed, lists %d; group mode shows %d duplicates, remove mode %d", remove.Removed, removed, grouped, shown)
	}
}

// TestOwnArgsNotForwarded checks that winnow's parameters never reach the
// backend, plain or percent-encoded, while the others reach it as sent.
func TestOwnArgsNotForwarded(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"took":1,"timed_out":false,"hits":{"total":{"value":0,"relation":"eq"},"max_score":null,"hits":[]}}`))
	}))
	t.Cleanup(backend.Close)
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(backend.URL)}, Budget: 3 * time.Second})
	for _, q := range []string{"q=code%20review&winnow_mode=annotate&size=3", "q=code%20review&winnow%5Fmode=annotate&size=3", "q=code%20review&winnow%5fexplain=1&size=3"} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		if code, body := get(t, base+"/llvm/_search?"+q); code != 200 {
			t.Fatalf("%s: %d %s", q, code, body)
		}
		mu.Lock()
		got := slices.Clone(seen)
		mu.Unlock()
		if len(got) == 0 {
			t.Fatalf("%s: the backend was not asked", q)
		}
		for _, fwd := range got {
			if v, err := url.ParseQuery(fwd); err != nil || v.Get("q") != "code review" || strings.Contains(strings.ToLower(fwd), "winnow") {
				t.Errorf("%s: the backend got %q; want q and no winnow parameter", q, fwd)
			}
		}
	}
}
