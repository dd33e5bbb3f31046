package corpus

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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

	urls, skips := readCrawls(t, site, pages, first, second)
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

// TestWgetRevisitsOfWholeGzip reads the revisits of a second wget crawl
// whose first crawl was written plain (--no-warc-compression) and then
// gzipped whole, as an archive compressed after the crawl is: every
// record of the first crawl lies in one gzip member, most of them more
// than maxRevisitScan records into it. Every page of the second crawl must
// resolve to its page of the first, none "revisit unresolved".
func TestWgetRevisitsOfWholeGzip(t *testing.T) {
	base := crawlPages(t)
	pages := map[string][]byte{}
	for i := 0; len(pages) < 150; i++ {
		for name, b := range base {
			// Each copy its own payload (wget's dedup goes by payload
			// digest), the page otherwise the real one.
			pages[fmt.Sprintf("v%03d/%s", i, name)] = fmt.Appendf(slices.Clone(b), "<!-- copy %d -->", i)
		}
	}
	site := crawltest.NewSite(t, pages)
	dir := t.TempDir()
	crawltest.Crawl(t, site, dir, "first", true, "", "--no-warc-compression")
	plain, err := os.ReadFile(filepath.Join(dir, "first.warc"))
	if err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "first.warc.gz")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(first, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	second := crawltest.Crawl(t, site, dir, "second", false, filepath.Join(dir, "first.cdx"))

	urls, skips := readCrawls(t, site, pages, first, second)
	if skips["revisit unresolved"] != 0 {
		t.Errorf("%d revisits unresolved (all skips: %v)", skips["revisit unresolved"], skips)
	}
	for _, p := range site.Paths {
		if urls[p] < 2 {
			t.Errorf("%s: %d documents, want one from each crawl", p, urls[p])
		}
	}
}

// readCrawls reads the WARC files of crawls of site one after the other,
// sharing one Targets, and checks that each document is a page served as
// HTML with the body served. It returns the documents by URL path and the
// skipped records by kind.
func readCrawls(t *testing.T, site *crawltest.Site, pages map[string][]byte, crawls ...string) (urls, skips map[string]int) {
	t.Helper()
	urls, skips = map[string]int{}, map[string]int{}
	o := Options{Targets: &Targets{}, OnSkip: func(s Skip) { skips[s.Kind]++ }}
	for _, in := range crawls {
		for doc, err := range o.Open(in) {
			if err != nil {
				t.Errorf("Open(%s): %v", filepath.Base(in), err)
				continue
			}
			u := strings.TrimPrefix(doc.URL, site.URL)
			urls[u]++
			if want, ok := pages[strings.TrimPrefix(u, "/")]; ok && string(doc.Body) != string(want) {
				t.Errorf("%s (%s): body of %d bytes differs from the page served (%d bytes)", u, filepath.Base(in), len(doc.Body), len(want))
			}
			if !strings.HasPrefix(doc.ContentType, "text/html") {
				t.Errorf("%s: content type %q", u, doc.ContentType)
			}
		}
	}
	return urls, skips
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

// TestDirWgetMirror walks the folder that wget -r writes of a site whose
// pages' URLs do not end in .html: wget saves them under their URL's name
// ("about", "list.html?page=2", "post.php?id=3"), and each is a page, told
// by its bytes or by its extension before the query; the plain text
// README and the style sheet are not.
func TestDirWgetMirror(t *testing.T) {
	var bodies [][]byte
	for _, b := range crawlPages(t) {
		bodies = append(bodies, b)
	}
	mux := http.NewServeMux()
	serve := func(pattern, contentType string, body []byte) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.Write(body)
		})
	}
	serve("/{$}", "text/html", []byte(`<html><body><a href="/about">about</a> <a href="/list.html?page=2">list</a>
<a href="/post.php?id=3">post</a> <a href="/README">readme</a> <link rel="stylesheet" href="/style.css?v=3"></body></html>`))
	serve("/about", "text/html", bodies[0])
	serve("/list.html", "text/html", bodies[1])
	serve("/post.php", "text/html", bodies[2])
	serve("/README", "text/plain", []byte("A plain text file without an extension."))
	serve("/style.css", "text/css", []byte("body { color: black }"))
	site := httptest.NewServer(mux)
	defer site.Close()
	dir := t.TempDir()
	crawltest.Wget(t, dir, "--recursive", "--level=1", "--page-requisites", "--no-host-directories", site.URL+"/")

	var ids []string
	skips := map[string]int{}
	for doc, err := range (Options{OnSkip: func(s Skip) { skips[s.Kind]++ }}).Dir(dir) {
		if err != nil {
			t.Errorf("Dir: %v", err)
			continue
		}
		if doc.ContentType != "text/html" {
			t.Errorf("%s: content type %q, want text/html", doc.ID, doc.ContentType)
		}
		ids = append(ids, doc.ID)
	}
	slices.Sort(ids)
	if want := []string{"about", "index.html", "list.html?page=2", "post.php?id=3"}; !slices.Equal(ids, want) {
		t.Errorf("documents %q, want %q", ids, want)
	}
	if want := map[string]int{"file without extension": 1, "file .css": 1}; fmt.Sprint(skips) != fmt.Sprint(want) {
		t.Errorf("skipped %v, want %v", skips, want)
	}
}
