package canon

import (
	"bytes"
	"io"

	"golang.org/x/net/html"
)

// lexer splits a page held in memory into the tokens of
// golang.org/x/net/html's Tokenizer: the same token kinds, the same raw
// bytes per token and the same text (newlines converted, NUL replaced in
// raw text, entities decoded outside raw text). It follows the tokenizer's
// simplified HTML Living Standard §13.2.5 (raw text after iframe,
// noembed, noframes, noscript, plaintext, script, style, textarea, title
// and xmp start tags, the script data escape states, comments ended by
// "-->", "--!>" or an early ">", bogus comments and doctypes ended by the
// first ">", a tag cut by the end of input an error token), and
// TestLexerMatchesTokenizer checks it token by token against the
// tokenizer on the saved pages and on edge cases, as FuzzLexer does on
// any input.
//
// Why not the tokenizer itself: it reads its input through an io.Reader
// one byte a function call and parses every attribute of every start
// tag; the lexer scans the slice with bytes.IndexByte between tags and
// only skips over attributes (about 40 % of canon's time on the saved
// pages). Attribute values, when the extractor needs them, come from the
// tokenizer itself fed the tag's raw bytes ([tagAttrs]).
//
// The lexer never writes to its input; text that needs conversion is
// built in a scratch buffer valid until the next call of next. The zero
// value is not usable: set src.
type lexer struct {
	src        []byte
	pos        int      // start of the next token
	start      int      // start of the current token's raw bytes
	data       [2]int   // the current text token's data span
	rawTag     string   // lower-case name of the raw text element just opened
	textIsRaw  bool     // the text token is raw text: entities stay as written
	convertNUL bool     // NUL bytes in the text token become U+FFFD
	scratch    []byte   // converted text
	keys       [][2]int // spans of the current tag's attribute names
	lastAngle  bool     // the last attribute's unquoted value ended at '>'
}

// next scans the next token and returns its kind: html.TextToken,
// StartTagToken, SelfClosingTagToken, EndTagToken, CommentToken (also
// for doctypes) or ErrorToken at the end of input.
func (l *lexer) next() html.TokenType {
	s, start := l.src, l.pos
	l.start = start
	if start >= len(s) {
		return html.ErrorToken
	}
	if l.rawTag != "" {
		end := len(s)
		switch l.rawTag {
		case "plaintext":
			l.textIsRaw = true
		case "script":
			end = scriptEnd(s, start)
			l.textIsRaw = true
		default:
			end = rawEnd(s, start, l.rawTag)
			l.textIsRaw = l.rawTag != "textarea" && l.rawTag != "title"
		}
		l.rawTag = ""
		if end > start {
			l.pos, l.data, l.convertNUL = end, [2]int{start, end}, true
			return html.TextToken
		}
	}
	l.textIsRaw, l.convertNUL = false, false
	for i := start; ; {
		j := bytes.IndexByte(s[i:], '<')
		if j < 0 || i+j+1 >= len(s) {
			break // a '<' as the last byte is text
		}
		i += j
		c := s[i+1]
		tag := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !tag && c != '/' && c != '!' && c != '?' {
			i++
			continue
		}
		if i > start { // the text before the tag is a token first
			l.pos, l.data = i, [2]int{start, i}
			return html.TextToken
		}
		switch {
		case tag:
			return l.startTag(i + 1)
		case c == '/':
			return l.endTag(i + 2)
		case c == '?':
			l.pos = closeAngle(s, i+1)
			return html.CommentToken
		}
		// "<!": a comment if "--" follows, else a doctype or a bogus
		// comment, both ended by the first '>'.
		if i+3 >= len(s) {
			l.pos = len(s)
		} else if s[i+2] == '-' && s[i+3] == '-' {
			l.pos = commentEnd(s, i+4)
		} else {
			l.pos = closeAngle(s, i+2)
		}
		return html.CommentToken
	}
	l.pos, l.data = len(s), [2]int{start, len(s)}
	return html.TextToken
}

// raw returns the raw bytes of the current token.
func (l *lexer) raw() []byte { return l.src[l.start:l.pos] }

// text returns the text of the current text token, as the tokenizer's
// Text does. The result is valid until the next call of next.
func (l *lexer) text() []byte {
	t := l.src[l.data[0]:l.data[1]]
	cr := bytes.IndexByte(t, '\r') >= 0
	nul := l.convertNUL && bytes.IndexByte(t, 0) >= 0
	amp := !l.textIsRaw && bytes.IndexByte(t, '&') >= 0
	if !cr && !nul && !amp {
		return t
	}
	b := append(l.scratch[:0], t...)
	if cr {
		b = convertNewlines(b)
	}
	if nul {
		b = bytes.ReplaceAll(b, []byte{0}, []byte("\uFFFD"))
	}
	if amp {
		b = append(b[:0], html.UnescapeString(string(b))...)
	}
	l.scratch = b
	return b
}

