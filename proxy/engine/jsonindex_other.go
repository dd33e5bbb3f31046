//go:build !amd64 || purego

package engine

// hasStage1AVX2 is false: stage1 is stage1Go.
const hasStage1AVX2 = false

func stage1(b []byte, pos int, st *ixState, out []uint32) int {
	return stage1Go(b, pos, st, out)
}

func sameKinds(got, want []uint32) bool {
	return sameKindsGo(got, want)
}

func keyDiff(got []uint32, b []byte, keys []shapeKey) uint64 {
	return keyDiffGo(got, b, keys)
}
