package canon

import (
	"bytes"
	"strings"
	"sync"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// blockTag reports whether an element starts and ends a line of text.
func blockTag(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Br,
		atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div,
		atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer,
		atom.Form, atom.Frameset, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Head, atom.Header, atom.Hgroup, atom.Hr, atom.Html, atom.Legend, atom.Li,
		atom.Listing, atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.Optgroup, atom.Option,
		atom.P, atom.Plaintext, atom.Pre, atom.Search, atom.Section, atom.Select,
		atom.Summary, atom.Table, atom.Tbody, atom.Td, atom.Textarea, atom.Tfoot, atom.Th,
		atom.Thead, atom.Title, atom.Tr, atom.Ul, atom.Xmp:
		return true
	}
	return false
}

// hiddenRaw reports whether the raw text content of an element is not
// rendered (the tokenizer returns it as one text token).
func hiddenRaw(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Iframe, atom.Noembed, atom.Noframes:
		return true
	}
	return false
}

// voidTag reports whether an element has no end tag.
func voidTag(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img,
		atom.Input, atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr, atom.Param:
		return true
	}
	return false
}

// breakout reports whether a start tag ends SVG or MathML foreign content
// (HTML Living Standard, "parsing main inforeign").
func breakout(a atom.Atom) bool {
	switch a {
	case atom.B, atom.Big, atom.Blockquote, atom.Body, atom.Br, atom.Center, atom.Code,
		atom.Dd, atom.Div, atom.Dl, atom.Dt, atom.Em, atom.Embed, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Head, atom.Hr, atom.I, atom.Img, atom.Li,
		atom.Listing, atom.Menu, atom.Meta, atom.Nobr, atom.Ol, atom.P, atom.Pre, atom.Ruby,
		atom.S, atom.Small, atom.Span, atom.Strong, atom.Strike, atom.Sub, atom.Sup,
		atom.Table, atom.Tt, atom.U, atom.Ul, atom.Var:
		return true
	}
	return false
}

// Element flags for ContentMain, inherited down the element stack.
const (
	fMain    uint8 = 1 << iota // inside a main-content container
	fBoiler                    // inside navigation, header, footer, sidebar, ...
	fLink                      // inside <a>
	fHeading                   // inside h1-h6
)

// frame is an open element in ContentMain mode.
type frame struct {
	a     atom.Atom
	flags uint8 // cumulative flags of this element and its ancestors
	first int32 // index in extractor.blocks of the element's first block
}

// span is the run of blocks [first, end) of a closed block element in
// ContentMain mode: the candidate containers of [extractor.widen].
type span struct{ first, end int32 }

// block is one line of text in ContentMain mode.
type block struct {
	start, end int // normalized text in extractor.blockBuf
	raw, link  int // raw bytes of text, of which inside links
	flags      uint8
}

// extractor converts one HTML page to canonical text. It is not safe for
// concurrent use.
type extractor struct {
	main bool
	n    normalizer
	line []byte // raw text of the current line
	out  strings.Builder

	title string
	lang  string
	attrs tagAttrs // the attributes of the tags that need them

	// readLinks records the link targets ([LinkTarget]) in linkBuf, one
	// after another, linkEnds where each ends.
	readLinks bool
	linkBuf   []byte
	linkEnds  []int32

	// ContentMain state.
	stack     []frame
	blocks    []block
	blockBuf  []byte
	lineRaw   int
	lineLink  int
	lineFlags uint8
	spans     []span
	sums      []int32 // prefix sums for widen
	// fallback reports that the main content was implausibly small and
	// the whole text was kept.
	fallback bool
}

// extractors keeps extractors between pages: their line, block and
// element buffers and the attribute tokenizer (a 4 KB buffer) would
// otherwise be grown anew for every page, which was a fifth of the bytes
// `winnow dedup` allocated on the embedded sample.
var extractors = sync.Pool{New: func() any { return new(extractor) }}

// maxPooledBuf is the largest buffer an extractor keeps when it goes back
// to the pool, so that one huge page does not pin its buffers.
const maxPooledBuf = 1 << 20