// convertNewlines rewrites "\r\n" and a lone "\r" as "\n" in place.
func convertNewlines(b []byte) []byte {
	w := 0
	for r := 0; r < len(b); r++ {
		c := b[r]
		if c == '\r' {
			c = '\n'
			if r+1 < len(b) && b[r+1] == '\n' {
				r++
			}
		}
		b[w] = c
		w++
	}
	return b[:w]
}

// rawTags are the elements whose content the tokenizer reads as raw text.
var rawTags = []string{"iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp"}

// startTag scans a start tag whose name starts at p.
func (l *lexer) startTag(p int) html.TokenType {
	s := l.src
	nameEnd, end, ok := l.tag(p)
	if !ok {
		l.pos = len(s)
		return html.ErrorToken
	}
	l.pos = end
	if n := nameEnd - p; n >= 3 && n <= 9 {
		for _, r := range rawTags {
			if len(r) == n && asciiEqualFold(s[p:nameEnd], r) {
				l.rawTag = r
				break
			}
		}
	}
	if s[end-2] != '/' {
		return html.StartTagToken
	}
	if !l.lastAngle {
		return html.SelfClosingTagToken
	}
	// "<p a=/>" is a start tag whose attribute value ends in '/', unless
	// the attribute repeats an earlier name and so was not kept.
	k := len(l.keys)
	last := s[l.keys[k-1][0]:l.keys[k-1][1]]
	for _, e := range l.keys[:k-1] {
		if foldEqual(s[e[0]:e[1]], last) {
			return html.SelfClosingTagToken
		}
	}
	return html.StartTagToken
}

// endTag scans the token after "</", whose next byte is at p.
func (l *lexer) endTag(p int) html.TokenType {
	s := l.src
	if p >= len(s) { // "</" at the end of input is text
		l.pos, l.data = len(s), [2]int{l.start, len(s)}
		return html.TextToken
	}
	c := s[p]
	switch {
	case c == '>': // "</>" is dropped
		l.pos = p + 1
		return html.CommentToken
	case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		_, end, ok := l.tag(p)
		if !ok {
			l.pos = len(s)
			return html.ErrorToken
		}
		l.pos = end
		return html.EndTagToken
	}
	l.pos = closeAngle(s, p)
	return html.CommentToken
}

// tag scans a tag whose name starts at p (a letter): the name, then the
// attributes up to the closing '>'. It returns where the name ends and
// where the tag ends (after the '>'); ok is false when the input ends
// first. l.keys gets the span of each non-empty attribute name, and
// l.lastAngle tells whether the last attribute's value was unquoted and
// ended at the '>' (what the self-closing test needs).
func (l *lexer) tag(p int) (nameEnd, end int, ok bool) {
	s := l.src
	n := len(s)
	l.keys, l.lastAngle = l.keys[:0], false
	i := p + 1
	for i < n && !white(s[i]) && s[i] != '/' && s[i] != '>' {
		i++
	}
	nameEnd = i
	for {
		i = skipWhite(s, i)
		if i >= n {
			return 0, 0, false
		}
		if s[i] == '>' {
			return nameEnd, i + 1, true
		}
		// The name: up to white space, '/', '>' or a '=' that is not
		// its first byte.
		ks := i
		for ; i < n; i++ {
			c := s[i]
			if white(c) || c == '/' || c == '>' || c == '=' && i > ks {
				break
			}
		}
		ke := i
		// The value.
		i = skipWhite(s, i)
		if i >= n {
			return 0, 0, false
		}
		l.lastAngle = false
		switch s[i] {
		case '/':
			i++
		case '=':
			i = skipWhite(s, i+1)
			if i >= n {
				return 0, 0, false
			}
			switch q := s[i]; q {
			case '>':
			case '"', '\'':
				j := bytes.IndexByte(s[i+1:], q)
				if j < 0 {
					return 0, 0, false
				}
				i += j + 2
			default:
				for i++; i < n && !white(s[i]) && s[i] != '>'; i++ {
				}
				if i >= n {
					return 0, 0, false
				}
				if s[i] == '>' {
					l.lastAngle = true
				} else {
					i++
				}
			}
		}
		if ke > ks {
			l.keys = append(l.keys, [2]int{ks, ke})
		}
	}
}

