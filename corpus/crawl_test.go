package corpus

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/internal/crawltest"
)

// crawlPages are real pages (LLVM documentation, from the testdata
// directory walk) for a site that wget crawls.
func crawlPages(t *testing.T) map[string][]byte {
	t.Helper()
	pages := map[string][]byte{}
	for doc, err := range Dir("testdata/dir") {
		if err != nil {
			t.Fatal(err)
		}
		if doc.ContentType == "text/html" {
			pages["docs/"+doc.ID] = doc.Body
		}
	}
	return pages
}

// TestWgetCrawl reads WARC files that GNU Wget writes while crawling a
// site on loopback: gzip-encoded, chunked pages, a redirect, missing
// pages, an image, wget's own log and arguments, and a second crawl that
// stores the unchanged pages as revisit records of the first.
func TestWgetCrawl(t *testing.T) {
	pages := crawlPages(t)
	site := crawltest.NewSite(t, pages)
	dir := t.TempDir()
	first := crawltest.Crawl(t, site, dir, "first", true, "")
	second := crawltest.Crawl(t, site, dir, "second", false, filepath.Join(dir, "first.cdx"))

	skips := map[string]int{}
	o := Options{Targets: &Targets{}, OnSkip: func(s Skip) { skips[s.Kind]++ }}
	urls := map[string]int{}
	for _, in := range []string{first, second} {
		for doc, err := range o.Open(in) {
			if err != nil {
				t.Errorf("Open(%s): %v", filepath.Base(in), err)
				continue
			}
			u := strings.TrimPrefix(doc.URL, site.URL)
			urls[u]++
			if want, ok := pages[strings.TrimPrefix(u, "/")]; ok && string(doc.Body) != string(want) {
				t.Errorf("%s: body of %d bytes differs from the page served (%d bytes)", u, len(doc.Body), len(want))
			}
			if !strings.HasPrefix(doc.ContentType, "text/html") {
				t.Errorf("%s: content type %q", u, doc.ContentType)
			}
		}
	}
	// Each page, the index and the redirect's target (fetched twice) in
	// each crawl: the second crawl's are revisits resolved to the first.
	want := map[string]int{"/": 2}
	for _, p := range site.Paths {
		want[p] = 2
	}
	want[site.Paths[0]] = 4
	if fmt.Sprint(urls) != fmt.Sprint(want) {
		t.Errorf("documents by URL path = %v, want %v", urls, want)
	}
	// Every other record is skipped by kind, never yielded: per crawl one
	// warcinfo, wget's metadata record, its log and arguments (resource
	// records of metadata: URIs), the 301, the image, and 404s.
	for kind, n := range map[string]int{"warcinfo": 2, "metadata": 2, "resource metadata:": 4, "response 301": 2, "media image/png": 2, "revisit unresolved": 0} {
		if skips[kind] != n {
			t.Errorf("skipped %d records of kind %q, want %d (all skips: %v)", skips[kind], kind, n, skips)
		}
	}
	if skips["response 404"] < 2 || skips["request"] < 2*len(want) {
		t.Errorf("skips %v: want 404s and requests of both crawls", skips)
	}

	// Without the first crawl, the second's revisits cannot be resolved:
	// they are skipped and counted, not errors.
	skips = map[string]int{}
	n := 0
	for _, err := range (Options{OnSkip: func(s Skip) { skips[s.Kind]++ }}).Open(second) {
		if err != nil {
			t.Errorf("Open(second) alone: %v", err)
		}
		n++
	}
	if n != 0 || skips["revisit unresolved"] < len(site.Paths)+2 {
		t.Errorf("second crawl alone: %d documents, skips %v; want 0 documents and at least %d unresolved revisits", n, skips, len(site.Paths)+2)
	}
}

func TestDirSkips(t *testing.T) {
	var got []string
	o := Options{OnSkip: func(s Skip) { got = append(got, s.Kind+" "+s.ID) }}
	for range o.Dir("testdata/dir") {
	}
	if want := []string{"file .css style.css"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Dir skipped %q, want %q", got, want)
	}
}
