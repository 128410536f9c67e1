#include "textflag.h"

// func getg() uintptr
TEXT ·getg(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET

// func getgp() unsafe.Pointer
TEXT ·getgp(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET


// func callerFrame() (pos, pc uintptr)
TEXT ·callerFrame(SB), NOSPLIT, $0-16
	MOVQ (TLS), AX
	MOVQ 8(AX), AX  // g.stack.hi
	MOVQ 8(BP), CX  // the caller's return address
	MOVQ 0(BP), DX  // the caller's caller's frame pointer
	SUBQ DX, AX
	MOVQ AX, pos+0(FP)
	MOVQ CX, pc+8(FP)
	RET
