//go:build !race

#include "textflag.h"
#include "go_asm.h"

// The mirror of beginGo (decide.go). Offsets and constants come from
// go_asm.h, which the toolchain writes from the Go declarations.

#define HASHK $0x9E3779B97F4A7C15

// LOOKUP(miss) leaves in AX the running goroutine's state when it sits in
// its home slot of the goroutine table (current's fast path), in CX the
// running g and in R9 the g times the hash constant; it jumps to miss
// otherwise, CX still the g. It uses AX, CX, DX and R9. On amd64 a plain load is an
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

// ROOM(ok, fn) calls fn (roomOut, or roomGive on the paths of a sampled
// probe's firing that may be selected or forced) where the goroutine's
// stack has fewer than roomBytes below SP, the firing function's
// (room.go), and goes on at ok. CX holds the running g, and again after;
// AX is kept, in pos's slot across the call (FRAME writes pos after). It
// uses R10.
#define ROOM(ok, fn) \
	LEAQ -const_roomBytes(SP), R10; \
	CMPQ R10, 0(CX); \
	JHI  ok; \
	MOVQ AX, pos+16(FP); \
	CALL fn(SB); \
	MOVQ pos+16(FP), AX; \
	MOVQ (TLS), CX; \
ok:

// FRAME stores the firing's place for the Go side: pos, how deep the
// caller's frame is (the stack's top, g.stack.hi, less the caller's frame
// pointer, which this leaf leaves alone), and pc, where the caller called.
// A caller that is probe.Probe.Begin itself, not inlined (the compiler
// leaves calls in a closure made by an inlined function as calls), stands
// for its own caller: the frame its frame pointer links to, and the return
// address there (shim.go). CX holds the running g. It uses DX, R8 and R10.
#define FRAME(ok, fn) \
	ROOM(ok, fn); \
	MOVQ 0(SP), DX; \
	MOVQ BP, R8; \
	MOVQ DX, R10; \
	SUBQ ·shimLo(SB), R10; \
	CMPQ R10, ·shimSize(SB); \
	CMOVQCS 8(BP), DX; \
	CMOVQCS 0(BP), R8; \
	MOVQ DX, pc+24(FP); \
	MOVQ 8(CX), DX; \
	SUBQ R8, DX; \
	MOVQ DX, pos+16(FP)

