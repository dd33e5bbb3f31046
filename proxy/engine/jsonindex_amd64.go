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

// shapeMatchAVX2 is shapeMatchGo for n >= 8 tokens at got, kinds and
// kmask and nkeys >= 1 keys, none of whose words reads past the answer
// at b (ireplay's test).
//
//go:noescape
func shapeMatchAVX2(got, kinds, kmask *uint32, n int, b *byte, keys *shapeKey, nkeys int) bool
