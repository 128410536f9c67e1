//go:build !race

#include "textflag.h"
#include "go_asm.h"

// func callers(pos, stop uintptr, buf *[walkMax]stackCaller) int
//
// The mirror of callersGo (callers.go): the frame-pointer chain from the
// frame at depth pos outward. A leaf with no stack check, so the stack
// cannot move while it reads it.
TEXT ·callers(SB), NOSPLIT, $0-32
	MOVQ (TLS), CX
	MOVQ 8(CX), R8      // g.stack.hi
	MOVQ R8, BX
	SUBQ pos+0(FP), BX  // the frame pointer of the frame at depth pos
	MOVQ stop+8(FP), R9
	MOVQ buf+16(FP), DI
	XORQ SI, SI
loop:
	CMPQ SI, $const_walkMax
	JGE  done
	MOVQ 0(BX), DX      // the caller's frame pointer
	CMPQ DX, BX
	JLS  done           // not further out: the chain ends
	CMPQ DX, R8
	JCC  done           // past the stack's top
	MOVQ 8(BX), AX      // the return address into the caller
	MOVQ AX, stackCaller_pc(DI)
	MOVQ R8, AX
	SUBQ DX, AX         // the caller's depth
	MOVQ AX, stackCaller_pos(DI)
	ADDQ $16, DI
	INCQ SI
	CMPQ AX, R9
	JLS  done           // the frame at depth stop, or past it
	MOVQ DX, BX
	JMP  loop
done:
	MOVQ SI, ret+24(FP)
	RET