// getExtractor returns an extractor ready for a page, main telling
// whether it extracts the main content.
func getExtractor(main bool) *extractor {
	x := extractors.Get().(*extractor)
	*x = extractor{
		main:     main,
		n:        x.n,
		line:     x.line[:0],
		attrs:    x.attrs,
		linkBuf:  x.linkBuf[:0],
		linkEnds: x.linkEnds[:0],
		stack:    x.stack[:0],
		blocks:   x.blocks[:0],
		blockBuf: x.blockBuf[:0],
		spans:    x.spans[:0],
		sums:     x.sums[:0],
	}
	return x
}

// putExtractor returns x to the pool. Its output (x.out) belongs to the
// Document and is dropped.
func putExtractor(x *extractor) {
	if cap(x.blockBuf) > maxPooledBuf || cap(x.line) > maxPooledBuf || cap(x.n.out) > maxPooledBuf ||
		cap(x.n.nfkc) > maxPooledBuf || cap(x.blocks) > maxPooledBuf/32 || cap(x.spans) > maxPooledBuf/8 || cap(x.sums) > maxPooledBuf/4 ||
		cap(x.linkBuf) > maxPooledBuf || cap(x.linkEnds) > maxPooledBuf/4 {
		return
	}
	x.out = strings.Builder{}
	x.attrs.release()
	extractors.Put(x)
}

// flags returns the cumulative flags of the innermost open element.
func (x *extractor) flags() uint8 {
	if len(x.stack) == 0 {
		return 0
	}
	return x.stack[len(x.stack)-1].flags
}

// appendText adds raw text to the current line.
func (x *extractor) appendText(t []byte) {
	if len(t) == 0 {
		return
	}
	if x.main {
		f := x.flags()
		if len(x.line) == 0 {
			x.lineFlags = f
		} else {
			x.lineFlags |= f & fHeading
		}
		x.lineRaw += len(t)
		if f&fLink != 0 {
			x.lineLink += len(t)
		}
	}
	x.line = append(x.line, t...)
}

// flush ends the current line.
func (x *extractor) flush() {
	if len(x.line) == 0 {
		return
	}
	s := x.n.line(x.line)
	x.line = x.line[:0]
	if len(s) > 0 {
		if x.main {
			start := len(x.blockBuf)
			x.blockBuf = append(x.blockBuf, s...)
			x.blocks = append(x.blocks, block{start, len(x.blockBuf), x.lineRaw, x.lineLink, x.lineFlags})
		} else {
			x.out.Write(s)
			x.out.WriteByte('\n')
		}
	}
	x.lineRaw, x.lineLink, x.lineFlags = 0, 0, 0
}

