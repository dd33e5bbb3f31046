//go:build !purego

#include "textflag.h"

// Lane j of the vectors below holds the diagonal k+laneK[j] of a block of
// eight diagonals k, k+2, ..., k+14: the order VSHUFPS leaves the even
// entries of two loads in, so that VPUNPCKLDQ/VPUNPCKHDQ put each lane
// back next to its neighbours without crossing 128-bit halves.
DATA laneK<>+0(SB)/4, $0
DATA laneK<>+4(SB)/4, $2
DATA laneK<>+8(SB)/4, $8
DATA laneK<>+12(SB)/4, $10
DATA laneK<>+16(SB)/4, $4
DATA laneK<>+20(SB)/4, $6
DATA laneK<>+24(SB)/4, $12
DATA laneK<>+28(SB)/4, $14
GLOBL laneK<>(SB), RODATA|NOPTR, $32

// func extendBlocksAVX2(a, b []uint32, v []int32, k, blocks, sgn int)
//
// v[0] is V[k-1]; block i covers the diagonals k+16i .. k+16i+14 (step 2),
// whose entries are v[16i+1], v[16i+3], ..., v[16i+15]; it reads
// v[16i .. 16i+16]. sgn is 1 for the forward search (token x of a is
// a[x]) and -1 for the reverse one (token x of a is a[n-1-x]).
TEXT ·extendBlocksAVX2(SB), NOSPLIT, $0-96
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), R8
	MOVQ b_base+24(FP), DI
	MOVQ b_len+32(FP), R9
	MOVQ v_base+48(FP), DX
	MOVQ k+72(FP), R10
	MOVQ blocks+80(FP), CX
	MOVQ sgn+88(FP), R11

	// The reverse search indexes a and b backwards from their last
	// tokens: SI = &a[n-1], DI = &b[m-1], index -x.
	CMPQ R11, $0
	JGT  consts
	LEAQ -4(SI)(R8*4), SI
	LEAQ -4(DI)(R9*4), DI

consts:
	MOVQ         R8, X14
	VPBROADCASTD X14, Y14 // n
	MOVQ         R9, X13
	VPBROADCASTD X13, Y13 // m
	VPCMPEQD     Y12, Y12, Y12 // -1
	MOVL         $1, AX
	MOVQ         AX, X15
	VPBROADCASTD X15, Y15 // 1
	MOVL         $16, AX
	MOVQ         AX, X10
	VPBROADCASTD X10, Y10 // 16
	MOVQ         R11, X9
	VPBROADCASTD X9, Y9   // sgn
	MOVQ         R10, X11
	VPBROADCASTD X11, Y11
	VPADDD       laneK<>(SB), Y11, Y11 // each lane's diagonal

block:
	VMOVDQU (DX), Y0   // v[0..7]
	VMOVDQU 32(DX), Y1 // v[8..15]
	VMOVDQU 8(DX), Y2  // v[2..9]
	VMOVDQU 36(DX), Y3 // v[9..16]
	VSHUFPS $0x88, Y1, Y0, Y4 // V[k-1] of each lane
	VSHUFPS $0xD8, Y3, Y2, Y5 // V[k+1] of each lane
	VPADDD  Y15, Y4, Y6
	VPMAXSD Y5, Y6, Y6        // x = max(V[k-1]+1, V[k+1])
	VPSUBD  Y11, Y6, Y7       // y = x - k

	// live: x < n, y < m, y >= 0 (x >= 0 as V >= -1)
	VPCMPGTD Y6, Y14, Y8
	VPCMPGTD Y7, Y13, Y0
	VPAND    Y0, Y8, Y8
	VPCMPGTD Y12, Y7, Y0
	VPAND    Y0, Y8, Y8

	// a's and b's tokens x and y of the live lanes
	VPSIGND    Y9, Y6, Y1
	VPSIGND    Y9, Y7, Y2
	VMOVDQA    Y8, Y3
	VPXOR      Y0, Y0, Y0
	VPGATHERDD Y3, (SI)(Y1*4), Y0
	VMOVDQA    Y8, Y3
	VPXOR      Y5, Y5, Y5
	VPGATHERDD Y3, (DI)(Y2*4), Y5
	VPCMPEQD   Y0, Y5, Y0
	VPAND      Y8, Y0, Y0
	VMOVMSKPS  Y0, AX

	// x back between its neighbours: v[0..15] = V[k-1], x_k, V[k+1], ...
	VPUNPCKLDQ Y6, Y4, Y1
	VPUNPCKHDQ Y6, Y4, Y2
	VMOVDQU    Y1, (DX)
	VMOVDQU    Y2, 32(DX)
	TESTL      AX, AX
	JNZ        snakes

next:
	VPADDD Y10, Y11, Y11
	ADDQ   $16, R10
	ADDQ   $64, DX
	DECQ   CX
	JNZ    block
	VZEROUPPER
	RET

	// The lanes in AX start on equal tokens: follow each snake in
	// scalar code, from x+1, y+1.
