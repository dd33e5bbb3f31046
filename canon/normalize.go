package canon

import (
	"encoding/binary"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/winnow-search/winnow/internal/bytespan"
)

// asciiClass maps an ASCII byte to its canonical form: 0 means the byte
// becomes a space (white space, controls, colon, dash, quotes), any other
// value is the lower-cased byte.
var asciiClass = func() (t [128]byte) {
	for i := range t {
		c := byte(i)
		switch {
		case c <= ' ' || c == 0x7f:
			t[i] = 0
		case c == ':' || c == '-' || c == '"' || c == '\'' || c == '`':
			t[i] = 0
		case 'A' <= c && c <= 'Z':
			t[i] = c + 'a' - 'A'
		default:
			t[i] = c
		}
	}
	return t
}()

// runeAction tells how normalizeLine treats a non-ASCII rune.
type runeAction uint8

const (
	runeKeep runeAction = iota
	runeSpace
	runeDrop
)

// nonASCIIAction classifies a non-ASCII rune after NFKC.
func nonASCIIAction(r rune) runeAction {
	switch r {
	case '\u00ad', '\u200b', '\u2060', '\ufeff': // soft hyphen, zero width
		return runeDrop
	case '‘', '’', '‚', '‛', '“', '”', '„', '‟', '«', '»', '‹', '›', '′', '″', '\u00a0':
		return runeSpace
	case '¶':
		// The pilcrow is the permalink anchor of Sphinx, MkDocs and many
		// blogs ("Introduction¶"), not text.
		return runeSpace
	}
	if r < 0x2000 {
		if r == 0x85 || r < 0xa0 || r == 0x58a || r == 0x5be || r == 0x1400 || r == 0x1806 || r == 0x1680 {
			return runeSpace
		}
		return runeKeep
	}
	if r >= 0x3100 && r < 0xfe00 {
		return runeKeep // CJK and Hangul syllables: fast path
	}
	if unicode.Is(unicode.Pd, r) || unicode.IsSpace(r) || unicode.IsControl(r) {
		return runeSpace
	}
	return runeKeep
}

// foldRune is what fold does with a non-ASCII rune r after NFKC: its
// action and, for a kept rune, the rune it writes (its lower case but
// in CJK and Hangul, where no rune has one).
func foldRune(r rune) (runeAction, rune) {
	a := nonASCIIAction(r)
	if a == runeKeep && (r < 0x3000 || r > 0xd7ff) {
		return a, unicode.ToLower(r)
	}
	return a, r
}

// fold2 is foldRune for the runes of two UTF-8 bytes (U+0080 to
// U+07FF), the action in the top byte and the rune below it: on text
// in Latin letters with accents, Greek or Cyrillic, most non-ASCII
// runes, which unicode.ToLower finds by a binary search each.
var fold2 = func() (t [0x800]uint32) {
	for r := rune(0x80); r < 0x800; r++ {
		a, low := foldRune(r)
		t[r] = uint32(a)<<24 | uint32(low)
	}
	return t
}()

// decodeRune is utf8.DecodeRune with the two- and three-byte sequences
// of valid UTF-8 read here (the standard one reads every non-ASCII rune
// out of line, through two tables); anything else, including every
// invalid sequence, goes to utf8.DecodeRune, so the results are its. Its
// callers try rune2 first, which is inlined.
func decodeRune(s []byte) (rune, int) {
	if r, n := rune2(s); n != 0 {
		return r, n
	}
	// Not an overlong form (below U+0800) nor a surrogate.
	if r, ok := rune3(s); ok && r >= 0x800 && (r < 0xd800 || r > 0xdfff) {
		return r, 3
	}
	return utf8.DecodeRune(s)
}

// rune3 decodes three bytes at the start of s shaped as a three-byte UTF-8
// sequence (a lead byte 0xe0 to 0xef, two continuation bytes); ok is
// false when s does not start with such bytes. Whether the rune is
// allowed there (no overlong form, no surrogate) is the caller's test.
func rune3(s []byte) (r rune, ok bool) {
	if len(s) >= 3 && s[0]&0xf0 == 0xe0 && s[1]&0xc0 == 0x80 && s[2]&0xc0 == 0x80 {
		return rune(s[0]&0x0f)<<12 | rune(s[1]&0x3f)<<6 | rune(s[2]&0x3f), true
	}
	return 0, false
}

