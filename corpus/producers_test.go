package corpus

import (
	"strings"
	"testing"

	"github.com/winnow-search/winnow/page"
)

// canonicalTexts reads the input at path with o and returns the
// canonical text page.Signer makes of each document, by URL.
func canonicalTexts(t *testing.T, o Options, path string) map[string]string {
	t.Helper()
	texts := map[string]string{}
	for doc, err := range o.Open(path) {
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		res, err := page.Signer{}.Sign(doc.Body, doc.ContentType)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, doc.URL, err)
		}
		texts[doc.URL] = res.Doc.Text
	}
	return texts
}

// TestProducersAgree reads the same pages as producers wrote them: as
// pywb's recorder stored the HTTP responses (../warc/testdata/pywb.warc.gz:
// windows-1251 declared only in the HTTP header of a text/plain page, only
// in the <meta> of an HTML page), as pandas wrote them to JSON Lines after
// Python decoded them by their declared charsets (testdata/pandas.jsonl:
// every non-ASCII character a \u escape; the HTML keeps its <meta>), and
// as pyarrow wrote them to Parquet, decoded in a string column and as
// served in a binary one (testdata/charset.parquet). Each page must give
// one canonical text, whoever wrote it.
func TestProducersAgree(t *testing.T) {
	inputs := map[string]map[string]string{
		"WARC":           canonicalTexts(t, Options{}, "../warc/testdata/pywb.warc.gz"),
		"JSON Lines":     canonicalTexts(t, Options{}, "testdata/pandas.jsonl"),
		"Parquet string": canonicalTexts(t, Options{}, "testdata/charset.parquet"),
		"Parquet binary": canonicalTexts(t, Options{Fields: JSONLFields{HTML: []string{"raw"}}}, "testdata/charset.parquet"),
	}
	for _, p := range []string{"chunked.html", "ru.html", "ru.txt"} {
		u := "http://127.0.0.1:8766/" + p
		want := inputs["WARC"][u]
		for name, texts := range inputs {
			if got, ok := texts[u]; ok && got != want {
				t.Errorf("%s: %s text %.80q, WARC text %.80q, want the same", p, name, got, want)
			}
		}
	}
	// A page served without a Content-Type is sniffed, as a browser does.
	if w := inputs["WARC"]["http://127.0.0.1:8766/noctype.html"]; w != inputs["WARC"]["http://127.0.0.1:8766/chunked.html"] {
		t.Errorf("noctype.html: text %.80q, want chunked.html's, the same page", w)
	}
	// Common Crawl's WET files hold the pages' text as conversion records
	// (testdata/wet.warc.wet.gz, written by warcio in their layout).
	wet := canonicalTexts(t, Options{}, "testdata/wet.warc.wet.gz")
	if u := "http://127.0.0.1:8766/ru.txt"; len(wet) != 2 || wet[u] != inputs["WARC"][u] {
		t.Errorf("WET: %d pages, ru.txt text %.80q, want 2 pages and the WARC's text %.80q", len(wet), wet[u], inputs["WARC"][u])
	}
	for _, p := range []string{"ru.html", "ru.txt"} {
		if w := inputs["WARC"]["http://127.0.0.1:8766/"+p]; !strings.Contains(w, "съешь же ещё") {
			t.Errorf("%s: text %.40q, want the Russian the page holds", p, w)
		}
	}
}
