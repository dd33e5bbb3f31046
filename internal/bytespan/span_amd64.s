//go:build !purego

#include "textflag.h"

// spanSplat holds the bytes broadcast: the quote, the backslash and 0x20
// (a byte is below 0x20 as a signed byte when it is a control or 0x80
// or more).
DATA spanSplat<>+0(SB)/1, $0x22
DATA spanSplat<>+1(SB)/1, $0x5c
DATA spanSplat<>+2(SB)/1, $0x20
GLOBL spanSplat<>(SB), RODATA|NOPTR, $3

// Both kernels: a round loads 32 bytes at SI and marks the bytes that end
// the span in AX (VPMOVMSKB); the first mark ends it (TZCNT). R9 is the
// last start of a round, DI the first byte. VEX forms only: a legacy SSE
// instruction between AVX2 ones costs a state transition.

// func asciiAVX2(p *byte, n int) int
TEXT ·asciiAVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), R9
	LEAQ -32(SI)(R9*1), R9
	MOVQ SI, DI

asciiLoop:
	VMOVDQU (SI), Y0
	VPMOVMSKB Y0, AX
	TESTL AX, AX
	JNZ asciiStop
	ADDQ $32, SI
	CMPQ SI, R9
	JLS asciiLoop
	JMP asciiDone

asciiStop:
	TZCNTL AX, AX
	ADDQ AX, SI

asciiDone:
	VZEROUPPER
	SUBQ DI, SI
	MOVQ SI, ret+16(FP)
	RET

// func jsonPlainAVX2(p *byte, n int) int
//
// The marks: the quotes, the backslashes, and the bytes below 0x20 as
// signed bytes (controls, and 0x80 or more) in one compare.
TEXT ·jsonPlainAVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), R9
	LEAQ -32(SI)(R9*1), R9
	MOVQ SI, DI
	VPBROADCASTB spanSplat<>+0(SB), Y1
	VPBROADCASTB spanSplat<>+1(SB), Y2
	VPBROADCASTB spanSplat<>+2(SB), Y3

plainLoop:
	VMOVDQU (SI), Y0
	VPCMPEQB Y0, Y1, Y4
	VPCMPEQB Y0, Y2, Y5
	VPCMPGTB Y0, Y3, Y6
	VPOR Y4, Y5, Y4
	VPOR Y4, Y6, Y4
	VPMOVMSKB Y4, AX
	TESTL AX, AX
	JNZ plainStop
	ADDQ $32, SI
	CMPQ SI, R9
	JLS plainLoop
	JMP plainDone

plainStop:
	TZCNTL AX, AX
	ADDQ AX, SI

plainDone:
	VZEROUPPER
	SUBQ DI, SI
	MOVQ SI, ret+16(FP)
	RET