snakes:
	BSFL    AX, BX
	LEAQ    laneK<>(SB), R14
	MOVL    (R14)(BX*4), BX
	LEAQ    4(DX)(BX*4), R8 // &v entry of the lane
	ADDQ    R10, BX         // its diagonal
	MOVLQSX (R8), R12
	INCQ    R12             // x
	MOVQ    R12, R13
	SUBQ    BX, R13         // y
	MOVQ    R12, BX
	MOVQ    a_len+8(FP), R14
	SUBQ    R12, R14
	MOVQ    b_len+32(FP), R9
	SUBQ    R13, R9
	CMPQ    R9, R14
	CMOVQLT R9, R14         // tokens left on the diagonal
	IMULQ   R11, R12        // index of token x in a
	IMULQ   R11, R13        // index of token y in b

	// Eight tokens at a time while eight are left: a snake on
	// near-duplicates runs to the next edit, often hundreds of tokens.
snake:
	CMPQ  R14, $8
	JLT   snakeTail
	TESTQ R11, R11
	JS    snakeBack
	VMOVDQU   (SI)(R12*4), Y0
	VPCMPEQD  (DI)(R13*4), Y0, Y0
	VMOVMSKPS Y0, R9
	XORL      $0xff, R9
	JNZ       snakeForwardStop
	ADDQ      $8, R12
	ADDQ      $8, R13
	ADDQ      $8, BX
	SUBQ      $8, R14
	JMP       snake

snakeForwardStop:
	BSFL R9, R9 // equal tokens before the first unequal pair
	ADDQ R9, BX
	JMP  snakeEnd

snakeBack: // tokens x..x+7 are a[n-1-x-7..n-1-x], the first in the top lane
	VMOVDQU   -28(SI)(R12*4), Y0
	VPCMPEQD  -28(DI)(R13*4), Y0, Y0
	VMOVMSKPS Y0, R9
	XORL      $0xff, R9
	JNZ       snakeBackStop
	SUBQ      $8, R12
	SUBQ      $8, R13
	ADDQ      $8, BX
	SUBQ      $8, R14
	JMP       snake

snakeBackStop:
	BSRL R9, R9 // top unequal lane: 7 minus it equal pairs before it
	SUBQ R9, BX
	ADDQ $7, BX
	JMP  snakeEnd

snakeTail:
	TESTQ R14, R14
	JLE   snakeEnd
	MOVL  (SI)(R12*4), R9
	CMPL  R9, (DI)(R13*4)
	JNE   snakeEnd
	ADDQ  R11, R12
	ADDQ  R11, R13
	INCQ  BX
	DECQ  R14
	JMP   snakeTail

snakeEnd:
	MOVL BX, (R8)
	LEAL -1(AX), R9
	ANDL R9, AX
	JNZ  snakes
	JMP  next

// func meetsBlocksAVX2(vs, ws []int32, blocks, n int) bool
//
// Reports whether vs[i] + ws[L-1-i] >= n (L = len(ws)) for an even i
// below 16·blocks; block t pairs vs[16t], vs[16t+2], ..., vs[16t+14] with
// ws[L-1-16t], ws[L-3-16t], ..., ws[L-15-16t]. n is below 2^30, so that
// no sum overflows.
TEXT ·meetsBlocksAVX2(SB), NOSPLIT, $0-65
	MOVQ         vs_base+0(FP), SI
	MOVQ         ws_base+24(FP), DI
	MOVQ         ws_len+32(FP), AX
	LEAQ         -64(DI)(AX*4), DI // &ws[L-16]: the block's entries are 1..16 of it
	MOVQ         blocks+48(FP), CX
	MOVQ         n+56(FP), AX
	DECQ         AX
	MOVQ         AX, X15
	VPBROADCASTD X15, Y15 // n-1

meetsBlock:
	VMOVDQU   (SI), Y0   // vs[0..7]
	VMOVDQU   28(SI), Y1 // vs[7..14]
	VSHUFPS   $0xD8, Y1, Y0, Y2
	VMOVDQU   4(DI), Y3  // ws[L-15..L-8]
	VMOVDQU   32(DI), Y4 // ws[L-8..L-1]
	VSHUFPS   $0xD8, Y4, Y3, Y5
	VPERMQ    $0x1B, Y5, Y5 // lanes reversed (quadwords, then the
	VPSHUFD   $0xB1, Y5, Y5 // dwords in each): each holds its pair's ws entry
	VPADDD    Y5, Y2, Y2
	VPCMPGTD  Y15, Y2, Y2
	VMOVMSKPS Y2, AX
	TESTL     AX, AX
	JNZ       met
	ADDQ      $64, SI
	SUBQ      $64, DI
	DECQ      CX
	JNZ       meetsBlock
	VZEROUPPER
	MOVB      $0, ret+64(FP)
	RET

met:
	VZEROUPPER
	MOVB $1, ret+64(FP)
	RET
