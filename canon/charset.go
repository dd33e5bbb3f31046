package canon

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
)

// metaScanLimit bounds the bytes searched for a <meta> charset declaration.
// WHATWG prescans 1024 bytes; real pages (and archived copies with an
// injected toolbar) often declare it later in the head, and browsers such
// as Chrome scan the whole head, so canon looks further.
const metaScanLimit = 64 << 10

// determineEncoding picks the encoding of an HTML page: byte order mark,
// then the charset parameter of contentType, then a <meta charset> or
// <meta http-equiv=Content-Type> declaration in the first 64 KiB, then
// UTF-8 if b is valid UTF-8, else windows-1252. It returns the encoding and
// its WHATWG name.
func determineEncoding(b []byte, contentType string, truncated bool) (encoding.Encoding, string) {
	if e, name, certain := declaredEncoding(b, contentType); certain {
		return e, name
	}
	if e, name := metaCharset(b); e != nil {
		return e, name
	}
	return sniff(b, truncated)
}

// declaredEncoding returns the encoding that b's byte order mark, else
// contentType's charset (as headerCharset reads it) declares, and whether
// one does; else windows-1252 and false.
func declaredEncoding(b []byte, contentType string) (encoding.Encoding, string, bool) {
	// Only a byte order mark (3 bytes at most) makes DetermineEncoding
	// certain without a content type; given the whole page it would also
	// tokenize its first 1024 bytes for a <meta>, which metaCharset looks
	// for further anyway. The content type is read by headerCharset, which
	// takes what mime.ParseMediaType (DetermineEncoding's) refuses.
	e, name, certain := charset.DetermineEncoding(b[:min(len(b), 3)], "")
	if !certain {
		if he, hname := charset.Lookup(headerCharset(contentType)); he != nil {
			return he, hname, true
		}
	}
	return e, name, certain
}

// textEncoding picks the encoding of plain text: UTF-16 by byte order
// mark, else the charset parameter of contentType unless it says UTF-8 or
// a UTF-8 byte order mark does, else as sniff does (a text said to be
// UTF-8 that is not is windows-1252, as before). Text has no <meta> to
// look for, so it skips determineEncoding's prescan (an HTML tokenizer a
// page).
func textEncoding(b []byte, contentType string, truncated bool) (encoding.Encoding, string) {
	if bytes.HasPrefix(b, []byte{0xfe, 0xff}) {
		return charset.Lookup("utf-16be")
	}
	if bytes.HasPrefix(b, []byte{0xff, 0xfe}) {
		return charset.Lookup("utf-16le")
	}
	if strings.Contains(contentType, "=") && !bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		if e, name := charset.Lookup(headerCharset(contentType)); e != nil && name != "utf-8" {
			return e, name
		}
	}
	return sniff(b, truncated)
}

// sniff returns UTF-8 if b is valid UTF-8 (ignoring a partial rune at its
// end if it was truncated), else windows-1252, the WHATWG default for
// unlabelled pages.
func sniff(b []byte, truncated bool) (encoding.Encoding, string) {
	if truncated {
		b = trimPartialRune(b)
	}
	if utf8.Valid(b) {
		return unicode.UTF8, "utf-8"
	}
	e, name := charset.Lookup("windows-1252")
	return e, name
}

// trimPartialRune removes an incomplete UTF-8 sequence at the end of b, as
// left by truncation.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// metaCharset finds the first <meta> tag declaring a charset in the first
// metaScanLimit bytes of b. A declared UTF-16 means UTF-8 (WHATWG: the
// page could not have been parsed as ASCII otherwise).
func metaCharset(b []byte) (encoding.Encoding, string) {
	w := b[:min(len(b), metaScanLimit)]
	for off := 0; off < len(w); {
		p := indexCharset(w[off:])
		if p < 0 {
			return nil, ""
		}
		p += off
		off = p + len("charset")
		lt := bytes.LastIndexByte(w[:p], '<')
		if lt < 0 || p-lt > 1024 {
			continue
		}
		z := html.NewTokenizer(bytes.NewReader(w[lt:min(len(w), p+1024)]))
		if tt := z.Next(); tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		if string(name) != "meta" || !hasAttr {
			continue
		}
		var label, content string
		httpEquiv := false
		for more := true; more; {
			var k, v []byte
			k, v, more = z.TagAttr()
			switch string(k) {
			case "charset":
				label = string(v)
			case "content":
				content = string(v)
			case "http-equiv":
				httpEquiv = strings.EqualFold(string(v), "content-type")
			}
		}
		if label == "" && httpEquiv {
			label = metaContentCharset(content)
		}
		if label == "" {
			continue
		}
		e, n := charset.Lookup(label)
		if e == nil {
			continue
		}
		if strings.HasPrefix(n, "utf-16") {
			return unicode.UTF8, "utf-8"
		}
		return e, n
	}
	return nil, ""
}

