package proxy

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/winnow-search/winnow/internal/demo"
)

// TestSearchPageInChromium opens the search page that winnow serves in
// front of the demo engine, in Debian's headless Chromium, and checks the
// grouped results and the expand action. On CI (CI=true) a missing
// chromium fails the test.
func TestSearchPageInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found on CI: .ci/run installs Debian's chromium")
		}
		t.Skip("chromium not found: apt-get install chromium")
	}
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{
		esEngine(d.URL()),
		{Name: "searx", URL: d.URL(), Adapter: engineConfig("searxng", "/searxng/search")},
	}, Budget: 5 * time.Second})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx, cancel = chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1000, 900))
	defer cancel()
	ctx, cancel = chromedp.NewContext(ctx)
	defer cancel()

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
			ExplainLine: g && g.querySelector('details.explain .explain-line') ? g.querySelector('details.explain .explain-line').textContent : '',
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
	if !strings.HasPrefix(s.ExplainLine, "duplicate: ") && !strings.Contains(s.ExplainLine, "duplicate: ") {
		t.Errorf("explain view: %q, want an explanation", s.ExplainLine)
	}
}
