//go:build amd64 && !race

#include "textflag.h"

// MARKS(L, R, S) writes the running g's marks to the results at offsets
// L, R and S: its count of leaving the running state, at leftOffset; its
// wait reason, at waitOffset, which it clears when set (wait.go);
// and whether the word at syscallOffset is set, which it clears then
// (syscall_linux.go). An offset of 0 (not found) reads 0. It uses AX, BX,
// CX and DX.
#define MARKS(L, R, S) \
	MOVQ (TLS), CX; \
	XORL AX, AX; \
	MOVQ ·waitOffset(SB), DX; \
	TESTQ DX, DX; \
	JEQ  5(PC); \
	MOVBLZX (CX)(DX*1), AX; \
	TESTB AL, AL; \
	JEQ  2(PC); \
	MOVB $0, (CX)(DX*1); \
	MOVB AL, reason+R(FP); \
	XORL AX, AX; \
	MOVQ ·syscallOffset(SB), DX; \
	TESTQ DX, DX; \
	JEQ  5(PC); \
	CMPQ (CX)(DX*1), $0; \
	JEQ  3(PC); \
	MOVQ $0, (CX)(DX*1); \
	MOVL $1, AX; \
	MOVB AL, sys+S(FP); \
	XORL BX, BX; \
	MOVQ ·leftOffset(SB), DX; \
	TESTQ DX, DX; \
	JEQ  2(PC); \
	MOVBLZX (CX)(DX*1), BX; \
	MOVB BX, left+L(FP)

// func marks() (left, reason uint8, sys bool)
TEXT ·marks(SB), NOSPLIT, $0-3
	MARKS(0, 1, 2)
	RET

// func stamp() (t int64, left, reason uint8, sys bool)
//
// With the TSC (stampTSC), its reading, as clock.Now reads it, and the
// marks, in one function: the runtime preempts no goroutine inside an
// assembly function, so the marks are those of the tick. Else stampOther.
TEXT ·stamp(SB), NOSPLIT, $0-11
	CMPB ·stampTSC(SB), $0
	JEQ  other
	RDTSCP
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, t+0(FP)
	MARKS(8, 9, 10)
	RET
other:
	JMP ·stampOther(SB)
