package demo

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// display is a page's visible text as written (case and punctuation
// kept, white space collapsed) and, for each word of its canonical text
// (doc.words), the word's span in it: snippets and highlights are cut
// from the canonical text, where the words were found, and shown from
// this text, as a real engine shows its stored field.
type display struct {
	text  string
	words []word // parallel to doc.words: off and end in text
	// keep[k] reports that the text between words k-1 and k is shown as
	// written (see appendWords); computed once, as the page is indexed.
	keep []bool
	// safe reports that text needs no JSON escaping.
	safe bool
}

// displayOf aligns the canonical words of flat (the canonical text,
// lines joined) with the visible text of body; nil when they cannot be
// aligned (a word canon spells otherwise), and the snippets stay
// canonical.
func displayOf(body []byte, plain bool, flat string, words []word) *display {
	if len(words) == 0 {
		return nil
	}
	text := visibleText(body, plain)
	dw := wordSpans(text)
	eq := func(k, i int) bool {
		w := words[i]
		return k < len(dw) && strings.EqualFold(text[dw[k].off:dw[k].end], flat[w.off:w.end])
	}
	// run reports whether the n canonical words from i match the display
	// words from k.
	run := func(k, i, n int) bool {
		for m := range min(n, len(words)-i) {
			if !eq(k+m, i+m) {
				return false
			}
		}
		return true
	}
	const anchor, window = 5, 64
	out := &display{text: text, words: make([]word, len(words))}
	k := -1
	for c := range dw {
		if run(c, 0, anchor) {
			k = c
			break
		}
	}
	if k < 0 {
		return nil
	}
	for i := range words {
		if !eq(k, i) {
			// Text canon left out (a caption, a skipped block): find
			// where the canonical words resume.
			next := -1
			for c := k + 1; c < len(dw) && c < k+window; c++ {
				if run(c, i, 3) {
					next = c
					break
				}
			}
			if next < 0 {
				return nil
			}
			k = next
		}
		out.words[i] = word{off: dw[k].off, end: dw[k].end, term: words[i].term}
		k++
	}
	out.keep = make([]bool, len(out.words))
	for i := 1; i < len(out.words); i++ {
		out.keep[i] = strings.Trim(text[out.words[i-1].end:out.words[i].off], gapKept) == ""
	}
	out.safe = len(appendJSONChars(nil, text)) == len(text)
	return out
}

// wordSpans returns the spans of text's words: runs of letters, digits
// and marks, as canon's tokens are.
func wordSpans(text string) []word {
	var out []word
	start := -1
	for i, r := range text {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, word{off: int32(start), end: int32(i)})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, word{off: int32(start), end: int32(len(text))})
	}
	return out
}

// visibleText returns the text of an HTML page's body as a reader sees
// it, white space collapsed; a plain-text page as it is, collapsed.
func visibleText(body []byte, plain bool) string {
	var b strings.Builder
	space := true
	add := func(s []byte) {
		for len(s) > 0 {
			r, n := utf8.DecodeRune(s)
			s = s[n:]
			if r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\f' || r == 0xa0 {
				if !space {
					b.WriteByte(' ')
					space = true
				}
				continue
			}
			b.WriteRune(r)
			space = false
		}
	}
	if plain {
		add(body)
		return strings.TrimSpace(b.String())
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	skip := 0 // depth inside elements whose text is not shown
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(b.String())
		case html.StartTagToken:
			if name, _ := z.TagName(); hidden[string(name)] {
				skip++
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); hidden[string(name)] && skip > 0 {
				skip--
			}
		case html.TextToken:
			if skip == 0 {
				add(z.Text())
				add([]byte(" ")) // blocks and inline elements alike: a word never runs across tags here
			}
		}
	}
}

// gapKept are the characters kept as written between two words of a
// snippet: spaces and the punctuation of running text.
const gapKept = " -–—'’‘\".,:;!?()[]/“”…"

// hidden are the elements whose text a reader does not see.
var hidden = map[string]bool{"head": true, "script": true, "style": true, "noscript": true, "template": true, "svg": true, "math": true, "iframe": true}

// appendWords appends the visible text of words [i, j) with esc: between
// two words the text as written when it holds no other word (a hyphen,
// an apostrophe, a full stop), else a space, so text canon left out
// (navigation, captions, a heading's ¶) is left out here too. Words whose
// term is in terms are wrapped in <em>, as Elasticsearch highlights; it
// reports whether one was. Runs of text are written whole, as one esc.
func (sh *display) appendWords(dst []byte, i, j int, esc func([]byte, string) []byte, terms []int32) ([]byte, bool) {
	if sh.safe {
		esc = appendRaw
	}
	ws, t := sh.words, sh.text
	run := ws[i].off // start of the text not yet written
	marked := false
	for k := i; k < j; k++ {
		w := ws[k]
		if k > i && !sh.keep[k] {
			dst = esc(dst, t[run:ws[k-1].end])
			dst = append(dst, ' ')
			run = w.off
		}
		if terms != nil && containsID(terms, w.term) {
			dst = esc(dst, t[run:w.off])
			dst = append(dst, "<em>"...)
			dst = esc(dst, t[w.off:w.end])
			dst = append(dst, "</em>"...)
			run, marked = w.end, true
		}
	}
	return esc(dst, t[run:ws[j-1].end]), marked
}
