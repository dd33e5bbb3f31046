//go:build !purego

#include "textflag.h"

// Byte classes by VPSHUFB, as simdjson's Haswell kernel finds them: a
// byte is white space when it equals wsTab's entry at its low nibble
// (VPSHUFB gives 0 for a byte of 0x80 or more, which no such byte
// equals); structural when the byte with 0x20 set (which turns [ ] into
// { }) equals opTab's entry at its low nibble. The other entries are
// 0x80, which no byte under 0x80 equals.
DATA ixWS<>+0(SB)/8, $0x8080808080808020
DATA ixWS<>+8(SB)/8, $0x80800d80800a0980
DATA ixWS<>+16(SB)/8, $0x8080808080808020
DATA ixWS<>+24(SB)/8, $0x80800d80800a0980
GLOBL ixWS<>(SB), RODATA|NOPTR, $32

DATA ixOp<>+0(SB)/8, $0x8080808080808080
DATA ixOp<>+8(SB)/8, $0x80807d2c7b3a8080
DATA ixOp<>+16(SB)/8, $0x8080808080808080
DATA ixOp<>+24(SB)/8, $0x80807d2c7b3a8080
GLOBL ixOp<>(SB), RODATA|NOPTR, $32

DATA ixQuote<>+0(SB)/8, $0x2222222222222222
DATA ixQuote<>+8(SB)/8, $0x2222222222222222
DATA ixQuote<>+16(SB)/8, $0x2222222222222222
DATA ixQuote<>+24(SB)/8, $0x2222222222222222
GLOBL ixQuote<>(SB), RODATA|NOPTR, $32