// keptRun returns the end of the run of runes of U+3100 to U+D7FF (CJK,
// kana, Hangul: what fold keeps as they are) at src[i:].
func keptRun(src []byte, i int) int {
	for {
		if r, ok := rune3(src[i:]); !ok || r < 0x3100 || r >= 0xd800 {
			return i
		}
		i += 3
	}
}

// rune2 decodes a valid two-byte UTF-8 sequence at the start of s; n is
// 0 when s does not start with one.
func rune2(s []byte) (r rune, n int) {
	if len(s) >= 2 {
		// A lead byte of 0xc2 to 0xdf (0xc0 and 0xc1 lead overlong
		// forms), then a continuation byte.
		if c, d := s[0], s[1]; c-0xc2 < 0xe0-0xc2 && d&0xc0 == 0x80 {
			return rune(c&0x1f)<<6 | rune(d&0x3f), 2
		}
	}
	return 0, 0
}

// normalizer holds the scratch buffers of one normalization run. The zero
// value is ready to use; it is not safe for concurrent use.
type normalizer struct {
	nfkc []byte
	out  []byte
}

// line normalizes one line of raw text and returns the canonical line
// without a trailing newline. The result aliases n's buffer and is valid
// until the next call. raw must be valid UTF-8.
func (n *normalizer) line(raw []byte) []byte {
	return stripMarkers(n.fold(raw))
}

// fold is line without the removal of bullets and numberings.
func (n *normalizer) fold(raw []byte) []byte {
	src := raw
	if !inert(raw) && norm.NFKC.QuickSpan(raw) != len(raw) {
		n.nfkc = norm.NFKC.Append(n.nfkc[:0], raw...)
		src = n.nfkc
	}
	out := slices.Grow(n.out[:0], len(src)+9) // foldASCII's room, grown once
	space := true                             // suppress leading space
	for i := 0; i < len(src); {
		// A non-ASCII rune after another goes straight to the rune
		// path: on non-Latin text a call of foldASCII a rune cost more
		// than the rune's own folding.
		if src[i] < utf8.RuneSelf {
			if i, out, space = foldASCII(src, i, out, space); i == len(src) {
				break
			}
		}
		r, size := rune2(src[i:])
		if size == 0 {
			r, size = decodeRune(src[i:])
		}
		i += size
		var act runeAction
		var low rune
		if r < 0x800 {
			// Two bytes (Latin letters with accents, Greek, Cyrillic,
			// Hebrew, Arabic): action and lower case from one table.
			e := fold2[r]
			act, low = runeAction(e>>24), rune(e&0xffffff)
		} else if r == '…' {
			// NFKC's three full stops, for a line inert let through
			// (NFKC leaves no ellipsis behind).
			if space && len(out) > 0 {
				out = append(out, ' ')
			}
			space = false
			out = append(out, "..."...)
			continue
		} else if r >= 0x3100 && r < 0xd800 {
			// CJK, kana and Hangul are kept as they are (foldRune):
			// the run of them that starts here is copied at once.
			if space && len(out) > 0 {
				out = append(out, ' ')
			}
			space = false
			j := keptRun(src, i)
			out = append(out, src[i-size:j]...)
			i = j
			continue
		} else {
			act, low = foldRune(r)
		}
		switch act {
		case runeDrop:
			continue
		case runeSpace:
			if len(out) > 0 {
				space = true
			}
			continue
		}
		if space && len(out) > 0 {
			out = append(out, ' ')
		}
		space = false
		if low != r {
			out = utf8.AppendRune(out, low)
			continue
		}
		out = append(out, src[i-size:i]...)
	}
	n.out = out
	return out
}

