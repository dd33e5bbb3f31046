package canon

import (
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// wordByte reports whether a byte is an ASCII byte of a word.
var wordByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	return t
}()

// cjk reports whether r is written without spaces between words and so is
// tokenized as character bigrams: Han, Hiragana, Katakana and Hangul.
func cjk(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r >= 0x4e00 && r <= 0x9fff, r >= 0x3040 && r <= 0x30ff, r >= 0xac00 && r <= 0xd7a3:
		return true // fast path: unified ideographs, kana, Hangul syllables
	case r == 0x3005 || r == 0x30fc: // 々 and ー
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// scan splits text into word tokens and, when sentences is true,
// sentences; both are substrings of text. A word is a run of Unicode
// letters, digits and marks; a run of CJK characters yields its
// overlapping character bigrams (a lone CJK character is one token).
// Sentences end at ". ", "! ", "? " (or the punctuation at the end of the
// text), at "。", "！", "？" and at line ends; sentences without a token are
// dropped.
func scan(text string, toks []string, sents []string, sentences bool) ([]string, []string) {
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
	var scratch edgeScratch // asciiWords', zeroed once a text
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
		if state == none {
			var got bool
			if i, toks, got = asciiWords(text, i, toks, &scratch); got {
				hasTok = true
			}
			if i == len(text) {
				break
			}
		}
		c := text[i]
		if c < utf8.RuneSelf {
			if wordByte[c] {
				if state != word {
					flush(i)
					state, start = word, i
				}
				// The rest of an ASCII word in a tight loop: most of
				// the text, and the state above does not change in it.
				for i++; i < len(text) && wordByte[text[i]]; i++ {
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

// asciiWords is scan's loop over plain ASCII text, outside a word: it
// appends the ASCII words from text[i:] to toks and returns the offset of
// the first byte it leaves to scan (a non-ASCII byte, a word that a
// non-ASCII byte continues, a byte that may end a sentence) and whether
// it appended a word. Apart from scan, whose many live variables the
// compiler keeps on the stack, it runs in registers: most of the text is
// read here.
//
// It reads eight bytes at a time: a mask of their word bytes, XORed with
// itself shifted by one byte, marks each byte where a word starts or
// ends, and the marks are taken in order (the word-boundary bitmaps of
// Langdale and Lemire's simdjson, on one machine word). A loop that
// stops at the end of each word mispredicts a branch there. Where the
// CPU has AVX2, blockWords reads whole blocks of 64 bytes first
// (tokenize_amd64.go), unless a non-ASCII byte in the next 16 says the
// run ends there (text in a language with accents, or CJK text between
// its punctuation), which eight bytes at a time read for less than a
// call costs.
func asciiWords(text string, i int, toks []string, scratch *edgeScratch) (int, []string, bool) {
	got, in, start := false, false, 0 // in: a word opened at start
	var carry uint64                  // 1: the byte before text[i] is a word byte
	if hasTokenizeAVX2 && len(text)-i > 64 && (load64(text[i:])|load64(text[i+8:]))&highs == 0 {
		open, n := -1, len(toks)
		var done bool
		i, toks, open, done = blockWords(text, i, toks, open, scratch)
		if got = len(toks) > n; done {
			return i, toks, got
		}
		in, start, carry = open >= 0, open, 0
		if in {
			carry = 1
		}
	}
	for ; i+8 <= len(text); i += 8 {
		w := load64(text[i:])
		m := wordBytes(w) >> 7 // bit 8k: byte k is a word byte
		edges := m ^ (m<<8 | carry)
		carry = m >> 56
		stop := w&highs | eqBytes(w, '\n') | eqBytes(w, '.') | eqBytes(w, '!') | eqBytes(w, '?')
		lanes := 8
		if stop != 0 {
			lanes = bits.TrailingZeros64(stop) / 8
			edges &= 1<<(8*lanes) - 1
		}
		for ; edges != 0; edges &= edges - 1 {
			k := i + bits.TrailingZeros64(edges)/8
			if in {
				toks = append(toks, text[start:k])
				got = true
			} else {
				start = k
			}
			in = !in
		}
		if stop != 0 {
			p := i + lanes
			if in {
				if text[p] >= utf8.RuneSelf {
					return start, toks, got // the word may go on
				}
				toks = append(toks, text[start:p])
				got = true
			}
			return p, toks, got
		}
	}
	if in {
		i = start
	}
	// The last bytes, one at a time.
	for i < len(text) {
		c := text[i]
		if !wordByte[c] {
			if c >= utf8.RuneSelf || c == '\n' || c == '.' || c == '!' || c == '?' {
				break
			}
			i++
			continue
		}
		j := i + 1
		for j < len(text) && wordByte[text[j]] {
			j++
		}
		if j < len(text) && text[j] >= utf8.RuneSelf {
			break
		}
		toks = append(toks, text[i:j])
		got = true
		i = j
	}
	return i, toks, got
}

// load64 returns the first eight bytes of s as a little-endian word
// (one load).
func load64(s string) uint64 {
	b := s[:8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// wordBytes sets the high bit of each byte of w that is an ASCII word
// byte (0-9, A-Z, a-z) and clears the others. Setting each byte's high
// bit before a subtraction keeps borrows inside the byte, so the test
// is exact byte by byte (Anderson, "Bit Twiddling Hacks": bytes in a
// range).
func wordBytes(w uint64) uint64 {
	x := w | highs
	digit := (x - '0'*lows) &^ (x - ('9'+1)*lows)
	upper := (x - 'A'*lows) &^ (x - ('Z'+1)*lows)
	lower := (x - 'a'*lows) &^ (x - ('z'+1)*lows)
	return (digit | upper | lower) & highs &^ w
}

// eqBytes sets the high bit of each byte of w that equals c and clears
// the others, exactly (no carry crosses a byte).
func eqBytes(w uint64, c byte) uint64 {
	t := w ^ uint64(c)*lows
	return ^((t&^highs + ^uint64(highs)) | t) & highs
}

// Tokenize returns the word tokens of text in order: runs of Unicode
// letters, digits and marks (so apostrophes and hyphens split words), and
// for Han, Hiragana, Katakana and Hangul runs the overlapping character
// bigrams ("東京都" gives "東京", "京都"; a lone CJK character is one
// token). Tokens are substrings of text; no normalization is applied.
func Tokenize(text string) []string {
	toks, _ := scan(text, make([]string, 0, tokenCap(text)), nil, false)
	return toks
}

// tokenCap is the room for text's tokens that scan's callers allocate:
// one a five bytes. Text has a token every 6.6 bytes in the median page
// of a crawl of Debian's documentation (6,607 pages), 5.4 in the densest
// 1 %; at one a six bytes, the room of one page in seven was grown (and
// copied) while the tokens were appended.
func tokenCap(text string) int {
	return len(text)/5 + 1
}
