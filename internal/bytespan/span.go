// Package bytespan measures the prefix of a byte slice made of one kind of
// byte: plain ASCII, or the bytes a JSON string holds as they are. Both
// read 32 bytes a step with AVX2 where the CPU has it, else eight at a
// time; canon's line check and corpus's JSON Lines scanner skip most of
// their input here.
package bytespan

import "encoding/binary"

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// ASCII returns the length of b's longest prefix of bytes below 0x80.
func ASCII(b []byte) int {
	i := 0
	if hasAVX2 && len(b) >= 32 {
		i = asciiAVX2(&b[0], len(b))
	}
	for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&highs == 0 {
		i += 8
	}
	for i < len(b) && b[i] < 0x80 {
		i++
	}
	return i
}

// JSONPlain returns the length of b's longest prefix that holds no
// quote, no backslash, no control byte (below 0x20) and no byte of 0x80
// or more: the bytes a JSON string holds that need no check.
func JSONPlain(b []byte) int {
	i := 0
	if hasAVX2 && len(b) >= 32 {
		i = jsonPlainAVX2(&b[0], len(b))
	}
	for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && !special(b[i]) {
		i++
	}
	return i
}

// special reports whether c ends JSONPlain's prefix.
func special(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }

// plainWord reports that none of the 8 bytes of w is below 0x20, a quote,
// a backslash or non-ASCII (the bit tricks of Anderson's "Bit Twiddling
// Hacks": haszero and hasless, exact as a whole-word test).
func plainWord(w uint64) bool {
	q := w ^ (lows * '"')
	s := w ^ (lows * '\\')
	return (w|(w-lows*0x20)&^w|(q-lows)&^q|(s-lows)&^s)&highs == 0
}
