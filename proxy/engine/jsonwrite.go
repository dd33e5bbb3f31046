package engine

import (
	"slices"
	"unicode/utf8"
)

// plainJSON marks the bytes that appendString copies as they are:
// printable ASCII other than '"' and '\\'.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainEnd returns the end of the run of bytes from s[i] on that a JSON
// string holds as they are (plainJSON), testing 8 bytes at a time for a
// control byte, '"', '\\' or a non-ASCII byte: explanations and URLs are
// long ASCII runs.
func plainEnd(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8] // one bounds check: the loads below combine into one
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		q, e := x^swarQuote, x^swarBS
		// Each term flags, in its high bit, a byte < 0x20, a '"', a
		// '\\' or a byte >= 0x80; a borrow can only flag bytes above
		// one already flagged.
		if ((x-0x20*swarLo)&^x|(q-swarLo)&^q|(e-swarLo)&^e|x)&swarHi != 0 {
			break
		}
	}
	for i < len(s) && plainJSON[s[i]] {
		i++
	}
	return i
}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	if len(s) <= 32 && plainEnd(s, 0) == len(s) {
		// A short plain string (a cluster ID, a relation) in one copy.
		n := len(dst)
		dst = slices.Grow(dst, len(s)+2)[:n+len(s)+2]
		dst[n] = '"'
		copy(dst[n+1:], s)
		dst[n+1+len(s)] = '"'
		return dst
	}
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		// Copy the run of bytes that need no escape in one append.
		j := plainEnd(s, i)
		dst = append(dst, s[i:j]...)
		if i = j; i >= len(s) {
			break
		}
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

// openMember appends the object at s without its closing brace and then
// quotedKey, the JSON key of a new last member with its quotes and
// colon; the caller appends the value and '}'.
func openMember(dst, b []byte, s span, quotedKey string) []byte {
	end := s.end - 1 // the closing brace
	dst = append(dst, b[s.start:end]...)
	if inner := skipWS(b, s.start+1); inner != end {
		dst = append(dst, ',')
	}
	return append(dst, quotedKey...)
}
