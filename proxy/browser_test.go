package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/winnow-search/winnow/internal/chromiumtest"
	"github.com/winnow-search/winnow/internal/demo"
)

// TestSearchPageInChromium opens the search page that winnow serves in
// front of the demo engine, in Debian's headless Chromium, and checks the
// grouped results and the expand action. On CI (CI=true) a missing
// chromium fails the test.
func TestSearchPageInChromium(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{
		esEngine(d.URL()),
		{Name: "searx", URL: d.URL(), Adapter: engineConfig("searxng", "/searxng/search")},
	}, Budget: 5 * time.Second})

	ctx := chromiumtest.Start(t, 60*time.Second, 1000, 900)

	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(base+"/?q=benchmark"))
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("opening the search page: %v (status %v)", err, resp)
	}
	type state struct {
		Title         string
		Groups        int
		FirstWinner   string
		FirstSummary  string
		SimilarShown  bool
		SimilarTitles []string
		ExplainLine   string
	}
	const js = `(() => {
		const shown = el => !!el && el.offsetHeight > 0 && el.checkVisibility();
		const g = document.querySelector('.group');
		return {
			Title: document.title,
			Groups: document.querySelectorAll('.group').length,
			FirstWinner: g ? g.querySelector('.winner').textContent : '',
			FirstSummary: g && g.querySelector('details.similar > summary') ? g.querySelector('details.similar > summary').textContent.trim() : '',
			SimilarShown: shown(g && g.querySelector('details.similar .item')),
			SimilarTitles: g ? [...g.querySelectorAll('details.similar .item')].map(e => e.textContent) : [],
			ExplainLine: g && g.querySelector('details.explain .explain-item') ? g.querySelector('details.explain .explain-item').textContent : '',
		};
	})()`
	s, err := chromedp.Run(ctx, chromedp.Evaluate[state](js))
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "winnow — benchmark" || s.Groups == 0 {
		t.Fatalf("page %q with %d groups", s.Title, s.Groups)
	}
	if !strings.Contains(s.FirstWinner, "Benchmarking tips") {
		t.Errorf("first winner %q, want the Benchmarking page", s.FirstWinner)
	}
	// The page is in five releases: one winner, four similar results,
	// hidden until the user expands them.
	if s.FirstSummary != "4 similar results" || s.SimilarShown {
		t.Errorf("before expanding: summary %q, similar shown %v; want \"4 similar results\" hidden", s.FirstSummary, s.SimilarShown)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".group details.similar > summary"))); err != nil {
		t.Fatal(err)
	}
	if s, err = chromedp.Run(ctx, chromedp.Evaluate[state](js)); err != nil {
		t.Fatal(err)
	}
	if !s.SimilarShown || len(s.SimilarTitles) != 4 {
		t.Errorf("after expanding: shown %v, %d similar results", s.SimilarShown, len(s.SimilarTitles))
	}
	for _, title := range s.SimilarTitles {
		if !strings.Contains(title, "Benchmarking") {
			t.Errorf("similar result %q is not a Benchmarking page", title)
		}
	}
	if !strings.Contains(s.ExplainLine, "duplicate: ") || !strings.Contains(s.ExplainLine, "% of the words appear in the same order") {
		t.Errorf("explain view: %q, want the plain sentence and the explanation", s.ExplainLine)
	}

	// Remove mode: the page says how many duplicates it removed, and
	// "why?" lists them with the content-equivalence probability that
	// removed them, not the near-duplicate decision's.
	if resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(base+"/?q=benchmark+tips+code+review&mode=remove")); err != nil || resp.Status != http.StatusOK {
		t.Fatalf("opening the search page in remove mode: %v (status %v)", err, resp)
	}
	type removedState struct {
		Totals       string
		Summary      string
		RowsShown    bool
		Rows         []string
		KeptRows     []string
		RemovedCount int
	}
	const removedJS = `(() => {
		const shown = el => !!el && el.offsetHeight > 0 && el.checkVisibility();
		const d = document.querySelector('details.removed');
		const row = tr => [...tr.children].map(c => c.textContent.trim()).join(' ');
		return {
			Totals: document.querySelector('.totals').textContent,
			Summary: d ? d.querySelector('summary').textContent.trim() : '',
			RowsShown: shown(d && d.querySelector('table.scores')),
			Rows: d ? [...d.querySelectorAll('table.scores tbody tr')].map(row) : [],
			KeptRows: [...document.querySelectorAll('details.explain table.scores tbody tr')].map(row),
			RemovedCount: [...document.querySelectorAll('details.removed .explain-item')].length,
		};
	})()`
	r, err := chromedp.Run(ctx, chromedp.Evaluate[removedState](removedJS))
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary == "" || r.RowsShown {
		t.Fatalf("remove mode: removed list %q, rows shown %v before opening; want a closed \"why?\" list", r.Summary, r.RowsShown)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("details.removed > summary"))); err != nil {
		t.Fatal(err)
	}
	if r, err = chromedp.Run(ctx, chromedp.Evaluate[removedState](removedJS)); err != nil {
		t.Fatal(err)
	}
	var total int
	for _, f := range strings.Split(r.Totals, ", ") {
		if n, ok := strings.CutSuffix(f, " removed as content-equivalent"); ok {
			fmt.Sscan(n, &total)
		}
	}
	if total == 0 || total < r.RemovedCount {
		t.Errorf("remove mode: totals %q, %d listed as removed; want the count of what was removed", r.Totals, r.RemovedCount)
	}
	if !r.RowsShown {
		t.Errorf("remove mode: the removed duplicates' scores are not shown after opening %q", r.Summary)
	}
	ce := 0
	for _, row := range append(r.Rows, r.KeptRows...) {
		if strings.HasPrefix(row, "P(near-duplicate)") {
			t.Errorf("remove mode: a score row shows the near-duplicate decision: %q", row)
		}
		if strings.HasPrefix(row, "P(content-equivalent)") {
			ce++
		}
	}
	if ce == 0 {
		t.Errorf("remove mode: no P(content-equivalent) row among %q and %q", r.Rows, r.KeptRows)
	}
}
