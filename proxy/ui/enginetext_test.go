package ui

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/winnow-search/winnow/internal/chromiumtest"
)

// TestChromiumEngineText renders, in Chromium at a phone's width,
// results as real engines gave them: a page indexed without a title (the
// link shows its 300-character URL), a title of one long C++ name, and
// right-to-left titles and snippets. Nothing may widen the page past the
// window (a reader would scroll sideways for every result), and each
// title and snippet takes its direction from its own text, so Arabic
// reads right to left with its punctuation where it belongs, in the
// results and in the "why grouped?" view.
func TestChromiumEngineText(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short: skipping the browser test")
	}
	longURL := "http://docs.example.org/pages/" + strings.Repeat("a", 300) + ".html"
	longTitle := "std::__1::basic_string<char,std::__1::char_traits<char>,std::__1::allocator<char>>::" + strings.Repeat("x", 150)
	const rtl = "مرحبا بالعالم!"
	p := &Page{Query: "quux", Mode: "group", Groups: []Group{
		{ID: "r0", Winner: Item{URL: longURL, Rank: 1, Engines: []string{"elasticsearch"}}},
		{ID: "r1", Winner: Item{URL: "http://docs.example.org/long", Title: longTitle, Rank: 2, Snippet: strings.Repeat("y", 400)}},
		{ID: "c2", Winner: Item{URL: "http://docs.example.org/ar", Title: rtl, Snippet: "نص عربي.", Rank: 3},
			Similar: []Item{{URL: "http://mirror.example.org/ar", Title: rtl, Snippet: "نص عربي.", Relation: "duplicate", Explain: "duplicate"}}},
	}}
	srv := httptest.NewServer(Handler(func(*http.Request) (*Page, error) { return p, nil }))
	t.Cleanup(srv.Close)
	ctx := chromiumtest.Start(t, 60*time.Second, 400, 800)
	if _, err := chromedp.RunResponse(ctx, chromedp.Navigate(srv.URL+"/?q=quux")); err != nil {
		t.Fatal(err)
	}
	type state struct {
		ScrollWidth, ClientWidth int
		Wide                     []string
		Dirs                     map[string]string
	}
	s, err := chromedp.Run(ctx, chromedp.Evaluate[state](`(() => {
		const w = document.documentElement.clientWidth;
		const dirs = {};
		for (const sel of ['.winner .title a', '.winner .snippet', '.item .title a', '.explain-title']) {
			for (const e of document.querySelectorAll(sel)) {
				dirs[sel + ' ' + e.textContent.slice(0, 12)] = getComputedStyle(e).direction;
			}
		}
		return {
			ScrollWidth: document.documentElement.scrollWidth, ClientWidth: w,
			Wide: [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 1).map(e => e.tagName + '.' + e.className),
			Dirs: dirs,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if s.ScrollWidth > s.ClientWidth {
		t.Errorf("page %d px wide in a %d px window; wider: %v", s.ScrollWidth, s.ClientWidth, s.Wide)
	}
	for k, dir := range s.Dirs {
		want := "ltr"
		if strings.Contains(k, "مرحبا") || strings.Contains(k, "نص") {
			want = "rtl"
		}
		if dir != want {
			t.Errorf("%s: direction %s, want %s", k, dir, want)
		}
	}
	if len(s.Dirs) < 6 {
		t.Errorf("read %d titles and snippets (%v), want the 7 on the page", len(s.Dirs), s.Dirs)
	}
}
