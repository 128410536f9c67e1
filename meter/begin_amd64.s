//go:build !race

#include "textflag.h"
#include "go_asm.h"

// The mirror of beginGo (decide.go). Offsets and constants come from
// go_asm.h, which the toolchain writes from the Go declarations.

#define HASHK $0x9E3779B97F4A7C15

// LOOKUP(miss) leaves in AX the running goroutine's state when it sits in
// its home slot of the goroutine table (current's fast path), in CX the
// running g and in R9 the g times the hash constant; it jumps to miss
// otherwise. It uses AX, CX, DX and R9. On amd64 a plain load is an
// acquire load, as the atomic loads of the Go version are.
#define LOOKUP(miss) \
	MOVQ (TLS), CX; \
	MOVQ HASHK, R9; \
	IMULQ CX, R9; \
	MOVQ R9, AX; \
	SHRQ $40, AX; \
	MOVQ ·gtab(SB), DX; \
	ANDQ gtable_mask(DX), AX; \
	SHLQ $4, AX; \
	ADDQ gtable_entries(DX), AX; \
	CMPQ gentry_key(AX), CX; \
	JNE miss; \
	MOVQ gentry_val(AX), AX

// LEASE decrements stripe DX of the count of the Probe in BX, atomically;
// the flags compare the value before with zero, so JGT takes a unit that
// was there. The stripe is the goroutine state's (Goroutine.stripe), or,
// with no state at hand, the top bits of R9 (stripe, in Go).
#define LEASE \
	MOVQ Probe_count+Countdown_leases(BX), DI; \
	SHLQ $6, DX; \
	MOVQ $-1, R8; \
	LOCK; \
	XADDQ R8, (DI)(DX*1); \
	CMPQ R8, $0

// FRAME stores the firing's place for the Go side: pos, how deep the
// caller's frame is (the stack's top, g.stack.hi, less the caller's frame
// pointer, which this leaf leaves alone), and pc, where the caller called.
// CX holds the running g.
#define FRAME \
	MOVQ 8(CX), DX; \
	SUBQ BP, DX; \
	MOVQ DX, pos+16(FP); \
	MOVQ 0(SP), DX; \
	MOVQ DX, pc+24(FP)

// func cached() *Goroutine
TEXT ·cached(SB), NOSPLIT, $0-8
	LOOKUP(nocache)
	MOVQ AX, ret+0(FP)
	RET
nocache:
	MOVQ $0, ret+0(FP)
	RET

// func begin(p *Probe, st *Goroutine, pos, pc uintptr) Firing
TEXT ·begin(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), BX
	MOVQ ·quick+quickPath_mode(SB), SI
	CMPQ SI, $const_modeNone
	JEQ  quiet
	MOVL Probe_state(BX), AX
	CMPL AX, $const_Enabled
	JNE  notenabled
	CMPL Probe_ended(BX), $0
	JEQ  slow
	LOOKUP(slow)
	CMPQ SI, $const_modeUngated
	JEQ  metered
	CMPL Goroutine_trace(AX), $0
	JNE  metered
	CMPQ SI, $const_modeTrace
	JEQ  lease
	DECQ Goroutine_flowLeft(AX)
	JLE  flowout
	CMPQ SI, $const_modeBoth
	JNE  quiet
lease:
	MOVQ Goroutine_stripe(AX), DX
	LEASE
	JGT  quiet
	FRAME
	MOVQ AX, st+8(FP)
	JMP  ·leaseOut(SB)
quiet:
	MOVQ $0, ret+32(FP)
	RET
metered:
	// The frames must be this goroutine's: a g whose goroutine ended is
	// reused by the next one. Go drops a dead goroutine's frames.
	MOVQ ·identOffset(SB), DX
	MOVQ (CX)(DX*1), DX
	CMPQ DX, Goroutine_goid(AX)
	JNE  slow
	FRAME
	MOVQ AX, st+8(FP)
	JMP  ·measure(SB)
flowout:
	FRAME
	MOVQ AX, st+8(FP)
	JMP  ·flowOut(SB)
notenabled:
	MOVQ (TLS), CX
	MOVQ HASHK, R9
	IMULQ CX, R9
	CMPL AX, $const_Sampled
	JNE  disabled
	// A sampled probe in a counting window (counting.go): one atomic add
	// on the probe's stripe of the goroutine; every countEvery-th count
	// of a stripe goes on in Go (countDue).
	CMPL ·sampler+samplerState_counting(SB), $0
	JEQ  sampledgo
	MOVQ Probe_counts(BX), DI
	TESTQ DI, DI
	JEQ  quiet
	MOVQ 0(DI), DI
	MOVQ R9, DX
	SHRQ $61, DX
	SHLQ $6, DX
	MOVQ $1, R8
	LOCK
	XADDQ R8, (DI)(DX*1)
	INCQ R8
	TESTQ $const_countEvery-1, R8
	JNE  quiet
	FRAME
	JMP  ·countDue(SB)
sampledgo:
	FRAME
	JMP  ·sampled(SB)
disabled:
	CMPQ ·quick+quickPath_spot(SB), $0
	JEQ  quiet
	MOVQ R9, DX
	SHRQ $61, DX
	LEASE
	JGT  quiet
	FRAME
	JMP  ·spotOut(SB)
slow:
	MOVQ (TLS), CX
	FRAME
	JMP  ·beginGo(SB)

// func exit(p *Probe, f *Firing)
TEXT ·exit(SB), NOSPLIT, $0-16
	MOVQ f+8(FP), AX
	CMPQ 0(AX), $0
	JNE  ended
	RET
ended:
	JMP  ·exitGo(SB)
