package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/winnow-search/winnow/internal/chromiumtest"
	"github.com/winnow-search/winnow/proxy"
)

// TestFeedbackInChromium runs winnow serve (the demo engine over the
// embedded sample) with serve.feedback_log, clicks the search page's "not
// a duplicate" button on a grouped result and "same page as above" on the
// second group's winner in Debian's headless Chromium, checks that each
// click wrote its pair (both URLs, the verdict, the signatures' scores),
// and that winnow calibrate reads the log. On CI (CI=true) a missing
// chromium fails the test.
func TestFeedbackInChromium(t *testing.T) {
	log := filepath.Join(t.TempDir(), "feedback.jsonl")
	addr := freeAddr(t)
	startServe(t, addr, "-set", "serve.feedback_log="+log)

	ctx := chromiumtest.Start(t, 90*time.Second, 1000, 900)
	if _, err := chromedp.RunResponse(ctx, chromedp.Navigate("http://"+addr+"/_winnow/search?q=clang")); err != nil {
		t.Fatalf("opening the search page: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".group details.similar > summary"))); err != nil {
		t.Fatalf("opening the similar results: %v", err)
	}
	judged, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".group details.similar .item .url")))
	if err != nil {
		t.Fatal(err)
	}
	// Each click posts the form and follows the redirect to the results.
	notice := func(button string) string {
		t.Helper()
		if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(button))); err != nil {
			t.Fatalf("clicking %s: %v", button, err)
		}
		n, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("p.notice")))
		if err != nil {
			t.Fatalf("after clicking %s: %v", button, err)
		}
		return n
	}
	notice1 := notice(".group details.similar button.feedback-not_duplicate")
	notice2 := notice("button.feedback-same_page")
	if !strings.Contains(notice1, "not a duplicate") || !strings.Contains(notice2, "same page") {
		t.Errorf("notices %q, %q; want the verdicts acknowledged", notice1, notice2)
	}

	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []proxy.FeedbackRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r proxy.FeedbackRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records in the feedback log, want 2: %+v", len(recs), recs)
	}
	if r := recs[0]; r.Verdict != "not_duplicate" || r.B != strings.TrimSpace(judged) || r.A == "" || r.A == r.B || r.Scores["jaccard"] == 0 || time.Since(r.Time) > time.Hour {
		t.Errorf("first record %+v; want not_duplicate on %q against its winner, with scores", r, judged)
	}
	if r := recs[1]; r.Verdict != "same_page" || r.A == "" || r.B == "" || r.Scores == nil {
		t.Errorf("second record %+v; want same_page on two winners, with scores", r)
	}

	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"calibrate", "-mode", "remove", "-repeats", "1", log}, strings.NewReader(""), &out, &errb, nil)
	if code != 0 {
		t.Fatalf("winnow calibrate on the feedback log: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"calibrate remove on feedback: 2 pairs, 1 content-equivalent", "too few pairs to tell", "source: feedback"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("calibrate output lacks %q:\n%s", want, out.String())
		}
	}
}
