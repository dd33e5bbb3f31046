//go:build !purego

package canon

import (
	"math"
	"slices"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasTokenizeAVX2 reports that the CPU runs wordEdgesAVX2 (AVX2,
// POPCNT, and BMI1's TZCNT, BLSI and BLSR).
var hasTokenizeAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT && cpu.X86.HasBMI1

// edgeScratch holds the word edges of one call of wordEdgesAVX2 (one a
// byte at most, 960 for the bytes blockWords gives it) after the start
// of a word open before it, and the up to 7 writes past the last edge:
// offsets into the text, without pointers, so that the assembly stores
// no Go pointer (and needs no write barrier). scan declares it once a
// text.
type edgeScratch [512][2]uint32

// wordEdgesAVX2 reads text[i:end] (p is the text, end-i a multiple of
// 64) and the byte at end (the byte after a '.', '!' or '?' tells
// whether it ends a sentence). It writes to edges the offsets where a
// word of ASCII letters and digits starts or ends, in order, carry (0
// or 1) telling whether a word is open at i, up to the first byte scan
// must see: a byte of 0x80 or more, '\n', or '.', '!', '?' before ' ' or
// '\n'. A word just before that byte ends there, unless the byte is
// 0x80 or more (a letter may go on with it). It returns that byte's
// offset (end without one) and the number of edges written.
//
//go:noescape
func wordEdgesAVX2(p *byte, i, end int, carry uint64, edges *uint32) (stop, ne int)

// blockWords is asciiWords on whole 64-byte blocks of text[i:], while
// more than 64 bytes are left (the last one is the lookahead), after a
// word open at start (-1: none). With done it returns asciiWords'
// answer; otherwise where to go on, and the start of a word open there,
// or -1.
func blockWords(text string, i int, toks []string, start int, edges *edgeScratch) (int, []string, int, bool) {
	if len(text) > math.MaxUint32 {
		return i, toks, start, false // offsets are uint32
	}
	for len(text)-i > 64 {
		end := i + min(len(text)-i-1, 2*len(edges)-1)&^63
		// The edges after the open word's start, so that they pair.
		flat := unsafe.Slice(&edges[0][0], 2*len(edges))
		k, carry := 0, uint64(0)
		if start >= 0 {
			flat[0] = uint32(start)
			k, carry = 1, 1
		}
		stop, ne := wordEdgesAVX2(unsafe.StringData(text), i, end, carry, &flat[k])
		ne += k
		pairs := edges[:ne/2]
		n := len(toks)
		toks = slices.Grow(toks, len(pairs))[:n+len(pairs)]
		substrings(toks[n:], text, pairs)
		start = -1
		if ne%2 == 1 {
			start = int(flat[ne-1])
		}
		if stop < end {
			if start >= 0 {
				return start, toks, -1, true // a byte of 0x80 or more may go on with the word
			}
			return stop, toks, -1, true
		}
		i = end
	}
	return i, toks, start, false
}

// substrings sets words[j] to text[pairs[j][0]:pairs[j][1]]. It is a
// function of its own so that its loop keeps everything in registers:
// inlined in blockWords, the compiler spilled the index and the pair.
//
//go:noinline
func substrings(words []string, text string, pairs [][2]uint32) {
	pairs = pairs[:len(words)]
	for j := range pairs {
		words[j] = text[pairs[j][0]:pairs[j][1]]
	}
}
