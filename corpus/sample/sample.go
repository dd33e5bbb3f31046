// Package sample embeds a small real corpus with near-duplicates: 53 pages
// of the LLVM documentation as Debian's llvm-N-doc packages ship them, in
// releases 13, 14, 15, 16, 19 and 22. Twelve pages appear in three to five
// releases each (43 documents: the same Sphinx page in a slightly different
// text and template, so each page forms a near-duplicate cluster), and ten
// pages appear once (singletons). The pages are licensed Apache-2.0 WITH
// LLVM-exception (see LICENSE and README.md in this directory).
//
// It serves the demo mode of winnow serve, examples and tests that need
// real pages without files on disk.
package sample

import (
	"embed"
	"iter"
	"strings"

	"github.com/winnow-search/winnow/corpus"
)

//go:embed html
var files embed.FS

// Count is the number of documents that [Docs] yields.
const Count = 53

// Docs yields the sample documents in lexical path order. A Doc's ID is
// "sample://llvm/<release>/<page>", e.g.
// "sample://llvm/13/CommandGuide/llvm-as" for html/13/CommandGuide/llvm-as.html,
// its URL is "" (llvm.org does not serve every old release at a stable
// address), and its ContentType "text/html". Pages with the same <page>
// under different releases are near-duplicates. Docs may be called any
// number of times; each call reads the embedded files afresh.
func Docs() iter.Seq2[corpus.Doc, error] {
	return func(yield func(corpus.Doc, error) bool) {
		for doc, err := range (corpus.Options{}).FS(files, "html") {
			if err == nil {
				doc.ID = "sample://llvm/" + strings.TrimSuffix(doc.ID, ".html")
			}
			if !yield(doc, err) {
				return
			}
		}
	}
}

// DocsAt is [Docs] with each Doc's URL set to where the demo engine
// (internal/demo) serves the page on the origin base: base + "/pages/" +
// release + "/" + page + ".html", e.g.
// "http://127.0.0.1:8081/pages/13/Benchmarking.html" for
// "sample://llvm/13/Benchmarking" on "http://127.0.0.1:8081". Loaded into
// the cluster service under these URLs, the sample is known to the proxy
// in front of the demo engine on base.
func DocsAt(base string) iter.Seq2[corpus.Doc, error] {
	base = strings.TrimSuffix(base, "/")
	return func(yield func(corpus.Doc, error) bool) {
		for doc, err := range Docs() {
			if err == nil {
				doc.URL = base + "/pages/" + strings.TrimPrefix(doc.ID, "sample://llvm/") + ".html"
			}
			if !yield(doc, err) {
				return
			}
		}
	}
}

// Page returns the page name of a sample ID, which is the same for the
// documents of one near-duplicate cluster: Page("sample://llvm/13/FaultMaps")
// is "FaultMaps". It returns "" for an ID that is not a sample ID.
func Page(id string) string {
	rest, ok := strings.CutPrefix(id, "sample://llvm/")
	if !ok {
		return ""
	}
	_, page, _ := strings.Cut(rest, "/")
	return page
}