// run extracts the text of the UTF-8 encoded page b.
func (x *extractor) run(b []byte) {
	l := lexer{src: b}
	var (
		rawNext   bool // the next text token is hidden raw text
		titleNext bool // the next text token is the title
		skip      int  // depth inside <template>
		foreign   int  // depth inside <svg> or <math>
		pre       int  // depth inside <pre>, <textarea>, <listing>, <plaintext>
		ruby      bool // inside <rt> or <rp>: ruby annotations are dropped
	)
	for {
		tt := l.next()
		switch tt {
		case html.ErrorToken:
			x.flush()
			return
		case html.TextToken:
			if rawNext || skip > 0 || foreign > 0 || ruby {
				rawNext, titleNext = false, false
				continue
			}
			t := l.text()
			if titleNext {
				titleNext = false
				if x.title == "" {
					x.title = strings.Join(strings.Fields(string(t)), " ")
					if !x.main {
						x.flush()
						x.appendText(t)
						x.flush()
					}
				}
				continue
			}
			if pre == 0 {
				x.appendText(t)
				continue
			}
			for {
				i := bytes.IndexByte(t, '\n')
				if i < 0 {
					x.appendText(t)
					break
				}
				x.appendText(t[:i])
				x.flush()
				t = t[i+1:]
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			rawNext, titleNext = false, false
			a, hasAttr := tagAtom(l.raw())
			start := tt == html.StartTagToken
			if foreign > 0 && breakout(a) {
				foreign = 0
			}
			switch {
			case a == atom.Rt || a == atom.Rp:
				ruby = start
			case a == atom.Rb || a == atom.Ruby:
				ruby = false
			case a == atom.Svg || a == atom.Math:
				if start {
					foreign++
				}
			case a == atom.Template:
				if start {
					skip++
				}
			case a == atom.Title:
				titleNext = start && foreign == 0 && skip == 0
			case hiddenRaw(a):
				rawNext = start
			case a == atom.Pre || a == atom.Textarea || a == atom.Listing || a == atom.Plaintext:
				if start {
					pre++
				}
			case a == atom.A && x.readLinks && hasAttr && start && foreign == 0 && skip == 0:
				x.addLink(l.raw())
			case a == atom.Html && hasAttr && x.lang == "":
				x.lang = attrValue(x.attrs.read(l.raw()), "lang")
				hasAttr = false
			}
			if blockTag(a) {
				ruby = false
				x.flush()
			}
			if x.main && start && !voidTag(a) {
				var raw []byte // its attributes are parsed only if push classifies a
				if hasAttr {
					raw = l.raw()
				}
				x.push(raw, a)
			}
		case html.EndTagToken:
			rawNext, titleNext = false, false
			a, _ := tagAtom(l.raw())
			switch a {
			case atom.Rt, atom.Rp, atom.Ruby:
				ruby = false
			case atom.Svg, atom.Math:
				if foreign > 0 {
					foreign--
				}
			case atom.Template:
				if skip > 0 {
					skip--
				}
			case atom.Pre, atom.Textarea, atom.Listing:
				if pre > 0 {
					pre--
				}
			}
			if blockTag(a) {
				x.flush()
			}
			if x.main {
				x.pop(a)
			}
		default:
			rawNext, titleNext = false, false
		}
	}
}

// addLink records the target of the <a> start tag raw, if it has one
// that stays on the page's site.
func (x *extractor) addLink(raw []byte) {
	if t := LinkTarget(x.attrs.href(raw)); t != nil {
		x.linkBuf = append(x.linkBuf, t...)
		x.linkEnds = append(x.linkEnds, int32(len(x.linkBuf)))
	}
}

// links returns the recorded link targets as substrings of one string
// (two allocations a page): empty without any, nil when they were not
// read.
func (x *extractor) links() []string {
	if !x.readLinks {
		return nil
	}
	if len(x.linkEnds) == 0 {
		return []string{}
	}
	s := string(x.linkBuf)
	ls := make([]string, len(x.linkEnds))
	start := 0
	for i, end := range x.linkEnds {
		ls[i] = s[start:end]
		start = int(end)
	}
	return ls
}

// LinkTarget returns the target of a link whose href value is v if the
// link stays on the page's site as written, else nil: v without its
// leading and trailing ASCII white space, when that is not empty and
// has neither a scheme ("https:", "mailto:", "javascript:", ...) nor a
// host ("//host/..."). A relative path, a path from the site's root, a
// query or a fragment is kept as written, so a mirror, which copies the
// HTML, has its original's targets, while an absolute link, which may
// name the original's host on the copy, is left out. The result is a
// subslice of v.
func LinkTarget(v []byte) []byte {
	for len(v) > 0 && white(v[0]) {
		v = v[1:]
	}
	for len(v) > 0 && white(v[len(v)-1]) {
		v = v[:len(v)-1]
	}
	if len(v) == 0 || len(v) >= 2 && (v[0] == '/' || v[0] == '\\') && (v[1] == '/' || v[1] == '\\') {
		return nil
	}
	// A scheme: a letter, then letters, digits, "+", "-" or ".", then
	// ":" before any "/", "?" or "#" (WHATWG URL, scheme state).
	if c := v[0] | 0x20; 'a' <= c && c <= 'z' {
		for _, c := range v[1:] {
			if c == ':' {
				return nil
			}
			if !(c|0x20 >= 'a' && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
				break
			}
		}
	}
	return v
}

// tagAtom returns the atom of the tag whose raw text is raw ("<name ...>"
// or "</name>"), 0 for unknown names, and whether anything follows the
// name. Unlike Tokenizer.TagName it does not allocate.
func tagAtom(raw []byte) (atom.Atom, bool) {
	i := 1
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	var buf [16]byte
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>' {
			break
		}
		if n == len(buf) {
			return 0, true // longer than any atom of interest
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	rest := raw[i:]
	for len(rest) > 0 && (rest[0] <= ' ' || rest[0] == '/' || rest[0] == '>') {
		rest = rest[1:]
	}
	return atom.Lookup(buf[:n]), len(rest) > 0
}

// attrValue returns the value of the named attribute among attrs.
func attrValue(attrs []attr, key string) string {
	for _, a := range attrs {
		if string(a.key) == key {
			return strings.TrimSpace(string(a.val))
		}
	}
	return ""
}
