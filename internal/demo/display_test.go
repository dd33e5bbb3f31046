package demo

import (
	"strings"
	"testing"

	"github.com/winnow-search/winnow/canon"
)

// TestDisplay aligns a page's canonical words with its visible text and
// cuts a snippet from it: the page's case and punctuation, the
// navigation canon left out left out.
func TestDisplay(t *testing.T) {
	body := []byte(`<html><head><title>T</title><style>p{}</style></head><body><nav>Home ¶ Docs</nav>` +
		`<main><h1>LLVM’s Code-Review Policy ¶</h1><p>Reviews help: keep the code’s quality high, always.</p></main></body></html>`)
	cd, err := canon.HTML(body, "text/html", canon.Options{Content: canon.ContentMain})
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.ReplaceAll(cd.Text, "\n", " ")
	offs := offsets(cd)
	words := make([]word, len(cd.Tokens))
	for i, tok := range cd.Tokens {
		words[i] = word{off: offs[i], end: offs[i] + int32(len(tok))}
	}
	sh := displayOf(body, false, flat, words)
	if sh == nil {
		t.Fatalf("not aligned: canonical %q, visible %q", flat, visibleText(body, false))
	}
	for i, w := range words {
		if flat[w.off:w.end] == "code" {
			words[i].term = 7
			sh.words[i].term = 7
		}
	}
	b, marked := sh.appendWords(nil, 0, len(words), appendRaw, []int32{7})
	got := string(b)
	if !marked {
		t.Error("no word marked")
	}
	if want := "LLVM’s <em>Code</em>-Review Policy Reviews help: keep the <em>code</em>’s quality high, always"; got != want {
		t.Errorf("shown = %q, want %q", got, want)
	}
}

// TestDisplaySample checks that most sample pages align, so their
// snippets show the page's text (the others show the canonical text).
func TestDisplaySample(t *testing.T) {
	e := testEngine(t)
	n := 0
	for i := range e.docs {
		if e.docs[i].shown != nil {
			n++
		}
	}
	if n < len(e.docs)*3/4 {
		t.Errorf("%d of %d sample pages aligned with their visible text, want at least three quarters", n, len(e.docs))
	}
}