DATA ixBS<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA ixBS<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA ixBS<>+16(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA ixBS<>+24(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL ixBS<>(SB), RODATA|NOPTR, $32

DATA ixOnes<>+0(SB)/8, $-1
DATA ixOnes<>+8(SB)/8, $-1
GLOBL ixOnes<>(SB), RODATA|NOPTR, $16

DATA ix20<>+0(SB)/8, $0x2020202020202020
DATA ix20<>+8(SB)/8, $0x2020202020202020
DATA ix20<>+16(SB)/8, $0x2020202020202020
DATA ix20<>+24(SB)/8, $0x2020202020202020
GLOBL ix20<>(SB), RODATA|NOPTR, $32

// func stage1AVX2(p *byte, n, pos int, st *ixState, out *uint32) int
//
// The loop is ixState.block over classes, a 64-byte block a round; the
// tokens are written as offset<<8 | byte. Registers: R10 the block's
// offset in the answer, SI the answer's start (p less pos: the block is
// at (SI)(R10*1)), R9 the end's offset, DI the next token, R11-R13 the
// state (esc, str, and for scalar, in R13's top bit, its inverse); the
// state's bs is set where met.
TEXT ·stage1AVX2(SB), NOSPLIT, $0-48
	MOVQ pos+16(FP), R10
	MOVQ p+0(FP), SI
	SUBQ R10, SI // SI: the answer's start, as if p were all of it
	MOVQ n+8(FP), R9
	ADDQ R10, R9
	MOVQ st+24(FP), AX
	MOVQ 0(AX), R11
	MOVQ 8(AX), R12
	MOVQ 16(AX), R13
	XORQ $1, R13
	SHLQ $63, R13 // R13's top bit: the last byte was no number or literal
	MOVQ out+32(FP), DI
	VMOVDQU ixQuote<>(SB), Y10
	VMOVDQU ixBS<>(SB), Y11
	VMOVDQU ixWS<>(SB), Y12
	VMOVDQU ix20<>(SB), Y13
	VMOVDQU ixOp<>(SB), Y14
	VMOVQ R11, X9 // Y9: not zero while an escape is carried in

loop:
	VMOVDQU (SI)(R10*1), Y0
	VMOVDQU 32(SI)(R10*1), Y1

	// AX: quotes.
	VPCMPEQB Y0, Y10, Y2
	VPMOVMSKB Y2, AX
	VPCMPEQB Y1, Y10, Y3
	VPMOVMSKB Y3, BX
	SHLQ $32, BX
	ORQ BX, AX

	// Y4, Y5: white space; Y6, Y7: structural bytes.
	VPSHUFB Y0, Y12, Y4
	VPCMPEQB Y4, Y0, Y4
	VPSHUFB Y1, Y12, Y5
	VPCMPEQB Y5, Y1, Y5
	VPOR Y0, Y13, Y6
	VPSHUFB Y6, Y14, Y2
	VPCMPEQB Y2, Y6, Y6
	VPOR Y1, Y13, Y7
	VPSHUFB Y7, Y14, Y3
	VPCMPEQB Y3, Y7, Y7

	// Escaped bytes, only when there are backslashes or an escape
	// carried in (Y9): their mask in CX; AX loses its escaped quotes.
	VPCMPEQB Y0, Y11, Y2
	VPCMPEQB Y1, Y11, Y3
	VPOR Y2, Y3, Y15
	VPOR Y9, Y15, Y15
	VPTEST Y15, Y15
	JZ strings

	VPMOVMSKB Y2, CX
	VPMOVMSKB Y3, BX
	SHLQ $32, BX
	ORQ BX, CX
	MOVQ st+24(FP), R15
	MOVQ $1, 24(R15) // a backslash was met
	ANDNQ CX, R11, BX // BX = backslashes not escaped from the last block
	MOVQ BX, DX
	SHLQ $1, DX
	ANDNQ BX, DX, DX // DX = starts of runs
	MOVQ $0x5555555555555555, R8
	MOVQ DX, R14
	ANDQ R8, R14 // R14 = even starts
	XORQ R14, DX // DX = odd starts
	ADDQ BX, R14
	XORL R15, R15
	ADDQ BX, DX
	ADCQ $0, R15 // the escape carried out
	ANDNQ R14, BX, R14
	ANDNQ DX, BX, DX
	ANDQ R8, DX
	NOTQ R8
	ANDQ R8, R14
	ORQ DX, R14
	ORQ R11, R14 // R14 = escaped bytes
	MOVQ R15, R11
	VMOVQ R11, X9
	ANDNQ AX, R14, AX

strings:
	// BX: inside strings (opening quote in, closing one out), by a
	// carry-less multiply with all ones. VEX forms only: a legacy SSE
	// instruction between AVX2 ones costs a state transition (about
	// 500 cycles a block on this VM's Xeon).
	VMOVQ AX, X8
	VPCLMULQDQ $0x00, ixOnes<>(SB), X8, X8
	VMOVQ X8, BX
	XORQ R12, BX
	MOVQ BX, R12
	SARQ $63, R12

	// DX: white space, R8: structural bytes.
	VPMOVMSKB Y4, DX
	VPMOVMSKB Y5, R8
	SHLQ $32, R8
	ORQ R8, DX
	VPMOVMSKB Y6, R8
	VPMOVMSKB Y7, R14
	SHLQ $32, R14
	ORQ R14, R8

	// DX: the bytes of no number or literal; R14: the starts of the
	// others' runs, a byte of a number or literal after one of none
	// (SHLQ with three operands is SHLD: the last block's top bit in).
	ORQ R8, DX
	ORQ AX, DX
	ORQ BX, DX
	MOVQ DX, R14
	SHLQ $1, R13, R14
	ANDNQ R14, DX, R14
	MOVQ DX, R13

	// R8: the tokens.
	ANDNQ R8, BX, R8
	ANDQ BX, AX
	ORQ AX, R8
	ORQ R14, R8
	JZ next

	// Two tokens a round, one test of the mask between them.
flatten:
	TZCNTQ R8, BX
	ADDQ R10, BX
	MOVBLZX (SI)(BX*1), DX
	SHLQ $8, BX
	ORQ DX, BX
	MOVL BX, (DI)
	BLSRQ R8, R8
	JZ last
	TZCNTQ R8, BX
	ADDQ R10, BX
	MOVBLZX (SI)(BX*1), DX
	SHLQ $8, BX
	ORQ DX, BX
	MOVL BX, 4(DI)
	ADDQ $8, DI
	BLSRQ R8, R8
	JNZ flatten
	JMP next

last:
	ADDQ $4, DI

next:
	ADDQ $64, R10
	CMPQ R10, R9
	JB loop

	VZEROUPPER
	MOVQ st+24(FP), AX
	MOVQ R11, 0(AX)
	MOVQ R12, 8(AX)
	SHRQ $63, R13
	XORQ $1, R13
	MOVQ R13, 16(AX)
	MOVQ out+32(FP), AX
	SUBQ AX, DI
	SHRQ $2, DI
	MOVQ DI, ret+40(FP)
	RET

DATA ixKind<>+0(SB)/8, $0x000000ff000000ff
DATA ixKind<>+8(SB)/8, $0x000000ff000000ff
DATA ixKind<>+16(SB)/8, $0x000000ff000000ff
DATA ixKind<>+24(SB)/8, $0x000000ff000000ff
GLOBL ixKind<>(SB), RODATA|NOPTR, $32

// func shapeMatchAVX2(got, kinds, kmask *uint32, n int, b *byte, keys *shapeKey, nkeys int) bool
//
// shapeMatchGo for n >= 8 tokens and nkeys >= 1 keys, none of whose
// words reads past the answer. The kinds: 8 tokens at once, masked,
// XORed with the kinds and ORed, the last 8 read again from the end (an
// overlap changes nothing), then each token's low byte tested. The
// keys: a shapeKey is w, m, tok, off (32 bytes); the differences ORed.
TEXT ·shapeMatchAVX2(SB), NOSPLIT, $0-57
	MOVQ got+0(FP), SI
	MOVQ kinds+8(FP), DI
	MOVQ kmask+16(FP), R11
	MOVQ n+24(FP), CX
	LEAQ -32(CX*4), R8 // the last 8 tokens' offset
	XORL DX, DX
	VPXOR Y0, Y0, Y0

kinds:
	VMOVDQU (SI)(DX*1), Y1
	VPAND (R11)(DX*1), Y1, Y1
	VPXOR (DI)(DX*1), Y1, Y1
	VPOR Y1, Y0, Y0
	ADDQ $32, DX
	CMPQ DX, R8
	JB kinds

	VMOVDQU (SI)(R8*1), Y1
	VPAND (R11)(R8*1), Y1, Y1
	VPXOR (DI)(R8*1), Y1, Y1
	VPOR Y1, Y0, Y0
	VPTEST ixKind<>(SB), Y0
	VZEROUPPER
	JNZ differ

	MOVQ SI, R10
	MOVQ b+32(FP), DI
	MOVQ keys+40(FP), R8
	MOVQ nkeys+48(FP), CX
	XORL AX, AX

key:
	MOVQ 16(R8), DX
	MOVL (R10)(DX*4), DX
	SHRL $8, DX
	ADDQ 24(R8), DX
	MOVQ (DI)(DX*1), BX
	XORQ 0(R8), BX
	ANDQ 8(R8), BX
	ORQ BX, AX
	ADDQ $32, R8
	DECQ CX
	JNZ key

	TESTQ AX, AX
	SETEQ ret+56(FP)
	RET

differ:
	MOVB $0, ret+56(FP)
	RET