// foldASCII is fold's loop over ASCII text: it appends the canonical form
// of the ASCII bytes from src[i:] to out, space telling that a space is
// due before the next kept byte, and returns the offset of the first
// non-ASCII byte (or len(src)), out and space. A kept byte adds at most
// itself and the space that skipped bytes before it left due, so out is
// grown once and written by index. Eight bytes that fold to themselves
// but for the case of letters (no separator but single spaces after a
// kept byte: most of a text) are folded at once ([plainFold]). Where the
// CPU has AVX2, the bytes after a kept byte are folded 32 a step instead
// ([foldASCIIAVX2]), up to a non-ASCII byte or the last 31 bytes. Since
// out grows by at most one byte more than the bytes read, its room
// stays at least 8 bytes more than the bytes left, enough for the
// eight-byte stores and foldASCIIAVX2's.
func foldASCII(src []byte, i int, out []byte, space bool) (int, []byte, bool) {
	out = slices.Grow(out, len(src)-i+9)
	buf, k := out[:cap(out)], len(out)
	for i < len(src) {
		if hasFoldAVX2 && k > 0 && len(src)-i >= 32 {
			_ = buf[k+len(src)-i] // the n+1 bytes foldASCIIAVX2 may write
			r, w, due := foldASCIIAVX2(&src[i], len(src)-i, &buf[k], space)
			i, k, space = i+r, k+w, due
		} else if !space && k > 0 && i+8 <= len(src) {
			if w := binary.LittleEndian.Uint64(src[i:]); plainFold(w) {
				binary.LittleEndian.PutUint64(buf[k:], w|upperBytes(w)>>2)
				i += 8
				if k += 8; w>>56 == ' ' {
					k-- // the space is due before the next kept byte
					space = true
				}
				continue
			}
		}
		// Else eight bytes one at a time, before the next try.
		for end := min(i+8, len(src)); i < end; i++ {
			c := src[i]
			if c >= utf8.RuneSelf {
				return i, buf[:k], space
			}
			m := asciiClass[c]
			if m == 0 {
				space = true
				continue
			}
			if space && k > 0 {
				buf[k] = ' '
				k++
			}
			space = false
			buf[k] = m
			k++
		}
	}
	return i, buf[:k], space
}

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainFold reports that the 8 bytes of w fold to themselves after a kept
// byte, but for upper-case letters: all ASCII, none of asciiClass's
// separators but spaces, and no two spaces side by side. The tests are
// the word-at-a-time ones of Anderson's "Bit Twiddling Hacks" (a byte
// below n, a zero byte), exact for the word as a whole.
func plainFold(w uint64) bool {
	c, d, q, a, g := w^':'*lows, w^'-'*lows, w^'"'*lows, w^'\''*lows, w^'`'*lows
	sep := (c-lows)&^c | (d-lows)&^d | (q-lows)&^q | (a-lows)&^a | (g-lows)&^g // any of them
	sp := eqBytes(w, ' ')
	// w: non-ASCII; below 0x20: controls; plus one: DEL (on ASCII bytes).
	return (w|(w-0x20*lows)&^w|(w+lows)|sep|sp&(sp>>8))&highs == 0
}

// upperBytes sets the high bit of each byte of w (ASCII) that is an
// upper-case letter.
func upperBytes(w uint64) uint64 {
	x := w | highs
	return (x - 'A'*lows) &^ (x - ('Z'+1)*lows) & highs
}

