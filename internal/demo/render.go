package demo

import (
	"cmp"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// appendJSONString appends s to dst as a quoted JSON string.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendJSONChars(dst, s)
	return append(dst, '"')
}

// appendJSONChars appends s to dst escaped for the inside of a JSON
// string: quote, backslash and control characters escaped, invalid UTF-8
// replaced with U+FFFD, U+2028 and U+2029 escaped for JavaScript's sake.
// Like Elasticsearch, it leaves <, > and & alone (highlights carry <em>).
func appendJSONChars(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// appendXML appends s to dst escaped for XML character data and
// attribute values; characters XML 1.0 does not allow are dropped.
func appendXML(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch {
		case r == '&':
			esc = "&amp;"
		case r == '<':
			esc = "&lt;"
		case r == '>':
			esc = "&gt;"
		case r == '"':
			esc = "&quot;"
		case r == '\'':
			esc = "&#39;"
		case r == utf8.RuneError && size == 1, !xmlChar(r):
			esc = "\uFFFD"
			if r < 0x20 {
				esc = ""
			}
		default:
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, esc...)
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// xmlChar reports whether r is in XML 1.0's Char production.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// appendScore appends a score as Elasticsearch does: a float32 in its
// shortest form.
func appendScore(dst []byte, f float64) []byte {
	return strconv.AppendFloat(dst, float64(float32(f)), 'g', -1, 32)
}

// appendHighlight appends text, JSON-escaped, with each word that is one
// of the query's terms in s.terms wrapped in <em></em>, and reports
// whether it marked any. Words are compared in lower case; it does not
// allocate for ASCII words.
func (e *Engine) appendHighlight(dst []byte, s *scratch, text string) ([]byte, bool) {
	marked := false
	start := 0 // start of text not yet written
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		j := i
		s.word = s.word[:0]
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r) {
				break
			}
			if r < utf8.RuneSelf {
				if 'A' <= r && r <= 'Z' {
					r += 'a' - 'A'
				}
				s.word = append(s.word, byte(r))
			} else {
				s.word = utf8.AppendRune(s.word, unicode.ToLower(r))
			}
			j += size
		}
		if id, ok := e.terms[string(s.word)]; ok && containsID(s.terms, id) {
			dst = appendJSONChars(dst, text[start:i])
			dst = append(dst, "<em>"...)
			dst = appendJSONChars(dst, text[i:j])
			dst = append(dst, "</em>"...)
			start = j
			marked = true
		}
		i = j
	}
	return appendJSONChars(dst, text[start:]), marked
}

// appendHighlightSpan appends the span [start, end) of document d's flat
// text as appendHighlight does, from the document's precomputed words:
// no map lookups.
func (e *Engine) appendHighlightSpan(dst []byte, s *scratch, d int32, start, end int) ([]byte, bool) {
	dc := &e.docs[d]
	text := dc.flat
	ws := dc.words
	esc := appendJSONChars
	if dc.flatSafe {
		esc = appendRaw
	}
	if sh, i, j, ok := e.shownSpan(d, start, end); ok {
		return sh.appendWords(dst, i, j, appendJSONChars, s.terms)
	}
	i, _ := slices.BinarySearchFunc(ws, int32(start), func(w word, off int32) int { return cmp.Compare(w.off, off) })
	marked := false
	at := start // start of text not yet written
	for ; i < len(ws) && int(ws[i].end) <= end; i++ {
		w := ws[i]
		if !containsID(s.terms, w.term) {
			continue
		}
		dst = esc(dst, text[at:w.off])
		dst = append(dst, "<em>"...)
		dst = esc(dst, text[w.off:w.end])
		dst = append(dst, "</em>"...)
		at = int(w.end)
		marked = true
	}
	return esc(dst, text[at:end]), marked
}

func appendRaw(dst []byte, s string) []byte { return append(dst, s...) }

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
