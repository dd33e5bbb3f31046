package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A tiny JSON scanner that works on byte offsets, so the proxy can find the
// result list and a hit's fields without building a tree and can copy
// everything else verbatim. Every function is O(n) in the bytes it skips.

type scanError struct {
	off int
	err error
}

func (e *scanError) Error() string { return fmt.Sprintf("at byte %d: %v", e.off, e.err) }
func (e *scanError) Unwrap() error { return e.err }

func serr(off int, msg string) error { return &scanError{off, errors.New(msg)} }

// wsTab marks JSON white space; numTab marks the bytes of a number.
var wsTab, numTab [256]bool

func init() {
	for _, c := range " \t\n\r" {
		wsTab[c] = true
	}
	for _, c := range "0123456789.eE+-" {
		numTab[c] = true
	}
}

// skipWS returns the offset of the first non-space byte at or after i. It
// is small enough to inline; runs of indentation go to skipWSRun.
func skipWS(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	return skipWSRun(b, i)
}

func skipWSRun(b []byte, i int) int {
	// Pretty-printed answers indent with runs of spaces after a newline:
	// skip 8 spaces at once wherever the run allows.
	for {
		for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:]) == 0x2020202020202020 {
			i += 8
		}
		if i >= len(b) || !wsTab[b[i]] {
			return i
		}
		i++
	}
}

// skipString returns the offset after the string starting at b[i] == '"'.
// Control characters are not rejected: the body is the backend's and is
// copied, not reinterpreted. Callers try shortString first.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[min(j, len(b)):], '"')
		if k < 0 {
			return 0, serr(i, "unterminated string")
		}
		j += k
		if b[j-1] != '\\' {
			return j + 1, nil
		}
		// Count the backslashes before the quote: an odd run escapes it.
		n := 1
		for j-1-n > i && b[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + 1, nil
		}
		j++
	}
}

// le64 returns the 8 bytes at b[i:] as a little-endian word: one bounds
// check and one load, without the subslice binary.LittleEndian needs.
func le64(b []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(b[i : i+8])
}

// shortString returns the offset after the string at b[i] when b[i] is
// '"', its closing quote is among the 8 bytes after the opening one and
// no backslash precedes it, else 0 (then skipString or skipValueDepth
// decides). It inlines.
func shortString(b []byte, i int) int {
	if i+9 > len(b) || b[i] != '"' {
		return 0
	}
	q := le64(b, i+1) ^ swarQuote
	m := (q - swarLo) &^ q & swarHi
	if m == 0 {
		return 0
	}
	j := i + 1 + bits.TrailingZeros64(m)>>3
	if b[j-1] == '\\' {
		return 0
	}
	return j + 1
}

const (
	swarLo    = 0x0101010101010101
	swarHi    = 0x8080808080808080
	swarQuote = '"' * swarLo
	swarBS    = '\\' * swarLo
)