// MediaType returns the essence of a Content-Type header value, its
// type/subtype in lower case ("text/html"), as the WHATWG MIME Sniffing
// standard's "parse a MIME type" reads it (which the Fetch standard and
// browsers use), or "" when it has none: no "/", or a type or subtype
// that is not an HTTP token. Parameters never make it fail, so a value
// that mime.ParseMediaType refuses for them
// ("text/plain;charset=Shift_JIS;foo", two different charsets) has the
// essence browsers read. Where mime.ParseMediaType succeeds, MediaType
// returns its media type, except for a type alone ("text", no essence:
// browsers sniff), "{" or "}" in it (MIME's tokens allow them, HTTP's do
// not) and white space other than HTTP's (tab, CR, LF, space) around it.
//
// It allocates only for a value with upper-case letters in its essence.
func MediaType(ct string) string {
	essence, _, ok := splitMediaType(ct)
	if !ok {
		return ""
	}
	return strings.ToLower(essence)
}

// splitMediaType returns the type/subtype of a Content-Type header value,
// as written, without the HTTP white space around it, and what follows
// its first ";"; ok is false when the value has no valid type/subtype
// (see [MediaType]).
func splitMediaType(ct string) (essence, params string, ok bool) {
	essence, params, _ = strings.Cut(ct, ";")
	essence = strings.Trim(essence, httpSpace)
	major, minor, ok := strings.Cut(essence, "/")
	if !ok || !isToken(major) || !isToken(minor) {
		return "", "", false
	}
	return essence, params, true
}

// headerCharset returns the charset parameter of a Content-Type header
// value as the Fetch standard's MIME type parser reads it, or "": after a
// valid type/subtype, parameters without a value or with an empty one are
// skipped, a value may be an HTTP quoted string (which may hold ";"), and
// the first charset wins. mime.ParseMediaType refuses such a header whole
// ("text/html;charset=Shift_JIS;foo", "text/html;; charset=...", a
// repeated charset), and the page's charset with it, which browsers read.
func headerCharset(ct string) string {
	_, rest, ok := splitMediaType(ct)
	if !ok {
		return ""
	}
	for rest != "" {
		rest = strings.TrimLeft(rest, httpSpace)
		i := strings.IndexAny(rest, ";=")
		if i < 0 {
			return ""
		}
		name := strings.TrimRight(rest[:i], httpSpace) // "charset = x": Fetch keeps the space, mime.ParseMediaType did not
		if rest[i] == ';' {
			rest = rest[i+1:]
			continue
		}
		rest = rest[i+1:]
		var value string
		if strings.HasPrefix(rest, `"`) {
			value, rest = quotedString(rest)
			_, rest, _ = strings.Cut(rest, ";")
		} else {
			value, rest, _ = strings.Cut(rest, ";")
			value = strings.TrimRight(value, httpSpace)
		}
		if value != "" && strings.EqualFold(name, "charset") {
			return value
		}
	}
	return ""
}

// httpSpace is HTTP's white space.
const httpSpace = " \t\r\n"

// isToken reports whether s is a non-empty HTTP token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}

// quotedString reads the HTTP quoted string s starts with (backslash
// escapes undone; an unterminated one runs to the end) and returns its
// value and what follows its closing quote.
func quotedString(s string) (value, rest string) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return b.String(), s[i+1:]
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ""
}

// metaContentCharset returns the charset a <meta http-equiv> content
// attribute declares, as HTML's "algorithm for extracting a character
// encoding from a meta element" finds it: after the first "charset" (any
// case) followed by "=", quoted in either quote or up to white space or
// ";". The content need not be a MIME type: pages write
// "text/html, charset=..." or "charset=..." alone, which browsers read.
func metaContentCharset(s string) string {
	const space = "\t\n\f\r "
	for {
		i := indexFold(s, "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], space)
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], space)
		if s == "" {
			return ""
		}
		if q := s[0]; q == '"' || q == '\'' {
			if j := strings.IndexByte(s[1:], q); j >= 0 {
				return s[1 : 1+j]
			}
			return ""
		}
		if j := strings.IndexAny(s, space+";"); j >= 0 {
			s = s[:j]
		}
		return s
	}
}

// indexCharset returns the index of the first "charset" in b in the usual
// spellings (charset, CHARSET, Charset, CharSet), or -1.
func indexCharset(b []byte) int {
	best := -1
	for _, s := range [...]string{"charset", "CHARSET", "Charset", "CharSet"} {
		w := b
		if best >= 0 {
			w = b[:best]
		}
		if i := bytes.Index(w, []byte(s)); i >= 0 {
			best = i
		}
	}
	return best
}

// isBinary reports whether b looks like binary data rather than text: a
// NUL byte in its first 1024 bytes. UTF-16 text is recognized by its byte
// order mark before this check.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 1024)], 0) >= 0
}
