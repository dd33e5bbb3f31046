// Package renumber changes the numbers of a real HTML page while keeping
// its words, for tests of what numbers may change between two fetches of
// one page (prices, counts, dates) without making them different pages.
package renumber

import (
	"bytes"
	"regexp"
)

// text matches the text between two tags; markup and attribute values
// stay as they are.
var text = regexp.MustCompile(`>[^<]*<`)

// ShiftDigits returns a copy of the HTML page with every ASCII digit in
// its text between tags shifted by 3 (0 → 3, 7 → 0): every number
// changes, and so does no word.
func ShiftDigits(page []byte) []byte {
	return text.ReplaceAllFunc(page, func(b []byte) []byte {
		return bytes.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return '0' + (r-'0'+3)%10
			}
			return r
		}, b)
	})
}

// afterNumber matches a number and the word that follows it.
var afterNumber = regexp.MustCompile(`([0-9]+[ ,.]*)\pL+`)

// RewordAfterNumbers returns a copy of the HTML page with the word after
// each number in its text replaced by "zzz": the places ShiftDigits
// changes, changed as words instead, for contrast.
func RewordAfterNumbers(page []byte) []byte {
	return text.ReplaceAllFunc(page, func(b []byte) []byte {
		return afterNumber.ReplaceAll(b, []byte("${1}zzz"))
	})
}
