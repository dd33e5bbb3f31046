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
