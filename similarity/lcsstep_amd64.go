//go:build !purego

package similarity

import (
	"time"

	"golang.org/x/sys/cpu"
)

// hasAVX2 reports that the CPU runs the AVX2 round.
var hasAVX2 = cpu.X86.HasAVX2

// stepAVX2 selects the AVX2 form of the Myers round ([extendBlocks]) and
// meeting test; a variable so that the tests can compare it with the Go
// form. It is set at init by [avx2Faster]: the AVX2 round, whose gathers
// cost more than the Go loop's loads on some CPUs (a shared Xeon VM:
// 8 KB near-duplicates 2.9× slower than a textbook Myers with it, 0.64×
// without), is used only where it measures faster.
var stepAVX2 = false

func init() {
	stepAVX2 = hasAVX2 && avx2Faster()
}

// avx2Faster times the exact LCS of a synthetic pair of 1,500 tokens at
// an edit distance of about 200 (where the rounds dominate) with the
// AVX2 round and with the Go loop, in turn, three times each, and reports
// whether the AVX2 round's fastest run beats the Go loop's: 1-2 ms at
// init. The minimum of alternated runs is what a busy machine
// disturbs least; either choice computes the same LCS.
func avx2Faster() bool {
	const n = 1500
	a, b := make([]uint32, n), make([]uint32, 0, n+n/10)
	x := uint32(12345)
	next := func() uint32 { x = x*1664525 + 1013904223; return x >> 8 }
	for i := range a {
		a[i] = next() % 400
	}
	for _, t := range a {
		switch next() % 16 {
		case 0: // replaced
			b = append(b, 400+next()%400)
		case 1: // deleted
		default:
			b = append(b, t)
		}
	}
	s := new(lcsScratch)
	best := [2]time.Duration{1 << 62, 1 << 62}
	for range 3 {
		for i, on := range []bool{true, false} {
			stepAVX2 = on
			t0 := time.Now()
			s.bidiInit(n + len(b))
			s.bidiDistance(a, b, n+len(b))
			best[i] = min(best[i], time.Since(t0))
		}
	}
	return best[0] < best[1]
}

// extendBlocksAVX2 does a round of the forward (sgn = 1) or reverse
// (sgn = -1) search on blocks·8 diagonals k, k+2, ..., with v[0] being
// V[k-1]: eight diagonals at a time, their tokens gathered (VPGATHERDD)
// and compared at once, the few snakes followed in scalar code.
//
//go:noescape
func extendBlocksAVX2(a, b []uint32, v []int32, k, blocks, sgn int)

// extendBlocks does a round's diagonals lo, lo+2, ..., lo+16·blocks-2
// (blocks > 0) with AVX2; the V entries written are those of the Go
// round. Small enough to be inlined into the rounds.
func extendBlocks(a, b []uint32, v []int32, off, lo, blocks, sgn int) {
	// The slice's bounds check covers every entry the blocks read.
	extendBlocksAVX2(a, b, v[off+lo-1:off+lo+16*blocks], lo, blocks, sgn)
}

// meetsBlocksAVX2 is the meeting test of [meets] on the first 8·blocks
// pairs, eight at a time.
//
//go:noescape
func meetsBlocksAVX2(vs, ws []int32, blocks, n int) bool

// meetsBlocks tests the first pairs of [meets]' rows in blocks of eight
// with AVX2 when the CPU has it: met is its answer for them, done the
// number of leading entries of vs it covered (0 when none).
func meetsBlocks(vs, ws []int32, n int) (met bool, done int) {
	blocks := (len(vs) + 1) / 16
	if !stepAVX2 || blocks <= 0 || len(ws) != len(vs) || n >= 1<<30 {
		return false, 0
	}
	return meetsBlocksAVX2(vs, ws, blocks, n), 16 * blocks
}
