//go:build !purego

package similarity

import "golang.org/x/sys/cpu"

// stepAVX2 selects the AVX2 form of the Myers round ([extendBlocks]); a
// variable so that the tests can compare it with the Go form.
var stepAVX2 = cpu.X86.HasAVX2

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
