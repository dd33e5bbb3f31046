package canon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeptShare pins, for every saved real page, the share of its text
// that ContentMain keeps (testdata/golden/kept-share.txt, rewritten with
// -update), and checks that no page keeps less than minKeptShare: a page
// whose main content the rules miss falls back to its whole text.
func TestKeptShare(t *testing.T) {
	var b strings.Builder
	b.WriteString("# page\tmain tokens\tall tokens\tkept share (bytes)\tfallback\n")
	for _, p := range pages(t) {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all, err := HTML(body, "", Options{Content: ContentAll})
		if err != nil {
			t.Fatal(err)
		}
		main, err := HTML(body, "", Options{Content: ContentMain})
		if err != nil {
			t.Fatal(err)
		}
		share := float64(len(main.Text)) / float64(len(all.Text))
		name := strings.TrimSuffix(filepath.Base(p), ".html")
		if share < minKeptShare {
			t.Errorf("%s: main content keeps %.3f of the text, want >= %.2f", name, share, minKeptShare)
		}
		if main.MainFallback && main.Text != all.Text {
			t.Errorf("%s: fell back to the whole text but differs from ContentAll", name)
		}
		fmt.Fprintf(&b, "%s\t%d\t%d\t%.3f\t%v\n", name, len(main.Tokens), len(all.Tokens), share, main.MainFallback)
	}
	gp := "testdata/golden/kept-share.txt"
	if *update {
		if err := os.WriteFile(gp, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(gp)
	if err != nil {
		t.Fatalf("%v (run go test ./canon -update)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("kept shares differ from %s:\n%s\nrun go test ./canon -update and review the diff", gp, got)
	}
}

// TestMainFallback: clang's ItaniumMangleAbiTags.html (Debian clang-14-doc
// and clang-15-doc) holds its whole article in <section id="abi-tags">,
// which the template rules take for a tag list; ContentMain kept 0 tokens
// of about 500 before the fallback.
func TestMainFallback(t *testing.T) {
	for _, release := range []string{"14", "15"} {
		body, err := os.ReadFile("testdata/pages/debian.clang-" + release + "-doc.ItaniumMangleAbiTags.html")
		if err != nil {
			t.Fatal(err)
		}
		d, err := HTML(body, "", Options{Content: ContentMain})
		if err != nil {
			t.Fatal(err)
		}
		if !d.MainFallback || len(d.Tokens) < 500 {
			t.Errorf("clang-%s ItaniumMangleAbiTags: %d tokens, fallback %v; want >= 500 tokens by the fallback", release, len(d.Tokens), d.MainFallback)
		}
	}
}

// TestContentsPageKeepsLinks: clang's index.html (Debian clang-14-doc and
// clang-15-doc) is a table of contents of about 250 words under an
// introduction of 18; main content kept the introduction alone (18 of
// 265 words) until a container whose link lists hold eight times its
// prose counted as a contents page.
func TestContentsPageKeepsLinks(t *testing.T) {
	for _, release := range []string{"14", "15"} {
		body, err := os.ReadFile("testdata/pages/debian.clang-" + release + "-doc.index.html")
		if err != nil {
			t.Fatal(err)
		}
		all, err := HTML(body, "", Options{Content: ContentAll})
		if err != nil {
			t.Fatal(err)
		}
		d, err := HTML(body, "", Options{Content: ContentMain})
		if err != nil {
			t.Fatal(err)
		}
		if d.MainFallback || len(d.Tokens) < len(all.Tokens)*3/4 {
			t.Errorf("clang-%s index.html: main content keeps %d of %d tokens (fallback %v); want at least three quarters, its contents", release, len(d.Tokens), len(all.Tokens), d.MainFallback)
		}
	}
}