// func framePointer() unsafe.Pointer
TEXT ·framePointer(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ BP, ret+0(FP)
	RET

// func cached() *Goroutine
TEXT ·cached(SB), NOSPLIT, $0-8
	LOOKUP(nocache)
	MOVQ AX, ret+0(FP)
	RET
nocache:
	MOVQ $0, ret+0(FP)
	RET

// func begin(p *Probe, st *Goroutine, pos, pc uintptr) Firing
//
// Each label names the Go function of decide.go whose case it mirrors.
TEXT ·begin(SB), NOSPLIT|NOFRAME, $0-40
	MOVQ p+0(FP), BX
	MOVL Probe_class(BX), AX
	CMPL AX, $const_classCount
	JLT  uncounted
	// counted (countGo): a plain add to the probe's slot on the running P,
	// found from g.m.p. The goroutine cannot leave its P inside this leaf.
	MOVQ (TLS), CX
	MOVQ const_gM(CX), SI
	MOVQ ·mpOffset(SB), DX
	MOVQ (SI)(DX*1), SI
	MOVLQZX 0(SI), SI
	CMPQ SI, ·countProcs(SB)
	JCC  countout
	SHLQ $const_procShift, SI
	ADDQ Probe_slots(BX), SI
	INCQ slot_calls(SI)
	CMPL AX, $const_classSample
	JLT  untimed
	JNE  meterorgate
	// classSample (forcedOrNot): where the goroutine's innermost metered
	// firing forces its timed children, the firing is forced, and the
	// countdown left alone; else the P's countdown, and the firing that
	// ends it is selected; else the probe's mean own time is added to that
	// innermost firing's children.
	LOOKUP(forcedgo)
	CMPL Goroutine_forcing(AX), $0
	JNE  forcedgo
	DECL slot_left(SI)
	JLE  due
	MOVLQSX Goroutine_depth(AX), DX
	TESTQ DX, DX
	JEQ  quiet
	MOVQ Goroutine_frames(AX), R8
	MOVQ -8(R8)(DX*8), R8
	MOVQ Probe_charge(BX), R9
	ADDQ R9, Frame_child(R8)
	// charge (Frame.charge): the stretch's charger, if it is not this
	// probe already.
	CMPQ BX, Frame_charger(R8)
	JEQ  quiet
	MOVQ $1, DX
	CMPQ Frame_charger(R8), $0
	CMOVQEQ BX, DX
	MOVQ DX, Frame_charger(R8)
	JMP  quiet
forcedgo:
	// forcedOrNot, inside a forcing firing, or with the goroutine's state
	// not at hand: Go decides, the firing counted already.
	FRAME(room1, ·roomGive)
	JMP  ·forcedOut(SB)
due:
	// selected: the countdown ran out on this P.
	FRAME(room2, ·roomGive)
	JMP  ·selectedOut(SB)
meterorgate:
	// meterOrGate: measure where no gate is on or a trace is open.
	MOVQ ·quick+quickPath_mode(SB), DI
	LOOKUP(slow)
	CMPQ DI, $const_modeUngated
	JEQ  measure
	CMPL Goroutine_trace(AX), $0
	JNE  measure
	// A goroutine new on this g (the runtime gives a finished goroutine's
	// g to the next one) goes to Go, as in meterOrGate, which notes it
	// once (sameGoroutine): one started inside a trace joins it there
	// (join.go).
	MOVQ ·identOffset(SB), DX
	MOVQ (CX)(DX*1), DX
	CMPQ DX, Goroutine_goid(AX)
	JNE  slow
	// outside: the gates of a firing outside any trace.
	CMPL Probe_ended(BX), $0
	JEQ  outsidego
	CMPQ DI, $const_modeTrace
	JEQ  lease
	DECQ Goroutine_flowLeft(AX)
	JLE  flowout
	CMPQ DI, $const_modeBoth
	JNE  quiet
lease:
	// outside: tracepoint's count on the probe; leaseOut if it ran out.
	MOVQ Goroutine_stripe(AX), DX
	LEASE
	JGT  quiet
	FRAME(room3, ·roomOut)
	MOVQ AX, st+8(FP)
	JMP  ·leaseOut(SB)
untimed:
	// classCount: the P's countdown to a checkpoint (checkpointOut).
	DECL slot_left(SI)
	JLE  checkpoint
quiet:
	// The quiet return of counted, forcedOrNot and outside: nil.
	MOVQ $0, ret+32(FP)
	RET
measure:
	// measure.
	// The frames must be this goroutine's: a g whose goroutine ended is
	// reused by the next one. Go drops a dead goroutine's frames.
	MOVQ ·identOffset(SB), DX
	MOVQ (CX)(DX*1), DX
	CMPQ DX, Goroutine_goid(AX)
	JNE  slow
	FRAME(room4, ·roomOut)
	MOVQ AX, st+8(FP)
	JMP  ·measure(SB)
flowout:
	// outside: flowcheck's count ran out (flowOut).
	FRAME(room5, ·roomOut)
	MOVQ AX, st+8(FP)
	JMP  ·flowOut(SB)
outsidego:
	// A probe none of whose firings has ended: Go's gates note its end.
	FRAME(room6, ·roomOut)
	MOVQ AX, st+8(FP)
	JMP  ·outsideOut(SB)
slow:
	// Counted already: meterOrGate finds the goroutine's state.
	MOVQ (TLS), CX
	FRAME(room7, ·roomOut)
	JMP  ·meterOrGateOut(SB)
checkpoint:
	FRAME(room8, ·roomOut)
	JMP  ·checkpointOut(SB)
countout:
	// No slot for this P: Go counts and decides.
	FRAME(room9, ·roomOut)
	JMP  ·countOut(SB)
uncounted:
	// classOff: nothing. classSpot (spot): spotcheck's count, on a stripe
	// that follows from the g's address.
	CMPL AX, $const_classSpot
	JNE  quiet
	MOVQ (TLS), CX
	MOVQ HASHK, R9
	IMULQ CX, R9
	MOVQ R9, DX
	SHRQ $61, DX
	LEASE
	JGT  quiet
	FRAME(room10, ·roomOut)
	JMP  ·spotOut(SB)
