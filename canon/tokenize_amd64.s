//go:build !purego

#include "textflag.h"

// Byte classes by VPSHUFB, a table for each nibble: a byte's class is
// tokLo's entry at its low nibble AND tokHi's at its high nibble (0 for
// a byte of 0x80 or more, whose high nibble finds 0 in tokHi). Bits:
// 0x01 0-9, 0x02 A-O a-o (high nibble 4, 6; low 1-F), 0x04 P-Z p-z
// (high nibble 5, 7; low 0-A), 0x10 '\n', 0x20 ' ', 0x40 '?',
// 0x80 '.' '!'. Each letter, digit or stop has exactly its bit; other
// bytes have none (checked byte by byte by TestWordEdgesAVX2Classes).
DATA tokLo<>+0(SB)/8, $0x0707070707078725
DATA tokLo<>+8(SB)/8, $0x4282020202160707
DATA tokLo<>+16(SB)/8, $0x0707070707078725
DATA tokLo<>+24(SB)/8, $0x4282020202160707
GLOBL tokLo<>(SB), RODATA|NOPTR, $32

DATA tokHi<>+0(SB)/8, $0x0402040241a00010
DATA tokHi<>+8(SB)/8, $0x0000000000000000
DATA tokHi<>+16(SB)/8, $0x0402040241a00010
DATA tokHi<>+24(SB)/8, $0x0000000000000000
GLOBL tokHi<>(SB), RODATA|NOPTR, $32

// CLASSES reads 32 bytes in IN and leaves 32-bit masks: NONWORD
// (bytes that are no letter or digit), PUNCT ('.' '!' '?'), SPACE
// (' ' '\n'), HARD (stops whatever follows: '\n' and bytes of 0x80 or
// more). A mask is bit 7 of a byte: a class bit shifted there (VPSLLW
// moves a byte's bit 7-k to 7, whatever the byte below it brings into
// bits 0 to k-1) or lifted by a saturating add of 0x40 (only a byte
// with bit 6 or 7 reaches 0x80).
#define CLASSES(IN, NONWORD, PUNCT, SPACE, HARD) \
	VPSRLW $4, IN, Y2 \
	VPAND Y12, Y2, Y2 \
	VPSHUFB Y2, Y11, Y2 \
	VPSHUFB IN, Y10, Y3 \
	VPAND Y3, Y2, Y2 \
	VPAND Y13, Y2, Y3 \
	VPCMPEQB Y15, Y3, Y3 \
	VPMOVMSKB Y3, NONWORD \
	VPADDUSB Y14, Y2, Y3 \
	VPMOVMSKB Y3, PUNCT \
	VPSLLW $2, Y2, Y3 \
	VPADDUSB Y14, Y3, Y3 \
	VPMOVMSKB Y3, SPACE \
	VPSLLW $3, Y2, Y3 \
	VPOR IN, Y3, Y3 \
	VPMOVMSKB Y3, HARD

// EMIT writes the offset of R8's lowest bit (R10 added) at OFF(DI)
// and clears the bit.
#define EMIT(OFF) \
	TZCNTQ R8, CX \
	ADDQ R10, CX \
	MOVL CX, OFF(DI) \
	BLSRQ R8, R8

// func wordEdgesAVX2(p *byte, i, end int, carry uint64, edges *uint32) (stop, ne int)
//
// A 64-byte block a round, as swarWords' eight bytes: the word bytes'
// mask XORed with itself shifted by one marks the edges, taken in order
// by TZCNT and BLSR (and counted by POPCNT). Registers: SI p, R10 the block's offset, R9 end,
// R11 the carry (bit 0: the byte before the block is a word byte), DI
// the next edge. VEX forms only (no legacy SSE between AVX2
// instructions).
TEXT ·wordEdgesAVX2(SB), NOSPLIT, $0-56
	MOVQ p+0(FP), SI
	MOVQ i+8(FP), R10
	MOVQ end+16(FP), R9
	MOVQ carry+24(FP), R11
	MOVQ edges+32(FP), DI
	VMOVDQU tokLo<>(SB), Y10
	VMOVDQU tokHi<>(SB), Y11
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL $0x07070707, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	MOVL $0x40404040, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VPXOR Y15, Y15, Y15

loop:
	VMOVDQU (SI)(R10*1), Y0
	VMOVDQU 32(SI)(R10*1), Y1
	CLASSES(Y0, AX, BX, CX, DX)
	CLASSES(Y1, R8, R12, R13, R14)
	SHLQ $32, R8
	ORQ R8, AX
	NOTQ AX // AX: word bytes
	SHLQ $32, R12
	ORQ R12, BX
	SHLQ $32, R13
	ORQ R13, CX
	SHLQ $32, R14
	ORQ R14, DX

	// R8: edges, bytes unlike the byte before them.
	MOVQ AX, R8
	SHLQ $1, R8
	ORQ R11, R8
	XORQ AX, R8

	// BX: stops. A '.', '!' or '?' stops before ' ' or '\n': CX
	// shifted, and for the block's last byte the byte after it.
	SHRQ $1, CX
	BTQ $63, BX
	JCS lookahead

stops:
	ANDQ CX, BX
	ORQ DX, BX
	JNZ stopped
	SHRQ $63, AX
	MOVQ AX, R11
	XORL R13, R13

	// The edges' offsets, eight at a time without a test between them
	// (the writes past the last edge, where TZCNT of 0 gives 64, land
	// in the scratch's slack), then DI moved past the edges (R12).
flatten:
	TESTQ R8, R8
	JZ flattened
	POPCNTQ R8, BX
	LEAQ (DI)(BX*4), R12
	EMIT(0)
	EMIT(4)
	EMIT(8)
	EMIT(12)
	EMIT(16)
	EMIT(20)
	EMIT(24)
	EMIT(28)
	CMPQ BX, $8
	JBE moved
	EMIT(32)
	EMIT(36)
	EMIT(40)
	EMIT(44)
	EMIT(48)
	EMIT(52)
	EMIT(56)
	EMIT(60)
	CMPQ BX, $16
	JBE moved
	ADDQ $64, DI

more:
	EMIT(0)
	EMIT(4)
	EMIT(8)
	EMIT(12)
	ADDQ $16, DI
	TESTQ R8, R8
	JNZ more

moved:
	MOVQ R12, DI

flattened:
	TESTQ R13, R13
	JNZ done
	ADDQ $64, R10
	CMPQ R10, R9
	JB loop
	MOVQ R9, stop+40(FP)
	JMP done

lookahead:
	MOVBLZX 64(SI)(R10*1), R12
	CMPL R12, $0x20
	JEQ spaced
	CMPL R12, $0x0a
	JNE stops

spaced:
	BTSQ $63, CX
	JMP stops

	// The edges before the first stop, and the stop's own (the end of
	// a word before it) unless its byte is 0x80 or more, which may go
	// on with the word: blockWords decides. R13 set: the last round.
stopped:
	BLSMSKQ BX, CX
	TZCNTQ BX, BX
	ADDQ R10, BX
	MOVQ BX, stop+40(FP)
	MOVBLZX (SI)(BX*1), R12
	CMPL R12, $0x80
	JB closed
	SHRQ $1, CX

closed:
	ANDQ CX, R8
	MOVL $1, R13
	JMP flatten

done:
	VZEROUPPER
	MOVQ edges+32(FP), AX
	SUBQ AX, DI
	SHRQ $2, DI
	MOVQ DI, ne+48(FP)
	RET