// foldEqual reports whether a and b are equal ignoring ASCII case.
func foldEqual(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// white reports whether c is HTML white space as the tokenizer sees it.
func white(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'
}

// skipWhite returns the index of the first non-white byte from i.
func skipWhite(s []byte, i int) int {
	for i < len(s) && white(s[i]) {
		i++
	}
	return i
}

// closeAngle returns the index after the first '>' from p, or len(s).
func closeAngle(s []byte, p int) int {
	if j := bytes.IndexByte(s[p:], '>'); j >= 0 {
		return p + j + 1
	}
	return len(s)
}

// commentEnd returns the end of a comment whose data starts at p (after
// "<!--"): after "-->", "--!>", or a '>' before any other byte but
// dashes ("<!-->", "<!--->"); len(s) if the input ends first.
func commentEnd(s []byte, p int) int {
	dashes, beginning := 0, true
	for p < len(s) {
		c := s[p]
		p++
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				return p
			}
		case '!':
			if dashes >= 2 {
				if p >= len(s) {
					return len(s)
				}
				c = s[p]
				p++
				if c == '>' {
					return p
				}
				if c == '-' {
					dashes, beginning = 1, false
					continue
				}
			}
		}
		dashes, beginning = 0, false
	}
	return len(s)
}

// rawEnd returns where the raw text of element name, starting at p,
// ends: at the first "</name" (any case) followed by white space, '/' or
// '>'; len(s) if there is none.
func rawEnd(s []byte, p int, name string) int {
	for {
		j := bytes.Index(s[p:], []byte("</"))
		if j < 0 {
			return len(s)
		}
		p += j
		if endTagAt(s, p, name) {
			return p
		}
		p += 2
	}
}

// endTagAt reports whether s[p:] starts with "</name" (any case)
// followed by white space, '/' or '>'.
func endTagAt(s []byte, p int, name string) bool {
	e := p + 2 + len(name)
	if e >= len(s) || !asciiEqualFold(s[p+2:e], name) {
		return false
	}
	c := s[e]
	return white(c) || c == '/' || c == '>'
}

// scriptEnd returns where the script data starting at p ends, following
// the script data, escaped and double escaped states of HTML §13.2.5.4–
// 13.2.5.26 as the tokenizer simplifies them; len(s) if the input ends
// first.
func scriptEnd(s []byte, p int) int {
	const (
		data = iota
		escaped
		doubleEscaped
	)
	state, dashes := data, 0
	for p < len(s) {
		if state == data {
			j := bytes.IndexByte(s[p:], '<')
			if j < 0 {
				return len(s)
			}
			p += j + 1
			if p >= len(s) {
				return len(s)
			}
			switch s[p] {
			case '/':
				if endTagAt(s, p-1, "script") {
					return p - 1
				}
				p++
			case '!':
				if p+2 < len(s) && s[p+1] == '-' && s[p+2] == '-' {
					state, dashes, p = escaped, 2, p+3
				} else if p+2 >= len(s) && (p+1 >= len(s) || s[p+1] == '-') {
					return len(s)
				} else {
					p++
					if s[p] == '-' {
						p++
					}
				}
			}
			continue
		}
		c := s[p]
		p++
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 {
				state, dashes = data, 0
				continue
			}
		case '<':
			dashes = 0
			if p >= len(s) {
				return len(s)
			}
			if state == doubleEscaped {
				if s[p] != '/' {
					continue
				}
				if endTagAt(s, p-1, "script") {
					state, p = escaped, p+1+len("script")+1
				} else {
					p++
				}
				continue
			}
			switch c := s[p]; {
			case c == '/':
				if endTagAt(s, p-1, "script") {
					return p - 1
				}
				p++
			case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
				// "<script" followed by white space, '/' or '>' starts
				// the double escaped state; otherwise the letters are
				// escaped text.
				e := p + len("script")
				if e < len(s) && asciiEqualFold(s[p:e], "script") {
					if c := s[e]; white(c) || c == '/' || c == '>' {
						state, p = doubleEscaped, e+1
					}
				}
			default:
				state = data
			}
			continue
		}
		dashes = 0
	}
	return len(s)
}

// asciiEqualFold reports whether b equals the lower-case ASCII name s,
// ignoring ASCII case in b.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// tagAttrs reads the attributes of single tags exactly as the x/net
// tokenizer reads them ([tagAttrs.read]). The tags it cannot scan itself
// go to one long-lived tokenizer, fed one tag's raw bytes at a time
// through a reader that never reports the end of input.
type tagAttrs struct {
	r tagReader
	z *html.Tokenizer

	kv   []attr // the attributes read ([tagAttrs.read])
	keys []byte // their names in lower case
}

// tag returns a tokenizer whose current token is the start tag raw (the
// complete raw bytes of one start tag, "<" to ">").
func (t *tagAttrs) tag(raw []byte) *html.Tokenizer {
	if t.z == nil || t.z.Err() != nil {
		t.z = html.NewTokenizer(&t.r)
	}
	t.r.b = raw
	// After <script ...> and the like the tokenizer expects raw text;
	// the next bytes fed are a tag again.
	t.z.NextIsNotRawText()
	t.z.Next()
	return t.z
}

// tagReader hands out the bytes of the tag being read.
type tagReader struct{ b []byte }

func (r *tagReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.ErrNoProgress
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
