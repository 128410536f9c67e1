//go:build !race

#include "textflag.h"
#include "go_asm.h"

// func writeRow(r *row, incl, inh int64)
//
// The mirror of writeRowGo with plain stores: seq odd, the totals, min and
// max, the sums of squares, seq even.
TEXT ·writeRow(SB), NOSPLIT, $0-24
	MOVQ r+0(FP), DI
	MOVQ incl+8(FP), AX
	MOVQ inh+16(FP), BX
	INCQ row_seq(DI)
	INCQ row_count(DI)
	ADDQ AX, row_total(DI)
	ADDQ BX, row_inherent(DI)
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
	CVTSQ2SD BX, X1
	MULSD    X1, X1
	ADDSD    row_sqInh(DI), X1
	MOVSD    X1, row_sqInh(DI)
	INCQ row_seq(DI)
	RET
