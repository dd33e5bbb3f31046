package similarity

import (
	"strings"
	"unicode"

	"github.com/zeebo/xxh3"
)

// HeadingHash returns the hash [Signature.Heading] holds for the heading
// h: the xxh3 of its words (maximal runs of letters and digits) in lower
// case, joined by single spaces, so that case, punctuation and spacing
// ("Big-Endian Mode" and "big endian mode") do not make two headings
// differ while any changed word does. It returns 0 for a heading without
// words, and never 0 otherwise.
func HeadingHash(h string) uint64 {
	var b strings.Builder
	inWord := false
	for _, r := range h {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if !inWord && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(unicode.ToLower(r))
			inWord = true
			continue
		}
		inWord = false
	}
	if b.Len() == 0 {
		return 0
	}
	if v := xxh3.HashString(b.String()); v != 0 {
		return v
	}
	return 1
}

// headingsDiffer reports whether both signatures carry a heading and the
// headings differ.
func headingsDiffer(a, b *Signature) bool {
	return a.Heading != 0 && b.Heading != 0 && a.Heading != b.Heading
}
