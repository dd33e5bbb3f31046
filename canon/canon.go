package canon

import (
	"bytes"
	"cmp"
	"errors"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
)

// ContentMode selects which text of a page [HTML] keeps.
type ContentMode int

const (
	// ContentAll keeps the whole visible text. It is the zero value.
	ContentAll ContentMode = iota
	// ContentMain keeps the main content: boilerplate and site template
	// (navigation, headers, footers, sidebars, link lists) removed.
	ContentMain
)

// DefaultMaxBytes is the input cap used when [Options.MaxBytes] is zero.
const DefaultMaxBytes = 8 << 20

// ErrBinary is returned for input that is not text (a NUL byte in its
// first 1024 bytes, after any UTF-16 byte order mark was ruled out).
var ErrBinary = errors.New("canon: input is binary, not text")

// Options configures [HTML] and [Text]. The zero value is ready to use.
type Options struct {
	// MaxBytes caps the input bytes read; longer input is cut and the
	// Document reports Truncated. Zero or negative means DefaultMaxBytes
	// (8 MiB).
	MaxBytes int
	// Enough lets Text stop early on a long line, for a caller that reads
	// only the head of the Document (see [Enough]). Zero: the whole text.
	// HTML ignores it.
	Enough Enough
	// Content selects the whole visible text (ContentAll, the default) or
	// the main content only (ContentMain). Text ignores it.
	Content ContentMode
	// Links makes HTML record the targets of the page's links
	// ([Document.Links]; Text records that it has none); off by default,
	// since only a calibration reads them and on a page of generated
	// tables they cost a twentieth of canonicalizing it.
	Links bool
}

// Enough is the head of a plain text's Document that a caller reads (a
// signature of a capped prefix): the canonical text's first Bytes bytes and
// the byte after them, its first Tokens tokens, and its sentences until
// their lengths add up to more than Bytes. With both fields set, [Text]
// cuts a line longer than it needs at a space and ends the text there
// when the Document of that head holds all of these, more than Tokens
// tokens and more than Bytes bytes of sentences before its last (which
// the cut may have shortened); else it reads the whole text. The cut
// Document reports Cut: its Text is the whole Document's Text up to a
// word's end, with a line end added; its Tokens and its Sentences but the
// last are the first ones of the whole Document's.
type Enough struct{ Bytes, Tokens int }

// Document is the canonical form of one page. Tokens and Sentences are
// substrings of Text.
type Document struct {
	// Text is the canonical text (see [Normalize]); every block (paragraph,
	// list item, heading, table cell, ...) ends with "\n" and words are
	// single-spaced. With ContentAll the title is its first line.
	Text string
	// Tokens are the word tokens of Text in order (see [Tokenize]).
	Tokens []string
	// Sentences are the sentences of Text in order, split after ". ",
	// "! ", "? ", "。", "！", "？" and at line ends; sentences without a
	// token are dropped.
	Sentences []string
	// Title is the first <title>, entities decoded and white space
	// collapsed but otherwise not normalized; "" for Text.
	Title string
	// Lang is the lang attribute of <html>, as written; "" if absent.
	Lang string
	// Charset is the WHATWG name of the encoding used to decode the input,
	// such as "utf-8", "windows-1252", "windows-1251", "shift_jis", "gbk".
	Charset string
	// Truncated reports that the input was longer than Options.MaxBytes
	// and only its prefix was used.
	Truncated bool
	// Cut reports that Text stopped at [Options.Enough]: the Document is
	// the head of the whole text's.
	Cut bool
	// MainFallback reports that ContentMain kept implausibly little of
	// the page (under 3 % of its text) and the whole text was kept
	// instead, as with ContentAll.
	MainFallback bool
	// Links are the targets of the page's <a href> links that stay on
	// its site as written ([LinkTarget]: relative paths, queries and
	// fragments; a link with a scheme or a host is left out), in page
	// order, repeats kept, whatever the content mode: what a copy of the
	// HTML (a mirror) keeps and a page rewritten for another release or
	// site may not. Only with [Options.Links]: empty, not nil, for a page
	// without such a link and for Text; nil without it.
	Links []string
}

// HTML returns the canonical form of the HTML page b. contentType is the
// HTTP Content-Type header value and may be "". The encoding is taken from
// a byte order mark, the charset parameter of contentType, a <meta>
// declaration in the first 64 KiB, then UTF-8 if b is valid UTF-8, else
// windows-1252. Text is extracted in one streaming pass over the
// golang.org/x/net/html tokenizer: the contents of script, style, noscript,
// template, svg, math, iframe, noembed and noframes and comments are
// dropped, block elements end a line and entities are decoded. HTML
// returns [ErrBinary] for binary input; any other input, however
// malformed, gives a Document. b is not retained.
func HTML(b []byte, contentType string, o Options) (Document, error) {
	return parseHTML(b, contentType, o, nil)
}

// parseHTML is [HTML]; head, when not nil, is called with the decoded page
// before its text is extracted.
func parseHTML(b []byte, contentType string, o Options, head func(u []byte)) (Document, error) {
	var d Document
	b, d.Truncated = limit(b, o.MaxBytes)
	e, name := determineEncoding(b, contentType, d.Truncated)
	if !strings.HasPrefix(name, "utf-16") && isBinary(b) {
		return Document{}, ErrBinary
	}
	d.Charset = name
	u := decode(b, e, name)
	if head != nil {
		head(u)
	}
	x := getExtractor(o.Content == ContentMain)
	x.readLinks = o.Links
	x.out.Grow(len(u) / 6)
	x.run(u)
	if x.main {
		x.mainText()
	}
	d.Title, d.Lang, d.MainFallback = x.title, x.lang, x.fallback
	d.Links = x.links()
	d.finish(x.out.String())
	putExtractor(x)
	return d, nil
}

