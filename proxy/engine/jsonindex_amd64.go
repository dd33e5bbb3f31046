//go:build !purego

package engine

import "golang.org/x/sys/cpu"

// hasStage1AVX2 reports that the CPU runs stage1AVX2 (AVX2, PCLMULQDQ,
// and BMI1's TZCNT, ANDN and BLSR).
var hasStage1AVX2 = cpu.X86.HasAVX2 && cpu.X86.HasPCLMULQDQ && cpu.X86.HasBMI1

// stage1AVX2 is stage1Go for n > 0 bytes at p, a multiple of 64, and
// room for n tokens at out.
//
//go:noescape
func stage1AVX2(p *byte, n, pos int, st *ixState, out *uint32) int

// stage1 is stage1Go, in assembly where the CPU allows.
func stage1(b []byte, pos int, st *ixState, out []uint32) int {
	if !hasStage1AVX2 || len(b) < 64 {
		return stage1Go(b, pos, st, out)
	}
	_ = out[len(b)-1] // room for a token a byte
	return stage1AVX2(&b[0], len(b)&^63, pos, st, &out[0])
}

// sameKindsAVX2 is sameKindsGo for n >= 8 tokens at got and want.
//
//go:noescape
func sameKindsAVX2(got, want *uint32, n int) bool

// sameKinds is sameKindsGo, in assembly where the CPU allows.
func sameKinds(got, want []uint32) bool {
	if !hasStage1AVX2 || len(got) < 8 {
		return sameKindsGo(got, want)
	}
	_ = want[len(got)-1]
	return sameKindsAVX2(&got[0], &want[0], len(got))
}

// keyDiffAMD64 is keyDiffGo for n keys at keys, every word of which lies
// within the answer at b.
//
//go:noescape
func keyDiffAMD64(got *uint32, b *byte, keys *shapeKey, n int) uint64

// keyDiff is keyDiffGo, in assembly when the hit's last token is 17
// bytes or more before the answer's end, so that no key's words can
// read past it.
func keyDiff(got []uint32, b []byte, keys []shapeKey) uint64 {
	if len(keys) == 0 || int(got[len(got)-1]>>8)+17 > len(b) {
		return keyDiffGo(got, b, keys)
	}
	return keyDiffAMD64(&got[0], &b[0], &keys[0], len(keys))
}
