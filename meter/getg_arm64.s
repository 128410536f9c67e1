#include "textflag.h"

// func getg() uintptr
TEXT ·getg(SB), NOSPLIT, $0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET

// func getgp() unsafe.Pointer
TEXT ·getgp(SB), NOSPLIT, $0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET


// func callerFrame() (pos, pc uintptr)
TEXT ·callerFrame(SB), NOSPLIT, $0-16
	MOVD 8(g), R0   // g.stack.hi
	MOVD 8(R29), R1 // the caller's return address
	MOVD 0(R29), R2 // the caller's caller's frame pointer
	SUB  R2, R0, R0
	MOVD R0, pos+0(FP)
	MOVD R1, pc+8(FP)
	RET

// func callerFrameN(n int) (pos, pc uintptr)
TEXT ·callerFrameN(SB), NOSPLIT, $0-24
	MOVD n+0(FP), R3
	MOVD R29, R4
up:
	CBZ  R3, here
	MOVD 0(R4), R4 // the next caller's frame pointer
	SUB  $1, R3
	B    up
here:
	MOVD 8(g), R0   // g.stack.hi
	MOVD 8(R4), R1  // the return address into that caller
	MOVD 0(R4), R2  // that caller's frame pointer
	SUB  R2, R0, R0
	MOVD R0, pos+8(FP)
	MOVD R1, pc+16(FP)
	RET
