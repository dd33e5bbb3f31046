package canon

import (
	"bytes"
	"mime"
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
	// Only a byte order mark (3 bytes at most) or contentType make
	// DetermineEncoding certain; given the whole page it would also
	// tokenize its first 1024 bytes for a <meta>, which metaCharset
	// looks for further anyway.
	if e, name, certain := charset.DetermineEncoding(b[:min(len(b), 3)], contentType); certain {
		return e, name
	}
	if e, name := metaCharset(b); e != nil {
		return e, name
	}
	return sniff(b, truncated)
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
		if _, params, err := mime.ParseMediaType(contentType); err == nil {
			if e, name := charset.Lookup(params["charset"]); e != nil && name != "utf-8" {
				return e, name
			}
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
		if label == "" && httpEquiv && content != "" {
			if _, params, err := mime.ParseMediaType(content); err == nil {
				label = params["charset"]
			}
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