// inert reports whether NFKC leaves s unchanged, but for an ellipsis
// (U+2026, three full stops after NFKC, which fold writes itself), because
// every rune is ASCII or in a range of common characters that are
// NFKC-stable and never compose with a neighbour (precomposed Latin-1
// letters, basic Greek and Cyrillic, kana, CJK unified ideographs, Hangul
// syllables, common punctuation and symbols, box drawing). It is a fast
// path: false means "check with norm". ASCII is skipped eight bytes at a
// time, or 32 with AVX2 ([bytespan.ASCII]).
func inert(s []byte) bool {
	for i := 0; i < len(s); {
		if i+8 <= len(s) && binary.LittleEndian.Uint64(s[i:])&0x8080808080808080 == 0 {
			i += bytespan.ASCII(s[i:]) // 8 bytes or more
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := rune2(s[i:])
		if size == 0 {
			r, size = decodeRune(s[i:])
		}
		i += size
		if r < 0x800 {
			if inert2[r/64]>>(r%64)&1 == 0 {
				return false
			}
		} else if (r < 0x4e00 || r > 0x9fff) && !inertRune(r) {
			// CJK unified ideographs, the commonest runes of three
			// bytes, tested first.
			return false
		}
	}
	return true
}

// inertRune reports whether r is one of the runes inert lets through.
func inertRune(r rune) bool {
	switch {
	case r >= 0xc0 && r <= 0xff, r == 0xa0, r == 0xab, r == 0xbb, r == 0xa9, r == 0xb7,
		r == 0xa7, r == 0xae, r == 0xb0, r == 0xb1, r == 0xb6,
		r >= 0x391 && r <= 0x3c9, r >= 0x401 && r <= 0x451,
		r >= 0x2013 && r <= 0x2014, r >= 0x2018 && r <= 0x2019, r >= 0x201c && r <= 0x201e, r == 0x2022, r == 0x2026,
		r >= 0x2500 && r <= 0x257f, r >= 0x2713 && r <= 0x2718,
		r >= 0x3001 && r <= 0x3002, r >= 0x3008 && r <= 0x3011,
		r >= 0x3041 && r <= 0x3096, r >= 0x30a1 && r <= 0x30fa, r == 0x30fc,
		r >= 0x4e00 && r <= 0x9fff, r >= 0xac00 && r <= 0xd7a3:
		return true
	}
	return false
}

// inert2 is inertRune for the runes below U+0800 as bits: the list of
// ranges is a dozen comparisons a rune.
var inert2 = func() (t [0x800 / 64]uint64) {
	for r := rune(0); r < 0x800; r++ {
		if inertRune(r) {
			t[r/64] |= 1 << (r % 64)
		}
	}
	return t
}()

// bullet reports whether r is a list bullet that is removed at a line start.
func bullet(r rune) bool {
	switch r {
	case '•', '·', '‣', '◦', '▪', '▫', '●', '○', '■', '□', '►', '▸', '▹', '▶', '➢', '➤', '✓', '✔', '⁃', '∙', '*', '+', '>', '#':
		return true
	}
	return false
}

// stripMarkers removes leading bullets and list numberings ("1.", "a.1",
// "iv)", "(b)") from a normalized line (lower case, single spaces, no
// leading space). At most four markers are removed.
func stripMarkers(s []byte) []byte {
	for range 4 {
		if len(s) == 0 {
			return s
		}
		r, size := utf8.DecodeRune(s)
		if bullet(r) {
			if r < utf8.RuneSelf && len(s) > size && s[size] != ' ' {
				return s // "*foo", "+1", "#tag" are words, not bullets
			}
			s = trimSpace(s[size:])
			continue
		}
		k := numbering(s)
		if k == 0 {
			return s
		}
		s = trimSpace(s[k:])
	}
	return s
}

func trimSpace(s []byte) []byte {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	return s
}

// numbering returns the length of a list numbering at the start of s, or
// 0. A numbering is a sequence of items (1 to 3 digits, one letter a-z, or
// a roman numeral of up to four of ivxlc) separated by "." and ending in
// "." or ")" or an item after a ".", optionally in parentheses, followed
// by a space or the end of the line; it holds at least one "." or ")".
func numbering(s []byte) int {
	i := 0
	paren := false
	if s[0] == '(' {
		paren = true
		i++
	}
	punct := false
	for items := 0; ; items++ {
		j := item(s[i:])
		if j == 0 {
			return 0
		}
		i += j
		if i == len(s) || s[i] == ' ' {
			if paren || !punct {
				return 0
			}
			return i
		}
		switch s[i] {
		case ')':
			i++
			if i == len(s) || s[i] == ' ' {
				return i
			}
			return 0
		case '.':
			punct = true
			i++
			if i == len(s) || s[i] == ' ' {
				if paren {
					return 0
				}
				return i
			}
		default:
			return 0
		}
		if items > 6 {
			return 0
		}
	}
}

// item returns the length of one numbering item at the start of s.
func item(s []byte) int {
	n := 0
	for n < len(s) && n < 4 && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	if n > 0 {
		if n == 4 {
			return 0
		}
		return n
	}
	for n < len(s) && n < 5 && strings.IndexByte("ivxlc", s[n]) >= 0 {
		n++
	}
	if n > 0 && n < 5 && (n == len(s) || s[n] < 'a' || s[n] > 'z') {
		return n
	}
	if len(s) > 0 && 'a' <= s[0] && s[0] <= 'z' && (len(s) == 1 || s[1] < 'a' || s[1] > 'z') {
		return 1
	}
	return 0
}

// Normalize returns the canonical form of s: Unicode NFKC, lower case,
// colons, dashes (Unicode Pd) and single and double quotes replaced with a
// space, bullets and list numberings such as "1.", "a.1", "iv)" and "(b)"
// removed at line starts, white space collapsed to single spaces and blank
// lines removed. Lines are joined with "\n" and the result has no trailing
// newline. Invalid UTF-8 is replaced with U+FFFD first.
func Normalize(s string) string {
	var (
		n   normalizer
		b   strings.Builder
		buf []byte
	)
	b.Grow(len(s))
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		buf = append(buf[:0], line...)
		out := n.line(buf)
		if len(out) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.Write(out)
	}
	return b.String()
}
