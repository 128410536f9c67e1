//go:build arm64 && !race

#include "textflag.h"

// func marks() (left, reason uint8, sys bool)
//
// The running g's count of leaving the running state, at leftOffset; its
// wait reason, at waitOffset, which it clears when set (wait.go); and
// whether the word at syscallOffset is set, which it clears then
// (syscall_linux.go). An offset of 0 (not found) reads 0.
TEXT ·marks(SB), NOSPLIT, $0-3
	MOVD $0, R0
	MOVD ·waitOffset(SB), R1
	CBZ  R1, reasonread
	ADD  g, R1, R1
	MOVBU (R1), R0
	CBZ  R0, reasonread
	MOVB ZR, (R1)
reasonread:
	MOVB R0, reason+1(FP)
	MOVD $0, R0
	MOVD ·syscallOffset(SB), R1
	CBZ  R1, sysread
	ADD  g, R1, R1
	MOVD (R1), R2
	CBZ  R2, sysread
	MOVD ZR, (R1)
	MOVD $1, R0
sysread:
	MOVB R0, sys+2(FP)
	MOVD $0, R0
	MOVD ·leftOffset(SB), R1
	CBZ  R1, leftread
	ADD  g, R1, R1
	MOVBU (R1), R0
leftread:
	MOVB R0, left+0(FP)
	RET
