//go:build !amd64 || purego

package similarity

// hasAVX2 and stepAVX2 are false: there is no assembly round on this
// build.
var hasAVX2, stepAVX2 = false, false

// extendBlocks is never called: stepAVX2 is false.
func extendBlocks(a, b []uint32, v []int32, off, lo, blocks, sgn int) {
	panic("similarity: no AVX2 round on this build")
}

// meetsBlocks does nothing and leaves the test to the Go loop.
func meetsBlocks(vs, ws []int32, n int) (met bool, done int) {
	return false, 0
}
