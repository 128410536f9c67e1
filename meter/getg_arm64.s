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
