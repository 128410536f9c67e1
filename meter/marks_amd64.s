//go:build amd64 && !race

#include "textflag.h"

// func marks() (left, reason uint8, sys bool)
//
// The running g's count of leaving the running state, at leftOffset; its
// wait reason, at waitOffset, which it clears when set (wait_amd64.go);
// and whether the word at syscallOffset is set, which it clears then
// (syscall_amd64.go). An offset of 0 (not found) reads 0.
TEXT ·marks(SB), NOSPLIT, $0-3
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
	XORL AX, AX
	MOVQ ·syscallOffset(SB), DX
	TESTQ DX, DX
	JEQ  sysread
	CMPQ (CX)(DX*1), $0
	JEQ  sysread
	MOVQ $0, (CX)(DX*1)
	MOVL $1, AX
sysread:
	MOVB AL, sys+2(FP)
	XORL BX, BX
	MOVQ ·leftOffset(SB), DX
	TESTQ DX, DX
	JEQ  leftread
	MOVBLZX (CX)(DX*1), BX
leftread:
	MOVB BX, left+0(FP)
	RET
