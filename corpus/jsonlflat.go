package corpus

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/winnow-search/winnow/internal/bytespan"
)

// readFlat is the common case of recordReader.read: an object whose
// members are strings, numbers, true, false or null, every name distinct
// and unescaped. It validates each string with 32 or eight bytes at a time
// ([bytespan.JSONPlain]) over the ASCII bytes that need no check (jsontext's loop takes one byte at a
// time, about 13 instructions a byte: a tenth of winnow dedup's
// instructions on a JSONL crawl), and sets r.vals as read does. It
// accepts only what jsontext accepts, so a record it returns true for is
// read as jsontext would; it returns false for anything else (a nested
// value, an escaped or repeated name, invalid UTF-8, any syntax error),
// and the caller then reads the record with jsontext.
func (r *recordReader) readFlat(line []byte) bool {
	clear(r.vals)
	r.seen = r.seen[:0]
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return skipSpace(line, i+1) == len(line)
	}
	for {
		// A name: a string without escapes, distinct from the others.
		end, esc := scanString(line, i)
		if end < 0 || esc {
			return false
		}
		name := line[i+1 : end-1]
		for _, s := range r.seen {
			if bytes.Equal(s, name) {
				return false
			}
		}
		r.seen = append(r.seen, name)
		i = skipSpace(line, end)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = skipSpace(line, i+1)
		start := i
		if i >= len(line) {
			return false
		}
		switch c := line[i]; {
		case c == '"':
			end, _ = scanString(line, i)
		case c == '-' || '0' <= c && c <= '9':
			end = scanNumber(line, i)
		case bytes.HasPrefix(line[i:], []byte("null")):
			end = i + 4
		case bytes.HasPrefix(line[i:], []byte("true")):
			end = i + 4
		case bytes.HasPrefix(line[i:], []byte("false")):
			end = i + 5
		default: // an object or array (read by jsontext), or not JSON
			return false
		}
		if end < 0 {
			return false
		}
		if k := r.index(name); k >= 0 {
			r.vals[k] = line[start:end]
		}
		i = skipSpace(line, end)
		if i >= len(line) {
			return false
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			return skipSpace(line, i+1) == len(line)
		default:
			return false
		}
	}
}

// index is the position of name in r.names, or -1.
func (r *recordReader) index(name []byte) int {
	for k, n := range r.names {
		if n == string(name) {
			return k
		}
	}
	return -1
}

// skipSpace returns the offset of the first byte from i on that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString validates the JSON string that starts with the quote at
// b[i] as jsontext does by default: no control characters, valid
// escapes, valid UTF-8, escaped surrogates only in pairs. It returns the
// offset just past its closing quote and whether it holds an escape, or
// -1 if it is not a valid string.
func scanString(b []byte, i int) (end int, esc bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	i++
	for {
		i += bytespan.JSONPlain(b[i:])
		if i >= len(b) {
			return -1, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, esc
		case c == '\\':
			esc = true
			n := escapeLen(b[i:])
			if n == 0 {
				return -1, false
			}
			i += n
		case c < 0x20:
			return -1, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return -1, false
			}
			i += n
		}
	}
}

// escapeLen is the length of the valid escape that starts b (a
// backslash), a surrogate pair counting as one, or 0.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		v1, ok := hex4(b[2:])
		switch {
		case !ok:
			return 0
		case !utf16.IsSurrogate(rune(v1)):
			return 6
		}
		if len(b) < 12 || b[6] != '\\' || b[7] != 'u' {
			return 0
		}
		v2, ok := hex4(b[8:])
		if !ok || utf16.DecodeRune(rune(v1), rune(v2)) == utf8.RuneError {
			return 0
		}
		return 12
	}
	return 0
}

// hex4 decodes the four hex digits that start b.
func hex4(b []byte) (uint16, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var v uint16
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(c)
	}
	return v, true
}

// scanNumber returns the offset just past the JSON number that starts at
// b[i], or -1 (RFC 8259 section 6: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?).
func scanNumber(b []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	default:
		if i = digits(i); i < 0 {
			return -1
		}
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(i + 1); i < 0 {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i = digits(i); i < 0 {
			return -1
		}
	}
	return i
}

// appendUnquoted appends the text of body, the inside of a JSON string
// already validated as scanString validates, to dst: runs without a
// backslash are copied whole. It gives what jsontext.AppendUnquote gives
// for such a string, without checking each byte again.
func appendUnquoted(dst, body []byte) []byte {
	for {
		k := bytes.IndexByte(body, '\\')
		if k < 0 {
			return append(dst, body...)
		}
		dst = append(dst, body[:k]...)
		body = body[k:]
		c := body[1]
		switch c {
		case 'u':
			v1, _ := hex4(body[2:])
			r := rune(v1)
			n := 6
			if utf16.IsSurrogate(r) {
				v2, _ := hex4(body[8:])
				r, n = utf16.DecodeRune(r, rune(v2)), 12
			}
			dst = utf8.AppendRune(dst, r)
			body = body[n:]
			continue
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		}
		dst = append(dst, c)
		body = body[2:]
	}
}
