//go:build !race

#include "textflag.h"
#include "go_asm.h"

// func writeRow(r *row, incl, own, w int64)
//
// The mirror of writeRowGo with plain stores: seq odd, the totals, min and
// max, the sum of squares, seq even.
TEXT ·writeRow(SB), NOSPLIT, $0-32
	MOVQ r+0(FP), DI
	MOVQ incl+8(FP), AX
	MOVQ w+24(FP), BX
	INCQ row_seq(DI)
	INCQ row_count(DI)
	ADDQ AX, row_total(DI)
	ADDQ BX, row_wsum(DI)
	MOVQ AX, CX
	IMULQ BX, CX
	ADDQ CX, row_wtotal(DI)
	MOVQ own+16(FP), CX
	IMULQ BX, CX
	ADDQ CX, row_wown(DI)
	CMPQ AX, row_min(DI)
	JGE  nomin
	MOVQ AX, row_min(DI)
nomin:
	CMPQ AX, row_max(DI)
	JLE  nomax
	MOVQ AX, row_max(DI)
nomax:
	CVTSQ2SD AX, X0
	MULSD    X0, X0
	ADDSD    row_sqTotal(DI), X0
	MOVSD    X0, row_sqTotal(DI)
	INCQ row_seq(DI)
	RET
