//go:build amd64 && !race

#include "textflag.h"

// func marks() (left, reason uint8)
//
// The running g's count of leaving the running state, at leftOffset, and
// its wait reason, at waitOffset, which it clears when set (wait_amd64.go);
// an offset of 0 (not found) reads 0.
TEXT ·marks(SB), NOSPLIT, $0-2
	MOVQ (TLS), CX
	XORL AX, AX
	MOVQ ·waitOffset(SB), DX
	TESTQ DX, DX
	JEQ  reasonread
	MOVBLZX (CX)(DX*1), AX
	TESTB AL, AL
	JEQ  reasonread
	MOVB $0, (CX)(DX*1)
reasonread:
	MOVB AL, reason+1(FP)
	XORL BX, BX
	MOVQ ·leftOffset(SB), DX
	TESTQ DX, DX
	JEQ  leftread
	MOVBLZX (CX)(DX*1), BX
leftread:
	MOVB BX, left+0(FP)
	RET
