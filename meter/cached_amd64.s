//go:build !race

#include "textflag.h"
#include "go_asm.h"

// LOOKUP(miss) leaves in AX the running goroutine's state when it sits in
// its home slot of the goroutine table (the running g from TLS, its
// Fibonacci hash, the slot), and jumps to miss otherwise. It uses AX, CX
// and DX. On amd64 a plain load is an acquire load, as the atomic loads of
// the Go version (cached_other.go) are.
#define LOOKUP(miss) \
	MOVQ (TLS), CX; \
	MOVQ $0x9E3779B97F4A7C15, AX; \
	IMULQ CX, AX; \
	SHRQ $40, AX; \
	MOVQ ·gtab(SB), DX; \
	ANDQ gtable_mask(DX), AX; \
	SHLQ $4, AX; \
	ADDQ gtable_entries(DX), AX; \
	CMPQ gentry_key(AX), CX; \
	JNE miss; \
	MOVQ gentry_val(AX), AX

// OUTSIDE(miss, traced) is LOOKUP, then a jump to traced when the
// goroutine is inside a trace.
#define OUTSIDE(miss, traced) \
	LOOKUP(miss); \
	CMPL Goroutine_trace(AX), $0; \
	JNE traced

// COUNT(off) decrements the probe word at byte offset off of the Probe in
// BX, atomically, and leaves the new value in DX and its sign in the flags.
#define COUNT(off) \
	MOVQ off, DI; \
	MOVQ $-1, DX; \
	LOCK; \
	XADDQ DX, (BX)(DI*1); \
	DECQ DX

// func cached() *Goroutine
TEXT ·cached(SB), NOSPLIT, $0-8
	LOOKUP(nocache)
	MOVQ AX, ret+0(FP)
	RET
nocache:
	MOVQ $0, ret+0(FP)
	RET

// func begin(p *Probe, scratch, scratch2 int64) Firing
//
// Begin's common cases, in one leaf:
//   - a firing of an enabled, ended probe, on a goroutine in its home slot
//     and outside any trace, counts down the gate's words (quick.mode: 1
//     the goroutine's, 2 the probe's, 3 both) and returns an unmetered
//     Firing while every count stays above zero; when a count runs out it
//     jumps to expired(p, the probe's count);
//   - the same firing inside a trace, or in a chain with no gate (mode 4),
//     jumps to measure(p, g, false), unless it is the call back of a
//     metered twin (p.reentered): that returns unmetered here;
//   - a firing of a disabled probe counts down the spotter's word
//     (quick.soff; none: returns) and jumps to spotted(p, the count) when
//     it runs out.
// Every other case jumps, having changed nothing, to beginSlow(p). Each
// target's parameters fit begin's three words (the scratch words carry
// the count or g; scratch2, 0, is measure's start) and it returns begin's
// result, so the jumps are tail calls.
TEXT ·begin(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), BX
	CMPL Probe_disabled(BX), $0
	JNE disabled
	CMPB Probe_ended(BX), $0
	JEQ slow
	MOVQ ·quick+quickPath_mode(SB), SI
	CMPQ SI, $1
	JNE probecount
	OUTSIDE(slow, traced)
	MOVQ ·quick+quickPath_goff(SB), DI
	DECQ (AX)(DI*1)
	JLE gexpired
quiet:
	XORL AX, AX
	MOVQ AX, ret_g+24(FP)
	MOVQ AX, ret_p+32(FP)
	MOVL AX, ret_depth+40(FP)
	MOVB AX, ret_gated+44(FP)
	RET
probecount:
	CMPQ SI, $2
	JNE both
	OUTSIDE(slow, traced)
	COUNT(·quick+quickPath_poff(SB))
	JGT quiet
	JMP expired
both:
	CMPQ SI, $3
	JNE ungated
	OUTSIDE(slow, traced)
	MOVQ ·quick+quickPath_goff(SB), DI
	DECQ (AX)(DI*1)
	SETGT CX // CL = 1 while the goroutine's count is above zero
	COUNT(·quick+quickPath_poff(SB))
	JLE expired
	TESTB CL, CL
	JNE quiet
expired:
	MOVQ DX, scratch+8(FP)
	JMP ·expired(SB)
gexpired:
	MOVQ $1, scratch+8(FP)
	JMP ·expired(SB)
ungated:
	CMPQ SI, $4
	JNE slow
	LOOKUP(slow)
traced:
	MOVQ Probe_id(BX), CX
	INCQ CX // p.key()
	CMPQ Goroutine_reenter(AX), CX
	JEQ reentered
	MOVQ AX, scratch+8(FP) // measure's g; scratch2 is its start, false
	JMP ·measure(SB)
reentered:
	MOVQ $0, Goroutine_reenter(AX)
	JMP quiet
slow:
	JMP ·beginSlow(SB)
disabled:
	CMPQ ·quick+quickPath_soff(SB), $0
	JEQ quiet
	COUNT(·quick+quickPath_soff(SB))
	JGT quiet
	MOVQ DX, scratch+8(FP)
	JMP ·spotted(SB)
