//go:build !purego

package canon

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// wordEdgesRef is wordEdgesAVX2 one byte at a time.
func wordEdgesRef(b string, i, end int, carry uint64) (int, []uint32) {
	var edges []uint32
	prev := carry == 1
	for k := i; k < end; k++ {
		c := b[k]
		if c >= 0x80 || c == '\n' || (c == '.' || c == '!' || c == '?') && (b[k+1] == ' ' || b[k+1] == '\n') {
			if prev && c < 0x80 {
				edges = append(edges, uint32(k))
			}
			return k, edges
		}
		if wordByte[c] != prev {
			edges = append(edges, uint32(k))
			prev = !prev
		}
	}
	return end, edges
}

// checkWordEdges compares wordEdgesAVX2 with wordEdgesRef on b[i:end]
// (end-i a multiple of 64, end below len(b)).
func checkWordEdges(t *testing.T, b string, i, end int, carry uint64) {
	t.Helper()
	var buf [2 * len(edgeScratch{})]uint32
	guard := buf[:end-i+16] // an edge a byte, and the slack
	for k := range guard {
		guard[k] = 1 << 31
	}
	stop, ne := wordEdgesAVX2(unsafe.StringData(b), i, end, carry, &buf[0])
	wstop, wedges := wordEdgesRef(b, i, end, carry)
	if stop != wstop || !slices.Equal(buf[:ne], wedges) {
		t.Fatalf("wordEdgesAVX2(%q, %d, %d, %d) = %d, %v; want %d, %v", b, i, end, carry, stop, buf[:ne], wstop, wedges)
	}
	for k := ne + 7; k < len(guard); k++ {
		if guard[k] != 1<<31 {
			t.Fatalf("wordEdgesAVX2(%q, %d, %d, %d) wrote edges[%d] after %d edges: more than the 7 of slack", b, i, end, carry, k, ne)
		}
	}
}

// TestWordEdgesAVX2Classes: every byte at every position of a block
// (and as the byte after it), at two alignments, among bytes of each
// class.
func TestWordEdgesAVX2Classes(t *testing.T) {
	if !hasTokenizeAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	b := make([]byte, 67)
	for c := range 256 {
		for _, fill := range []byte{'a', ' ', '.', '\n', '@', 0x80} {
			for pos := range b {
				for k := range b {
					b[k] = fill
				}
				b[pos] = byte(c)
				s := string(b)
				for _, carry := range []uint64{0, 1} {
					checkWordEdges(t, s, 0, 64, carry)
					checkWordEdges(t, s, 1, 65, carry)
				}
			}
		}
	}
}

// tokAlphabet: letters and digits at the ends of their ranges, the
// bytes beside them, stops, spaces, and UTF-8 (Latin and CJK).
const tokAlphabet = "aazzAZ0099 .  .!?\n/:@[`{\x7f\x00-_'\u00e9\u6771\u4eac\u0301"

func randomText(r *rand.Rand, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		k := r.IntN(len(tokAlphabet))
		if tokAlphabet[k] >= 0x80 {
			for k > 0 && tokAlphabet[k]&0xc0 == 0x80 {
				k-- // a whole character
			}
			_, size := utf8.DecodeRuneInString(tokAlphabet[k:])
			sb.WriteString(tokAlphabet[k : k+size])
			continue
		}
		sb.WriteByte(tokAlphabet[k])
	}
	return sb.String()
}

// TestWordEdgesAVX2Random: random texts of the alphabet, words and runs
// of word bytes as long as blocks among them.
func TestWordEdgesAVX2Random(t *testing.T) {
	if !hasTokenizeAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		n := 64 * (1 + r.IntN(4))
		s := randomText(r, n+3+r.IntN(3))
		if r.IntN(4) == 0 {
			at := r.IntN(len(s))
			s = s[:at] + strings.Repeat("w", r.IntN(140)) + s[at:]
		}
		i := r.IntN(3)
		checkWordEdges(t, s, i, i+n, uint64(r.IntN(2)))
	}
}

// scanBoth compares scan with AVX2 and without it (swarWords alone) and
// with scanRunes, on text.
func scanBoth(t *testing.T, text string) {
	t.Helper()
	for _, sentences := range []bool{false, true} {
		toks, sents := scan(text, nil, nil, sentences)
		hasTokenizeAVX2 = false
		gtoks, gsents := scan(text, nil, nil, sentences)
		hasTokenizeAVX2 = true
		if !slices.Equal(toks, gtoks) || !slices.Equal(sents, gsents) {
			t.Fatalf("scan(%q, %v): AVX2 %q, %q; Go %q, %q", text, sentences, toks, sents, gtoks, gsents)
		}
		wtoks, wsents := scanRunes(text, nil, nil, sentences)
		if !slices.Equal(toks, wtoks) || !slices.Equal(sents, wsents) {
			t.Fatalf("scan(%q, %v) = %q, %q; want %q, %q", text, sentences, toks, sents, wtoks, wsents)
		}
	}
}

// TestScanAVX2: scan with AVX2 gives the Go path's tokens and sentences
// on the canonical texts of the saved pages from every offset of a
// block, on their ends, and on random texts of every length around the
// blocks and the scratch.
func TestScanAVX2(t *testing.T) {
	if !hasTokenizeAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	for _, p := range pages(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := HTML(b, "", Options{})
		if err != nil {
			t.Fatal(err)
		}
		for off := range min(64, len(d.Text)) {
			scanBoth(t, d.Text[off:])
			scanBoth(t, d.Text[:len(d.Text)-off])
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 1200 {
		for range 10 {
			scanBoth(t, randomText(r, n))
		}
	}
	// Words across blocks and across the scratch's chunks.
	for _, w := range []int{63, 64, 65, 511, 512, 513, 1500} {
		for _, at := range []int{0, 1, 62, 63, 64, 500, 511, 512} {
			word := strings.Repeat("x", w)
			scanBoth(t, strings.Repeat("a ", at/2)+word+". b\n")
			scanBoth(t, strings.Repeat("a ", at/2)+word+"\u00e9 "+word)
			scanBoth(t, strings.Repeat(" ", at)+word)
		}
	}
}
