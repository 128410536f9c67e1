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

// func callerFrameN(n int) (pos, pc uintptr)
TEXT ·callerFrameN(SB), NOSPLIT, $0-24
	MOVQ n+0(FP), SI
	MOVQ BP, BX
up:
	TESTQ SI, SI
	JEQ  here
	MOVQ 0(BX), BX // the next caller's frame pointer
	DECQ SI
	JMP  up
here:
	MOVQ (TLS), AX
	MOVQ 8(AX), AX  // g.stack.hi
	MOVQ 8(BX), CX  // the return address into that caller
	MOVQ 0(BX), DX  // that caller's frame pointer
	SUBQ DX, AX
	MOVQ AX, pos+8(FP)
	MOVQ CX, pc+16(FP)
	RET
