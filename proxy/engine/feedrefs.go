package engine

import (
	"bytes"
	"unicode/utf8"
)

// decodeXML appends t with entity and character references replaced and
// line ends normalized to dst; ok is false for an unknown entity.
func decodeXML(dst, t []byte) ([]byte, bool) {
	for i := 0; i < len(t); i++ {
		switch c := t[i]; c {
		case '\r':
			dst = append(dst, '\n')
			if i+1 < len(t) && t[i+1] == '\n' {
				i++
			}
		case '&':
			k := bytes.IndexByte(t[i:], ';')
			if k < 0 {
				return dst, false
			}
			ref := t[i+1 : i+k]
			i += k
			switch string(ref) {
			case "amp":
				dst = append(dst, '&')
			case "lt":
				dst = append(dst, '<')
			case "gt":
				dst = append(dst, '>')
			case "apos":
				dst = append(dst, '\'')
			case "quot":
				dst = append(dst, '"')
			default:
				r, ok := charRef(ref)
				if !ok {
					return dst, false
				}
				dst = utf8.AppendRune(dst, r)
			}
		default:
			dst = append(dst, c)
		}
	}
	return dst, true
}

// knownRefs reports whether every entity or character reference in t is
// one decodeXML knows, without decoding: text that is not kept needs only
// the check.
func knownRefs(t []byte) bool {
	for {
		i := bytes.IndexByte(t, '&')
		if i < 0 {
			return true
		}
		t = t[i:]
		k := bytes.IndexByte(t, ';')
		if k < 0 {
			return false
		}
		switch ref := t[1:k]; string(ref) {
		case "amp", "lt", "gt", "apos", "quot":
		default:
			if _, ok := charRef(ref); !ok {
				return false
			}
		}
		t = t[k+1:]
	}
}

// charRef decodes "#123" or "#x7B"; it accepts only XML characters.
func charRef(ref []byte) (rune, bool) {
	if len(ref) < 2 || ref[0] != '#' {
		return 0, false
	}
	base, d := 10, ref[1:]
	if d[0] == 'x' {
		base, d = 16, d[1:]
	}
	if len(d) == 0 || len(d) > 8 {
		return 0, false
	}
	var r rune
	for _, c := range d {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case base == 16 && c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case base == 16 && c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*rune(base) + rune(v)
	}
	ok := r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
	return r, ok
}
