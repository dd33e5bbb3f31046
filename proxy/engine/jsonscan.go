package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A tiny JSON scanner that works on byte offsets, so the proxy can find the
// result list and a hit's fields without building a tree and can copy
// everything else verbatim. Every function is O(n) in the bytes it skips.

var errSyntax = errors.New("syntax error")

type scanError struct {
	off int
	err error
}

func (e *scanError) Error() string { return fmt.Sprintf("at byte %d: %v", e.off, e.err) }
func (e *scanError) Unwrap() error { return e.err }

func serr(off int, msg string) error { return &scanError{off, errors.New(msg)} }

func skipWS(b []byte, i int) int {
	// Pretty-printed answers indent with runs of spaces: skip 8 at once.
	for i+8 <= len(b) && string(b[i:i+8]) == "        " {
		i += 8
	}
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the offset after the string starting at b[i] == '"'.
// Control characters are not rejected: the body is the backend's and is
// copied, not reinterpreted.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, serr(i, "unterminated string")
		}
		j += k
		// Count the backslashes before the quote.
		n := 0
		for j-1-n > i && b[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + 1, nil
		}
		j++
	}
}

// members calls fn for each member of the object at s until fn returns
// false. b must be valid JSON.
func members(b []byte, s span, fn func(key []byte, v span) bool) {
	i := skipWS(b, s.start)
	if i >= s.end || b[i] != '{' {
		return
	}
	i = skipWS(b, i+1)
	for i < s.end && b[i] == '"' {
		ke, _ := skipString(b, i)
		vs := skipWS(b, skipWS(b, ke)+1)
		ve, _ := skipValue(b, vs)
		if !fn(b[i:ke], span{vs, ve}) {
			return
		}
		i = skipWS(b, ve)
		if i < s.end && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
}

// skipValue returns the offset after the value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	return skipValueDepth(b, i, 0)
}

const maxDepth = 512

func skipValueDepth(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return 0, serr(i, "nesting too deep")
	}
	if i >= len(b) {
		return 0, serr(i, "unexpected end of input")
	}
	switch c := b[i]; c {
	case '"':
		return skipString(b, i)
	case '{', '[':
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		j := skipWS(b, i+1)
		if j < len(b) && b[j] == close {
			return j + 1, nil
		}
		for {
			var err error
			if c == '{' {
				if j >= len(b) || b[j] != '"' {
					return 0, serr(j, "expected object key")
				}
				if j, err = skipString(b, j); err != nil {
					return 0, err
				}
				j = skipWS(b, j)
				if j >= len(b) || b[j] != ':' {
					return 0, serr(j, "expected ':'")
				}
				j = skipWS(b, j+1)
			}
			if j, err = skipValueDepth(b, j, depth+1); err != nil {
				return 0, err
			}
			j = skipWS(b, j)
			if j >= len(b) {
				return 0, serr(j, "unexpected end of input")
			}
			if b[j] == close {
				return j + 1, nil
			}
			if b[j] != ',' {
				return 0, serr(j, "expected ',' or '"+string(close)+"'")
			}
			j = skipWS(b, j+1)
		}
	case 't':
		return lit(b, i, "true")
	case 'f':
		return lit(b, i, "false")
	case 'n':
		return lit(b, i, "null")
	}
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	start := j
	for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
		j++
	}
	if j == start {
		return 0, serr(i, "invalid character "+strconv.QuoteRune(rune(b[i])))
	}
	return j, nil
}

func lit(b []byte, i int, s string) (int, error) {
	if len(b)-i >= len(s) && string(b[i:i+len(s)]) == s {
		return i + len(s), nil
	}
	return 0, serr(i, "invalid literal")
}

// checkDoc validates that b is exactly one JSON value.
func checkDoc(b []byte) error {
	i := skipWS(b, 0)
	j, err := skipValue(b, i)
	if err != nil {
		return err
	}
	if j = skipWS(b, j); j != len(b) {
		return serr(j, "data after top-level value")
	}
	return nil
}

// field returns the span of member key of the object whose span is s.
// b must be valid JSON (checkDoc).
func field(b []byte, s span, key string) (span, bool) {
	i := skipWS(b, s.start)
	if i >= s.end || b[i] != '{' {
		return span{}, false
	}
	i = skipWS(b, i+1)
	for i < s.end && b[i] == '"' {
		ke, _ := skipString(b, i)
		match := keyEq(b[i:ke], key)
		vs := skipWS(b, skipWS(b, ke)+1)
		ve, _ := skipValue(b, vs)
		if match {
			return span{vs, ve}, true
		}
		i = skipWS(b, ve)
		if i < s.end && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	return span{}, false
}

func keyEq(quoted []byte, key string) bool {
	raw := quoted[1 : len(quoted)-1]
	if len(raw) == len(key) && string(raw) == key {
		return true
	}
	for _, c := range raw {
		if c == '\\' {
			var k string
			return json.Unmarshal(quoted, &k) == nil && k == key
		}
	}
	return false
}

// path follows a dotted path from s; a numeric segment indexes an array.
func path(b []byte, s span, p string) (span, bool) {
	for p != "" {
		seg, rest, _ := strings.Cut(p, ".")
		p = rest
		i := skipWS(b, s.start)
		if i < s.end && b[i] == '[' {
			n, err := strconv.Atoi(seg)
			if err != nil {
				return span{}, false
			}
			el := elements(b, s)
			if n < 0 || n >= len(el) {
				return span{}, false
			}
			s = el[n]
			continue
		}
		var ok bool
		if s, ok = field(b, s, seg); !ok {
			return span{}, false
		}
	}
	return s, true
}

// elements returns the spans of the array at s (nil if s is no array).
func elements(b []byte, s span) []span {
	i := skipWS(b, s.start)
	if i >= s.end || b[i] != '[' {
		return nil
	}
	var out []span
	i = skipWS(b, i+1)
	for i < s.end && b[i] != ']' {
		e, _ := skipValue(b, i)
		out = append(out, span{i, e})
		i = skipWS(b, e)
		if i < s.end && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	return out
}

// text returns a string value at s: a string, the first string of an array
// (fragments joined by " … " when join is set), or a number's text.
func text(b []byte, s span, join bool) string {
	i := skipWS(b, s.start)
	if i >= s.end {
		return ""
	}
	switch b[i] {
	case '"':
		return unquote(b[i:s.end])
	case '[':
		var parts []string
		for _, e := range elements(b, s) {
			if b[e.start] == '"' {
				parts = append(parts, unquote(b[e.start:e.end]))
				if !join {
					break
				}
			}
		}
		return strings.Join(parts, " … ")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(b[i:s.end])
	}
	return ""
}

func unquote(q []byte) string {
	raw := q[1 : len(q)-1]
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			var s string
			if json.Unmarshal(q, &s) != nil {
				return ""
			}
			return s
		}
	}
	return string(raw)
}

func number(b []byte, s span) (float64, bool) {
	f, err := strconv.ParseFloat(string(b[skipWS(b, s.start):s.end]), 64)
	return f, err == nil
}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}

// withMember appends the object at s with member key:val added at its end.
func withMember(dst, b []byte, s span, key string, val []byte) []byte {
	end := s.end - 1 // the closing brace
	dst = append(dst, b[s.start:end]...)
	if inner := skipWS(b, s.start+1); inner != end {
		dst = append(dst, ',')
	}
	dst = appendString(dst, key)
	dst = append(dst, ':')
	dst = append(dst, val...)
	return append(dst, '}')
}
