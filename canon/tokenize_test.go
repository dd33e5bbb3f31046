package canon

import (
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"
)

// scanRunes is scan as it was before asciiWords, one byte or rune a turn:
// the oracle of FuzzScan.
func scanRunes(text string, toks []string, sents []string, sentences bool) ([]string, []string) {
	const (
		none = iota
		word
		han
	)
	state := none
	start := 0   // start of the current word, or of the previous CJK rune
	runLen := 0  // CJK runes in the current run
	prevEnd := 0 // end of the previous CJK rune
	sent := 0    // start of the current sentence
	hasTok := false
	endSentence := func(end int) {
		if sentences && hasTok {
			s, e := sent, end
			for s < e && (text[s] == ' ' || text[s] == '\n') {
				s++
			}
			for e > s && (text[e-1] == ' ' || text[e-1] == '\n') {
				e--
			}
			sents = append(sents, text[s:e])
		}
		sent = end
		hasTok = false
	}
	flush := func(i int) {
		switch state {
		case word:
			toks = append(toks, text[start:i])
			hasTok = true
		case han:
			if runLen == 1 {
				toks = append(toks, text[start:prevEnd])
				hasTok = true
			}
		}
		state = none
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if wordByte[c] {
				if state != word {
					flush(i)
					state, start = word, i
				}
				// The rest of an ASCII word in a tight loop: most of
				// the text, and the state above does not change in it.
				for i++; i < len(text) && text[i] < utf8.RuneSelf && wordByte[text[i]]; i++ {
				}
				continue
			}
			flush(i)
			i++
			switch c {
			case '\n':
				endSentence(i)
			case '.', '!', '?':
				if i == len(text) || text[i] == ' ' || text[i] == '\n' {
					endSentence(i)
				}
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case cjk(r):
			if state == han {
				toks = append(toks, text[start:i+size])
				hasTok = true
				runLen++
			} else {
				flush(i)
				state, runLen = han, 1
			}
			start, prevEnd = i, i+size
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) && state == word:
			if state != word {
				flush(i)
				state, start = word, i
			}
		default:
			flush(i)
			if r == '。' || r == '！' || r == '？' || r == '｡' {
				endSentence(i + size)
			}
		}
		i += size
	}
	flush(len(text))
	if sent < len(text) || hasTok {
		endSentence(len(text))
	}
	return toks, sents
}

// scanCases mix ASCII words with non-ASCII letters before, inside and
// after them, CJK runs, and every sentence end.
var scanCases = []string{
	"plain words. and more! done? yes\nnext line",
	"café au lait naïve résumé. Ünïcode",
	"東京都 is a city. 日本語のテキスト。そして",
	"a.b a. b! c?d e?\n\nf",
	"x\u0301y z\u0308 \u0301lead mark",
	"mixed東京words and 1.5 numbers... end",
	"trailing word",
	"...",
	"",
	"ends with é",
	"é",
	"東",
	"a東b",
	// Longer than the 64-byte blocks of the AVX2 path (tokenize_amd64.go),
	// with sentence ends, "e.g." and a version inside it, and accents and
	// CJK in its second half.
	"The quick brown fox jumps over the lazy dog. It was version 1.5, e.g. the one\nbefore! Was it? " +
		"Yes: naïve café owners of Zürich read 東京都 news... and the end",
}

// FuzzScan: scan gives scanRunes' tokens and sentences.
func FuzzScan(f *testing.F) {
	for _, c := range scanCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, sentences := range []bool{false, true} {
			toks, sents := scan(text, nil, nil, sentences)
			wtoks, wsents := scanRunes(text, nil, nil, sentences)
			if !slices.Equal(toks, wtoks) || !slices.Equal(sents, wsents) {
				t.Errorf("scan(%q, %v) = %q, %q; want %q, %q", text, sentences, toks, sents, wtoks, wsents)
			}
		}
	})
}

// TestWordBytes: wordBytes marks exactly the bytes wordByte lists, at
// every position and whatever the bytes beside it.
func TestWordBytes(t *testing.T) {
	for b := range 256 {
		for pos := range 8 {
			for _, fill := range []byte{0x00, 0x2f, 0x3a, 'a', 'z' + 1, 0x80, 0xff} {
				w := wordWith(fill, byte(b), pos)
				m := wordBytes(w)
				for k := range 8 {
					c := byte(w >> (8 * k))
					if got := m>>(8*k+7)&1 == 1; got != wordByte[c] || m>>(8*k)&0x7f != 0 {
						t.Fatalf("wordBytes(%#x) = %#x: byte %d (%#x) marked %v, want %v", w, m, k, c, got, wordByte[c])
					}
				}
			}
		}
	}
}

// TestEqBytes: eqBytes marks exactly the bytes equal to c.
func TestEqBytes(t *testing.T) {
	for _, c := range []byte{'\n', '.', '!', '?', 0, 0x7f, 0x80, 0xff} {
		for b := range 256 {
			for pos := range 8 {
				w := uint64(0x8000ff7f2e0a0100) ^ uint64(c)*lows&0xff00ff00ff00ff00
				w = w&^(0xff<<(8*pos)) | uint64(b)<<(8*pos)
				m := eqBytes(w, c)
				for k := range 8 {
					got := m>>(8*k+7)&1 == 1
					if want := byte(w>>(8*k)) == c; got != want || m>>(8*k)&0x7f != 0 {
						t.Fatalf("eqBytes(%#x, %#x) = %#x: byte %d marked %v, want %v", w, c, m, k, got, want)
					}
				}
			}
		}
	}
}

// wordWith returns eight bytes fill with b at position pos, as a
// little-endian word.
func wordWith(fill, b byte, pos int) uint64 {
	w := uint64(fill) * lows
	return w&^(0xff<<(8*pos)) | uint64(b)<<(8*pos)
}
