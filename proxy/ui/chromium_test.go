package ui

import (
	"bytes"
	"cmp"
	"context"
	"image"
	"image/color"
	"image/png"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chromiumPath returns Debian's chromium, or skips the test when it is
// missing; on CI (CI=true) a missing chromium fails the test instead.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found on CI: install Debian's chromium package")
	}
	t.Skip("chromium not found: apt-get install chromium")
	return ""
}

// pageState is what the test reads from the rendered DOM.
type pageState struct {
	Title      string
	Groups     int
	Winners    []string
	Summaries  []string
	ItemShown  bool // the first group's first similar item
	ItemOpen   bool // the first group's details.similar
	ExplainOn  bool // the first group's first explanation line
	Explain    string
	BadgeShown bool // the unrefined badge
	Query      string
	Location   string
}

// stateJS reads a pageState; shown(el) is true when el takes up space and
// is visible to the user.
const stateJS = `(() => {
	const shown = el => !!el && el.offsetHeight > 0 && el.checkVisibility({visibilityProperty: true});
	const all = sel => [...document.querySelectorAll(sel)];
	const g = document.querySelector('.group');
	const line = g && g.querySelector('details.explain .explain-item');
	return {
		Title: document.title,
		Groups: all('.group').length,
		Winners: all('.group .winner h2.title').map(e => e.textContent.trim()),
		Summaries: all('details.similar > summary').map(e => e.textContent.trim()),
		ItemShown: shown(g && g.querySelector('details.similar .item')),
		ItemOpen: !!g && g.querySelector('details.similar').open,
		ExplainOn: shown(line),
		Explain: line ? line.textContent : '',
		BadgeShown: shown(document.querySelector('.badge-unrefined')),
		Query: document.querySelector('#q').value,
		Location: location.search,
	};
})()`

func TestChromium(t *testing.T) {
	bin := chromiumPath(t)
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short: skipping the browser test")
	}
	want := fixture(t)
	// httptest listens on 127.0.0.1.
	srv := httptest.NewServer(Handler(func(r *http.Request) (*Page, error) {
		p := *want
		p.Query, p.Mode = r.FormValue("q"), r.FormValue("mode")
		return &p, nil
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx, cancel = chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(860, 800),
	)
	defer cancel()
	ctx, cancel = chromedp.NewContext(ctx)
	defer cancel()

	state := func(step string) pageState {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](stateJS))
		if err != nil {
			t.Fatalf("%s: reading the page: %v", step, err)
		}
		return s
	}

	start := srv.URL + "/?" + url.Values{"q": {want.Query}, "mode": {"group"}}.Encode()
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(start))
	if err != nil {
		t.Fatalf("Navigate(%s): %v", start, err)
	}
	if resp.Status != http.StatusOK {
		t.Fatalf("Navigate(%s): status %d, want 200", start, resp.Status)
	}

	s := state("loaded")
	if wantTitle := "winnow — " + want.Query; s.Title != wantTitle {
		t.Errorf("title = %q, want %q", s.Title, wantTitle)
	}
	if s.Groups != len(want.Groups) {
		t.Errorf("found %d .group, want %d", s.Groups, len(want.Groups))
	}
	var winners []string
	for _, g := range want.Groups {
		winners = append(winners, g.Winner.Title)
	}
	if !slices.Equal(s.Winners, winners) {
		t.Errorf("winner titles = %q, want %q", s.Winners, winners)
	}
	if wantSum := []string{"2 similar results", "1 similar result"}; !slices.Equal(s.Summaries, wantSum) {
		t.Errorf("summaries = %q, want %q", s.Summaries, wantSum)
	}
	if s.ItemShown || s.ItemOpen || s.ExplainOn {
		t.Errorf("before clicking: similar item shown %v, open %v, explanation shown %v; want all hidden", s.ItemShown, s.ItemOpen, s.ExplainOn)
	}
	if !s.BadgeShown {
		t.Error("the not-checked badge is not visible")
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".group details.similar > summary"))); err != nil {
		t.Fatalf("clicking the similar summary: %v", err)
	}
	s = state("similar expanded")
	if !s.ItemShown || !s.ItemOpen {
		t.Errorf("after clicking %q: similar item shown %v, open %v; want both", s.Summaries[0], s.ItemShown, s.ItemOpen)
	}
	if s.ExplainOn {
		t.Error("after clicking the similar summary: the explanation is shown, want it still hidden")
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".group details.explain > summary"))); err != nil {
		t.Fatalf("clicking the explain summary: %v", err)
	}
	s = state("explain expanded")
	if wantExplain := want.Groups[0].Similar[0].Explain; !s.ExplainOn || !strings.Contains(s.Explain, wantExplain) {
		t.Errorf("after clicking \"why grouped?\": explanation shown %v, text %q; want shown and containing %q", s.ExplainOn, s.Explain, wantExplain)
	}

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	checkScreenshot(t, shot)

	// Submit the form as a person would: type a query, choose a mode, press
	// Enter.
	const query = "rust borrow checker"
	resp, err = chromedp.RunResponse(ctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#mode').value = 'remove'; document.querySelector('#q').value = ''`),
		chromedp.SendKeys(chromedp.CSS("#q"), query+kb.Enter),
	)
	if err != nil {
		t.Fatalf("submitting the form: %v", err)
	}
	if resp.Status != http.StatusOK {
		t.Errorf("submitting the form: status %d, want 200", resp.Status)
	}
	s = state("submitted")
	const wantLoc = "?q=rust+borrow+checker&mode=remove" // the form's field order
	if s.Location != wantLoc {
		t.Errorf("after submitting: location.search = %q, want %q", s.Location, wantLoc)
	}
	if s.Title != "winnow — "+query || s.Query != query {
		t.Errorf("after submitting: title %q, search box %q; want %q and %q", s.Title, s.Query, "winnow — "+query, query)
	}
}

// checkScreenshot checks that shot is a PNG of a sensible size, saves it
// in the test's temporary directory and, with -update, as
// testdata/screenshot.png.
func checkScreenshot(t *testing.T, shot []byte) {
	t.Helper()
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if cfg.Width < 600 || cfg.Height < 400 {
		t.Errorf("screenshot is %dx%d, want at least 600x400", cfg.Width, cfg.Height)
	}
	tmp := filepath.Join(t.TempDir(), "screenshot.png")
	if err := os.WriteFile(tmp, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if !*update {
		return
	}
	small, err := paletted(shot)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	const limit = 200 << 10
	if len(small) > limit {
		t.Fatalf("screenshot has %d bytes, over the %d kept in testdata", len(small), limit)
	}
	if err := os.WriteFile(filepath.Join("testdata", "screenshot.png"), small, 0o644); err != nil {
		t.Fatal(err)
	}
}

// paletted re-encodes a PNG with the 256 colors it uses most, each other
// color mapped to the nearest of them: a text page loses nothing visible
// and shrinks by half.
func paletted(b []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	r := img.Bounds()
	count := make(map[color.RGBA]int)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			count[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	colors := slices.Collect(maps.Keys(count))
	slices.SortFunc(colors, func(a, b color.RGBA) int {
		return cmp.Or(count[b]-count[a], cmp.Compare(a.R, b.R), cmp.Compare(a.G, b.G), cmp.Compare(a.B, b.B), cmp.Compare(a.A, b.A))
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range colors[:min(256, len(colors))] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(r, pal)
	index := make(map[color.RGBA]uint8)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
