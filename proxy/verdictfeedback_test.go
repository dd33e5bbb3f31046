package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/similarity"
)

// TestFeedbackLogBounded: past its bound the log moves to FILE.1 and a
// new one begins, so it never holds more than twice the bound, and every
// line is a whole record.
func TestFeedbackLogBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feedback.jsonl")
	l, err := openFeedbackLog(path, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	for i := range 100 {
		rec := FeedbackRecord{Time: time.Unix(int64(i), 0).UTC(), A: "https://a.example/x", B: "https://b.example/y", Verdict: "same_page"}
		if err := l.write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for _, p := range []string{path, path + ".1"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 1024 {
			t.Errorf("%s holds %d bytes, over the 1024 bound", p, len(b))
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var r FeedbackRecord
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Errorf("%s: line %q: %v", p, line, err)
			}
			total++
		}
	}
	if total == 0 || total == 100 || l.written.Load() != 100 {
		t.Errorf("%d records kept of %d written (counted %d): want the oldest dropped, the newest kept", total, 100, l.written.Load())
	}
}

// TestFeedbackEndpoint: bad forms are 400s naming the field; a good one
// is written and redirects to the results; /metrics counts it and names
// a calibrated decision.
func TestFeedbackEndpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feedback.jsonl")
	pm := *similarity.DefaultModel(similarity.PurposeRemove)
	pm.MinConfidence, pm.Calibration, pm.CalibrationFlagged = 0.93, "calibrated on shop", true
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, FeedbackLog: path,
		Remove: similarity.Decision{Models: &pm, Verify: similarity.Test{Method: similarity.MethodModel, Threshold: 0.93}}})
	for _, c := range []struct{ form, want string }{
		{"a=ftp://x/&b=https://b.example/&verdict=same_page", "a is not"},
		{"a=https://a.example/&b=&verdict=same_page", "b is not"},
		{"a=https://a.example/&b=https://b.example/&verdict=maybe", "verdict"},
	} {
		code, body := post(t, base+FeedbackPath, c.form)
		if code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("POST %s = %d %q, want 400 naming %q", c.form, code, body, c.want)
		}
	}
	if code, _ := get(t, base+FeedbackPath); code != 405 {
		t.Errorf("GET %s = %d, want 405", FeedbackPath, code)
	}
	code, _ := post(t, base+FeedbackPath, "a=https://a.example/x&b=https://b.example/y&verdict=not_duplicate&q=benchmark")
	if code != 200 { // the client follows the 303 to the results
		t.Errorf("POST a good verdict = %d, want the results page after the redirect", code)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `"verdict":"not_duplicate"`) || strings.Contains(string(b), "benchmark") {
		t.Errorf("log %q (%v): want the verdict and no query", b, err)
	}
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{"winnow_feedback_records_total 1",
		`winnow_decision_min_confidence{calibrated="true",holds_target="false",purpose="remove"} 0.93`,
		`winnow_decision_min_confidence{calibrated="false",holds_target="true",purpose="group"} 0.68`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// post sends a form and follows a redirect, as the search page's form
// does in a browser.
func post(t testing.TB, u, form string) (int, string) {
	t.Helper()
	resp, err := http.Post(u, "application/x-www-form-urlencoded", strings.NewReader(form))
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