// scanString is skipString that also reports whether the string may hold
// an escape (false means it surely does not). The first 64 bytes are
// scanned 8 at a time for '"' or '\\' (SWAR: the lowest byte flagged by
// (v-lo)&^v&hi is exactly the first zero byte of v); longer strings go to
// bytes.IndexByte, which is vectorized, counting the backslashes before
// each quote it finds.
func scanString(b []byte, i int) (end int, esc bool, err error) {
	j := i + 1
	for lim := min(len(b), j+64); j+8 <= lim; {
		x := binary.LittleEndian.Uint64(b[j:])
		q, e := x^swarQuote, x^swarBS
		m := (q-swarLo)&^q&swarHi | (e-swarLo)&^e&swarHi
		if m == 0 {
			j += 8
			continue
		}
		j += bits.TrailingZeros64(m) >> 3
		if b[j] == '"' {
			return j + 1, esc, nil
		}
		esc = true
		j += 2 // the backslash and the byte it escapes
	}
	for ; j < len(b) && j < i+72; j++ {
		switch b[j] {
		case '"':
			return j + 1, esc, nil
		case '\\':
			esc = true
			j++
		}
	}
	esc = esc || j < len(b)
	for {
		if j >= len(b) {
			return 0, esc, serr(i, "unterminated string")
		}
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, esc, serr(i, "unterminated string")
		}
		j += k
		// Count the backslashes before the quote.
		n := 0
		for j-1-n > i && b[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + 1, esc, nil
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
		if k := shortString(b, i); k > 0 {
			return k, nil
		}
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
				if k := shortString(b, j); k > 0 {
					j = k
				} else if j, err = skipString(b, j); err != nil {
					return 0, err
				}
				j = skipWS(b, j)
				if j >= len(b) || b[j] != ':' {
					return 0, serr(j, "expected ':'")
				}
				j = skipWS(b, j+1)
			}
			// A string, the commonest value, is skipped here, not in
			// a call of skipValueDepth.
			if k := shortString(b, j); k > 0 && depth < maxDepth {
				j = k
			} else if depth < maxDepth && j < len(b) && b[j] == '"' {
				if j, err = skipString(b, j); err != nil {
					return 0, err
				}
			} else if j, err = skipValueDepth(b, j, depth+1); err != nil {
				return 0, err
			}
			if j < len(b) {
				if b[j] == ',' {
					j = skipWS(b, j+1)
					continue
				}
				if b[j] == close {
					return j + 1, nil
				}
			}
			var done bool
			if j, done, err = afterMember(b, j, close); err != nil || done {
				return j, err
			}
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
	for _, c := range b[j:] {
		if !numTab[c] {
			break
		}
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

// unquote returns the value of the JSON string q, quotes included, or ""
// if it does not decode. Strings without escapes that are ASCII, or valid
// UTF-8 without control characters, are their own value; only the others
// go through encoding/json.
func unquote(q []byte) string {
	raw := q[1 : len(q)-1]
	if plainString(raw) {
		return string(raw)
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return ""
	}
	return s
}

// plainString reports whether raw, the inside of a JSON string, decodes to
// itself (as encoding/json decodes it).
func plainString(raw []byte) bool {
	// Skip 16 bytes at a time while none is a backslash, a control byte
	// or a non-ASCII byte (SWAR: the high bit of each lane flags it, and
	// the lowest such byte is always flagged); a string of 8 bytes or
	// more ends with its last 8 bytes tested at once.
	i := 0
	for i+16 <= len(raw) && notPlain(le64(raw, i))|notPlain(le64(raw, i+8)) == 0 {
		i += 16
	}
	if i+16 > len(raw) {
		if i+8 <= len(raw) && notPlain(le64(raw, i)) == 0 {
			i += 8
		}
		if i+8 > len(raw) && len(raw) >= 8 && notPlain(le64(raw, len(raw)-8)) == 0 {
			return true
		}
	}
	high, ctl := false, false
	for _, c := range raw[i:] {
		switch {
		case c == '\\':
			return false
		case c >= utf8.RuneSelf:
			high = true
		case c < ' ':
			ctl = true
		}
	}
	return !high || !ctl && utf8.Valid(raw)
}

// notPlain flags (in the high bit of a lane) the bytes of w that are a
// backslash, a control byte or non-ASCII; the lowest such byte is always
// flagged, a byte above it may be flagged wrongly.
func notPlain(w uint64) uint64 {
	bs := w ^ swarBS
	return (w | (w-0x20*swarLo)&^w | (bs-swarLo)&^bs) & swarHi
}

func number(b []byte, s span) (float64, bool) {
	t := b[skipWS(b, s.start):s.end]
	if f, ok := simpleFloat(t); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(string(t), 64)
	return f, err == nil
}

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// simpleFloat parses -?d*(.d*)? with at most 15 digits, which is exact as
// float64(mantissa)/10^k (Clinger's fast path, as in strconv's
// atof64exact); ok is false for anything else.
func simpleFloat(t []byte) (float64, bool) {
	neg := len(t) > 0 && t[0] == '-'
	if neg {
		t = t[1:]
	}
	var m uint64
	i := 0
	for ; i < len(t) && t[i]-'0' <= 9; i++ {
		m = m*10 + uint64(t[i]-'0')
	}
	digits, frac := i, 0
	if i < len(t) && t[i] == '.' {
		f := i + 1
		i = f
		if i+8 <= len(t) {
			// 8 digits at once (SWAR, simdjson's
			// parse_eight_digits_unrolled): scores are mostly
			// fractions of many digits.
			if x := le64(t, i); x&0xF0F0F0F0F0F0F0F0|(x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0>>4 == 0x3333333333333333 {
				x = (x & 0x0F0F0F0F0F0F0F0F) * 2561 >> 8
				x = (x & 0x00FF00FF00FF00FF) * 6553601 >> 16
				m = m*100000000 + (x&0x0000FFFF0000FFFF)*42949672960001>>32
				i += 8
			}
		}
		for ; i < len(t) && t[i]-'0' <= 9; i++ {
			m = m*10 + uint64(t[i]-'0')
		}
		frac = i - f
		digits += frac
	}
	if i != len(t) || digits == 0 || digits > 15 {
		return 0, false
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// afterMember reads what follows a member of an object or array from
// b[j] on: the closing byte close, which ends it (done, next just past
// it), or a comma (next the start of the following member).
func afterMember(b []byte, j int, close byte) (next int, done bool, err error) {
	j = skipWS(b, j)
	if j >= len(b) {
		return 0, false, serr(j, "unexpected end of input")
	}
	if b[j] == close {
		return j + 1, true, nil
	}
	if b[j] != ',' {
		return 0, false, serr(j, "expected ',' or '"+string(close)+"'")
	}
	return skipWS(b, j+1), false, nil
}
