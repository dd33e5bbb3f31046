//go:build !purego

#include "textflag.h"

// foldSep holds, at each low nibble, the one separator of asciiClass
// from 0x21 to 0x7f with that low nibble (` " ' - : DEL), or 0x80, which
// no byte equals after VPSHUFB (it gives 0 for a byte of 0x80 or more).
DATA foldSep<>+0(SB)/8, $0x2780808080228060
DATA foldSep<>+8(SB)/8, $0x7f802d80803a8080
GLOBL foldSep<>(SB), RODATA|NOPTR, $16

// foldSplat holds the bytes broadcast: the space, and 0x3f and 0x9a for
// upper-case letters: a byte plus 0x3f is below 0x9a as signed bytes
// (from -128 for 'A' to -103 for 'Z') just when it is one.
DATA foldSplat<>+0(SB)/1, $0x20
DATA foldSplat<>+1(SB)/1, $0x3f
DATA foldSplat<>+2(SB)/1, $0x9a
GLOBL foldSplat<>(SB), RODATA|NOPTR, $3

// func foldASCIIAVX2(src *byte, n int, dst *byte, space bool) (read, written int, due bool)
//
// A round loads 32 bytes and makes three masks: DX the kept bytes
// (0x21 to 0x7f but separators), BX the spaces, and from them AX the
// stops, the bytes that are not plain: neither kept nor a single space
// (a space after a space or where one is due). A round without a stop
// stores its 32 folded bytes whole; one with a stop stores them too and
// counts those before it, then skips the ASCII bytes that are not kept
// from the stop on (a space is due after them), and the next round
// loads from the byte after them, unless that is non-ASCII. A due space
// is stored before the bytes and counted when any follow; a space at
// the end of the bytes counted is not counted but due. VEX forms only:
// a legacy SSE instruction between AVX2 ones costs a state transition.
// Registers: SI the round's first byte, R9 the last start of a round, DI
// the next output byte, R8 the due space (0 or 1).
TEXT ·foldASCIIAVX2(SB), NOSPLIT, $0-49
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), R9
	LEAQ -32(SI)(R9*1), R9
	MOVQ dst+16(FP), DI
	MOVBQZX space+24(FP), R8
	VBROADCASTI128 foldSep<>(SB), Y10
	VPBROADCASTB foldSplat<>+0(SB), Y12
	VPBROADCASTB foldSplat<>+1(SB), Y13
	VPBROADCASTB foldSplat<>+2(SB), Y14

loop:
	VMOVDQU (SI), Y0

	// DX: the bytes from 0x21 to 0x7f but separators (non-ASCII bytes
	// are negative); BX: the spaces; AX: the others, and the spaces
	// after a space or a due one.
	VPSHUFB Y0, Y10, Y1
	VPCMPEQB Y1, Y0, Y1
	VPCMPGTB Y12, Y0, Y2
	VPANDN Y2, Y1, Y1
	VPMOVMSKB Y1, DX
	VPCMPEQB Y12, Y0, Y3
	VPMOVMSKB Y3, BX
	MOVL DX, AX
	ORL BX, AX
	NOTL AX
	MOVL BX, CX
	SHLL $1, CX
	ORL R8, CX
	ANDL BX, CX
	ORL CX, AX

	// Y0: the bytes folded, upper-case letters with 0x20 set.
	VPADDB Y13, Y0, Y4
	VPCMPGTB Y4, Y14, Y4
	VPAND Y12, Y4, Y4
	VPOR Y4, Y0, Y0

	TESTL AX, AX
	JNZ stop
	MOVB $0x20, (DI)
	ADDQ R8, DI
	VMOVDQU Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SHRL $31, BX
	MOVL BX, R8
	SUBQ R8, DI
	CMPQ SI, R9
	JLS loop
	JMP done

stop:
	// CX: the plain bytes before the stop, stored when there are any.
	TZCNTL AX, CX
	JZ skip
	MOVB $0x20, (DI)
	ADDQ R8, DI
	VMOVDQU Y0, (DI)
	ADDQ CX, DI
	LEAL -1(CX), AX
	SHRXL AX, BX, AX
	ANDL $1, AX
	MOVL AX, R8
	SUBQ R8, DI

skip:
	// R10: the non-ASCII bytes (folding left their high bits); R11:
	// the first byte from the stop on that is kept or non-ASCII, 32 if
	// none. A stop that is non-ASCII ends the loop there; else the
	// bytes skipped leave a space due.
	VPMOVMSKB Y0, R10
	ORL R10, DX
	MOVL $-1, AX
	SHLXL CX, AX, AX
	ANDL AX, DX
	TZCNTL DX, R11
	CMPL R11, CX
	JEQ nonASCII
	MOVL $1, R8
	ADDQ R11, SI
	BTQ R11, R10
	JCS done
	CMPQ SI, R9
	JLS loop
	JMP done

nonASCII:
	ADDQ CX, SI

done:
	VZEROUPPER
	SUBQ src+0(FP), SI
	MOVQ SI, read+32(FP)
	SUBQ dst+16(FP), DI
	MOVQ DI, written+40(FP)
	MOVB R8, due+48(FP)
	RET