// Text returns the canonical form of the plain text b. The encoding is
// UTF-8 or UTF-16 by byte order mark, else UTF-8 if b is valid UTF-8, else
// windows-1252; invalid UTF-8 is replaced. A line that is blank or starts
// with a bullet or numbering starts a new block; other line breaks within
// a paragraph are spaces, so re-wrapped copies of a text are equal. Text
// returns [ErrBinary] for binary input.
func Text(b []byte, o Options) (Document, error) {
	return TextType(b, "", o)
}

// TextType is [Text] for a text served with the HTTP Content-Type
// contentType (which may be ""): a charset parameter other than UTF-8
// decides the encoding unless a byte order mark does (a windows-1251 or
// Shift_JIS text says so only there).
func TextType(b []byte, contentType string, o Options) (Document, error) {
	var d Document
	whole := b
	b, d.Truncated = limit(b, o.MaxBytes)
	e, name := textEncoding(b, contentType, d.Truncated)
	if !strings.HasPrefix(name, "utf-16") && isBinary(b) {
		return Document{}, ErrBinary
	}
	d.Charset = name
	u := b
	if name != "utf-8" || d.Truncated {
		u = decode(b, e, name) // valid UTF-8 needs no decoding: sniff checked it
	}
	// With Enough, a line longer than head is cut at a space before it
	// and ends the text (see Enough).
	head := 0
	if o.Enough.Bytes > 0 && o.Enough.Tokens > 0 {
		head = max(3*o.Enough.Bytes/2, 9*o.Enough.Tokens)
	}
	// A pooled extractor lends its normalizer and its line buffer (for
	// the paragraph), grown by earlier pages: growing them anew was a
	// quarter of the bytes a plain-text page allocated.
	x := getExtractor(false)
	defer putExtractor(x)
	var (
		n    = &x.n
		out  strings.Builder
		para = x.line // canonical text of the current paragraph
	)
	out.Grow(len(u))
	end := func() {
		if len(para) > 0 {
			out.Write(para)
			out.WriteByte('\n')
			para = para[:0]
		}
	}
	for len(u) > 0 {
		line := u
		if i := bytes.IndexByte(u, '\n'); i >= 0 {
			line, u = u[:i], u[i+1:]
		} else {
			u = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			end() // blank line
			continue
		}
		if head > 0 && len(line) > head {
			// Cut after a word, where NFKC and the folding start
			// afresh; the line keeps what marked and stripMarkers
			// read of it (32 bytes, and a few markers).
			if p := bytes.LastIndexByte(line[:head], ' '); p >= 0 && len(bytes.TrimSpace(line[:p])) >= 32 {
				line, u, d.Cut = line[:p], nil, true
			}
		}
		if marked(n, line) {
			end()
		}
		s := n.line(line)
		if d.Cut && len(s) < 64 {
			o.Enough = Enough{} // too little left after the markers
			return TextType(whole, contentType, o)
		}
		if len(s) == 0 {
			continue
		}
		if len(para) > 0 {
			para = append(para, ' ')
		}
		para = append(para, s...)
	}
	end()
	x.line = para
	if o.Links {
		d.Links = []string{} // read, and a text has none
	}
	d.finish(out.String())
	if d.Cut && !o.Enough.heldBy(&d) {
		o.Enough = Enough{}
		return TextType(whole, contentType, o)
	}
	return d, nil
}

// heldBy reports whether the cut Document d holds all that e asks for
// (see Enough).
func (e Enough) heldBy(d *Document) bool {
	if len(d.Tokens) < e.Tokens || len(d.Text) <= e.Bytes+1 {
		return false
	}
	total := 0
	for _, s := range d.Sentences[:max(len(d.Sentences)-1, 0)] {
		if total += len(s); total > e.Bytes {
			return true
		}
	}
	return false
}

// marked reports whether a raw line starts with a bullet or numbering.
func marked(n *normalizer, line []byte) bool {
	t := bytes.TrimSpace(line)
	if r, _ := utf8.DecodeRune(t); r == '-' || r == '–' || r == '—' {
		return true // dash bullets are already spaces after folding
	}
	f := n.fold(t[:min(len(t), 32)])
	return len(stripMarkers(f)) != len(f)
}

// limit cuts b to the MaxBytes cap.
func limit(b []byte, maxBytes int) ([]byte, bool) {
	maxBytes = cmp.Or(max(maxBytes, 0), DefaultMaxBytes)
	if len(b) > maxBytes {
		return b[:maxBytes], true
	}
	return b, false
}

// decode converts b to valid UTF-8.
func decode(b []byte, e encoding.Encoding, name string) []byte {
	if name != "utf-8" {
		if u, err := e.NewDecoder().Bytes(b); err == nil {
			return u
		}
		// Decoders replace invalid input rather than fail; treat any
		// error as undecodable and fall through to UTF-8 repair.
	}
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

// finish sets Text, Tokens and Sentences from the canonical text.
func (d *Document) finish(text string) {
	d.Text = text
	d.Tokens, d.Sentences = scan(text, make([]string, 0, tokenCap(text)), make([]string, 0, len(text)/80+1), true)
}
