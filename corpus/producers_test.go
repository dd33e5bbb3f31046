package corpus

import (
	"strings"
	"testing"

	"github.com/winnow-search/winnow/page"
)

// canonicalTexts reads the input at path and returns the canonical text
// page.Signer makes of each document, by URL.
func canonicalTexts(t *testing.T, path string) map[string]string {
	t.Helper()
	texts := map[string]string{}
	for doc, err := range Open(path) {
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

// TestProducersAgree reads the same pages as two producers wrote them: as
// pywb's recorder stored the HTTP responses (../warc/testdata/pywb.warc.gz:
// windows-1251 declared only in the HTTP header of a text/plain page) and
// as pandas wrote them to JSON Lines after Python decoded them by their
// declared charsets (testdata/pandas.jsonl: every non-ASCII character a
// \u escape). Each page must give one canonical text, whoever wrote it.
func TestProducersAgree(t *testing.T) {
	warcTexts := canonicalTexts(t, "../warc/testdata/pywb.warc.gz")
	jsonTexts := canonicalTexts(t, "testdata/pandas.jsonl")
	for _, p := range []string{"chunked.html", "ru.txt"} {
		u := "http://127.0.0.1:8766/" + p
		w, j := warcTexts[u], jsonTexts[u]
		if w == "" || w != j {
			t.Errorf("%s: WARC text %.80q, JSON Lines text %.80q, want the same", p, w, j)
		}
	}
	if w := warcTexts["http://127.0.0.1:8766/ru.txt"]; !strings.HasPrefix(w, "съешь же ещё") {
		t.Errorf("ru.txt: text %.40q, want the Russian the page holds", w)
	}
}
