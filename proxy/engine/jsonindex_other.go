//go:build !amd64 || purego

package engine

// hasStage1AVX2 is false: stage1 is stage1Go.
const hasStage1AVX2 = false

func stage1(b []byte, pos int, st *ixState, out []uint32) int {
	return stage1Go(b, pos, st, out)
}

// shapeMatchAVX2 is never called: hasStage1AVX2 is false.
func shapeMatchAVX2(got, kinds, kmask *uint32, n int, b *byte, keys *shapeKey, nkeys int) bool {
	panic("engine: shapeMatchAVX2 without AVX2")
}
