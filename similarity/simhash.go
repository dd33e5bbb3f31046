package similarity

import (
	"math/bits"

	"github.com/winnow-search/winnow/internal/hashmix"
)

// Shingle hashes are built from per-token xxh3 hashes with a rolling
// polynomial over the last w token hashes, S = Σ h[i+j]·B^(w−1−j) mod 2^64,
// updated with two multiplications per word, then finished with [hashmix.Mix64]. No
// shingle is materialized and nothing is allocated per shingle.

// shingleBase is the odd multiplier B of the rolling shingle hash.
const shingleBase = 0x9e3779b97f4a7c15

// pow64 returns b^e mod 2^64.
func pow64(b uint64, e int) uint64 {
	r := uint64(1)
	for ; e > 0; e-- {
		r *= b
	}
	return r
}

// laneBits maps a byte to a uint64 whose byte j is bit j of the byte, so a
// 64-bit feature adds to 64 bit counters with 8 table loads and 8 adds.
var laneBits = func() (t [256]uint64) {
	for v := range t {
		for j := range 8 {
			if v>>j&1 == 1 {
				t[v] |= 1 << (8 * j)
			}
		}
	}
	return t
}()

// simhash returns the 64-bit Charikar simhash of the w-word shingles of the
// token hashes h (Charikar 2002; Manku et al. 2007; the Moz post uses 64
// bits too). Every shingle occurrence votes +1 for the bits set in its hash
// and −1 for the others, which weights each distinct shingle by its term
// frequency; a bit of the result is set when its votes are positive. Texts
// shorter than w words use one shingle of all their words.
//
// The 64 vote counters are bit-sliced: features are added 16 at a time
// with a Harley–Seal tree of carry-save adders into planes of weight 1, 2,
// 4 and 8, and each carry of weight 16 is spread into byte lanes with
// [laneBits]. Cost per word: two multiplications and a mix for the
// shingle hash, about six logic operations for the count.
func simhash(h []uint64, w int) uint64 {
	if len(h) == 0 {
		return 0
	}
	w = min(w, len(h))
	bw := pow64(shingleBase, w)
	var s uint64
	for _, x := range h[:w-1] {
		s = s*shingleBase + x
	}
	next := func(i int) uint64 {
		s = s*shingleBase + h[i]
		if i >= w {
			s -= h[i-w] * bw
		}
		return hashmix.Mix64(s)
	}
	var count [64]uint32
	// Byte lane l of sixteens[j] counts the carries of weight 16 into bit
	// 8·j+l; lanes are flushed into count before they can overflow.
	var sixteens [8]uint64
	lanes := &laneBits
	var ones, twos, fours, eights uint64
	i := w - 1
	blocks := 0
	for ; i+16 <= len(h); i += 16 {
		var f [16]uint64
		for j := range f {
			f[j] = next(i + j)
		}
		var tA, tB, fA, fB, eA, eB, x uint64
		tA, ones = csa(ones, f[0], f[1])
		tB, ones = csa(ones, f[2], f[3])
		fA, twos = csa(twos, tA, tB)
		tA, ones = csa(ones, f[4], f[5])
		tB, ones = csa(ones, f[6], f[7])
		fB, twos = csa(twos, tA, tB)
		eA, fours = csa(fours, fA, fB)
		tA, ones = csa(ones, f[8], f[9])
		tB, ones = csa(ones, f[10], f[11])
		fA, twos = csa(twos, tA, tB)
		tA, ones = csa(ones, f[12], f[13])
		tB, ones = csa(ones, f[14], f[15])
		fB, twos = csa(twos, tA, tB)
		eB, fours = csa(fours, fA, fB)
		x, eights = csa(eights, eA, eB)
		for j := range sixteens {
			sixteens[j] += lanes[x>>(8*j)&0xff]
		}
		if blocks++; blocks == 255 {
			flushLanes(&sixteens, &count, 16)
			blocks = 0
		}
	}
	flushLanes(&sixteens, &count, 16)
	for b := range 64 {
		count[b] += uint32(ones>>b&1) + 2*uint32(twos>>b&1) + 4*uint32(fours>>b&1) + 8*uint32(eights>>b&1)
	}
	for ; i < len(h); i++ {
		f := next(i)
		for b := range 64 {
			count[b] += uint32(f >> b & 1)
		}
	}
	n := uint32(len(h) - w + 1)
	var out uint64
	for b := range 64 {
		if 2*count[b] > n {
			out |= 1 << b
		}
	}
	return out
}

// csa is a carry-save adder: the bitwise sum of a, b and c as a carry
// word (weight 2) and a sum word (weight 1).
func csa(a, b, c uint64) (carry, sum uint64) {
	u := a ^ b
	return a&b | u&c, u ^ c
}

// flushLanes adds weight times the byte lanes of acc to count, bit 8·j+l
// from lane l of acc[j], and clears acc.
func flushLanes(acc *[8]uint64, count *[64]uint32, weight uint32) {
	for j, a := range acc {
		for l := range 8 {
			count[8*j+l] += weight * uint32(a>>(8*l)&0xff)
		}
		acc[j] = 0
	}
}

// Hamming returns the number of bits in which a and b differ: the simhash
// distance (Moz: near-duplicates within 5 of 64).
func Hamming(a, b uint64) int {
	return bits.OnesCount64(a ^ b)
}
