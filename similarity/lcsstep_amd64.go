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

// extendBlocks does the round's diagonals lo, lo+2, ... in blocks of
// eight with AVX2 when the CPU has it and returns the first diagonal left
// to do; the V entries written are those of the Go round.
func extendBlocks(a, b []uint32, v []int32, off, lo, hi, sgn int) int {
	blocks := (hi - lo + 2) / 16
	if !stepAVX2 || blocks <= 0 {
		return lo
	}
	// The slice's bounds check covers every entry the blocks read.
	extendBlocksAVX2(a, b, v[off+lo-1:off+lo+16*blocks], lo, blocks, sgn)
	return lo + 16*blocks
}
