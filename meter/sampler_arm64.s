//go:build linux && !race

#include "textflag.h"
#include "go_asm.h"

// The sampler (sampler_linux.go), as sampler_amd64.s has it. It runs on a
// thread the Go runtime does not know of, on a stack of 16 KiB: nothing
// here may grow the stack, call Go, or read the thread's g (R28, zero
// there). The helpers below keep R19 and R20, which sampleLoop holds
// across their calls, and return in R0.

#define SYS_rt_sigprocmask 135
#define SYS_nanosleep 101
#define SYS_clone 220
#define SYS_exit 93
#define SYS_clock_gettime 113
#define SYS_prctl 167
#define PR_GET_DUMPABLE 3
#define SIG_SETMASK 2
// CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM:
// a thread of this process, as the runtime clones its own.
#define CLONE_FLAGS $0x50f00
#define GSTATUS_MASK $0xFFFFEFFF // without _Gscan
#define GRUNNING $2
#define GWAITING $4

// func sampleOnce(weight uint64)
//
// weight is in ns.
TEXT ·sampleOnce(SB), NOSPLIT, $0-8
	MOVD weight+0(FP), R1
	MOVD ·gtab(SB), R2
	MOVD gtable_entries(R2), R3   // the entries
	MOVD gtable_entries+8(R2), R4 // how many
	MOVD ·statusOffset(SB), R5
	CBZ  R5, done
scan:
	CBZ  R4, done
	MOVD gentry_key(R3), R6
	CBZ  R6, next
	MOVD gentry_val(R3), R7
	CBZ  R7, next
	MOVW Goroutine_depth(R7), R9
	CMP  $0, R9
	BLE  next
	ADD  R6, R5, R10
	MOVWU (R10), R9
	ANDW GSTATUS_MASK, R9
	CMPW GRUNNING, R9
	BEQ  credit
	// Waiting, but working on its system stack: an assist of the
	// collector's marking, a scan of its own stack (isWorking).
	CMPW GWAITING, R9
	BNE  next
	MOVD ·waitOffset(SB), R10
	CBZ  R10, next
	ADD  R6, R10, R10
	MOVBU (R10), R9
	MOVD $·isWorking(SB), R10
	ADD  R9, R10, R10
	MOVBU (R10), R9
	CBZ  R9, next
credit:
	ADD  $Goroutine_ran, R7, R10
add:
	LDAXR (R10), R11
	ADD  R1, R11, R11
	STLXR R11, (R10), R12
	CBNZ R12, add
next:
	ADD  $const_gentrySize, R3
	SUB  $1, R4
	B    scan
done:
	RET

// func cloneSampler(stack, tls uintptr, us int64) int64
//
// The new thread inherits the signal mask: every signal is blocked around
// clone(2), and the old mask (at 8(RSP)) restored in this thread after
// it. The child gets this thread's registers, R0 zero and its stack
// pointer at stack; tls is not used (the child keeps this thread's
// TPIDR_EL0, which nothing there reads).
TEXT ·cloneSampler(SB), NOSPLIT, $16-32
	MOVD $-1, R0
	MOVD R0, 16(RSP)
	MOVD $SIG_SETMASK, R0
	ADD  $16, RSP, R1
	ADD  $8, RSP, R2
	MOVD $8, R3
	MOVD $SYS_rt_sigprocmask, R8
	SVC
	MOVD us+16(FP), R19
	MOVD stack+0(FP), R1
	MOVD CLONE_FLAGS, R0
	MOVD $0, R2
	MOVD $0, R3
	MOVD $0, R4
	MOVD $SYS_clone, R8
	SVC
	CBZ  R0, child
	MOVD R0, ret+24(FP)
	MOVD $SIG_SETMASK, R0
	ADD  $8, RSP, R1
	MOVD $0, R2
	MOVD $8, R3
	MOVD $SYS_rt_sigprocmask, R8
	SVC
	RET
child:
	// On the new stack, whose words just above its pointer are free for
	// the argument.
	MOVD $0, R29
	MOVD $0, g
	MOVD R19, 8(RSP)
	BL   ·sampleLoop(SB)
	MOVD $0, R0
	MOVD $SYS_exit, R8
	SVC
	B    -3(PC)

// func sampleLoop(us int64)
//
// sampler_amd64.s's sampleLoop, step for step. The frame: the argument of
// sampleOnce at 8(RSP), the timespec of nanosleep at 16(RSP), the time of
// the last look at 32(RSP), the cap at 40(RSP), what the last look took
// at 48(RSP), the process's dumpable flag as the thread was made
// (sampleDumpable) at 56(RSP). R19 holds the mean interval asked for, in
// ns, and R20 the generator's state.
TEXT ·sampleLoop(SB), NOSPLIT, $64-8
	MOVD us+0(FP), R19
	MOVD $1000, R0
	MUL  R0, R19 // ns
	MOVD ·sampleSeed(SB), R20
	MOVD ZR, 48(RSP)
	MOVD ·sampleDumpable(SB), R0 // read before the thread was made
	MOVD R0, 56(RSP)
	BL   monotonic<>(SB)
	MOVD R0, 32(RSP)
loop:
	// The mean interval, ns.
	MOVD 48(RSP), R0
	MOVD $500, R1
	MUL  R1, R0
	CMP  R19, R0
	CSEL LT, R19, R0, R0
	LSL  $2, R0, R1
	MOVD R1, 40(RSP)
	// xorshift64
	EOR  R20>>12, R20, R20
	EOR  R20<<25, R20, R20
	EOR  R20>>27, R20, R20
	// The sleep, ns: uniform in [mean/2, 3·mean/2).
	LSR  $32, R20, R1
	MUL  R0, R1
	LSR  $32, R1, R1
	LSR  $1, R0, R2
	ADD  R1, R2, R2
	MOVD $1000000000, R3
	UDIV R3, R2, R4
	MUL  R3, R4, R5
	SUB  R5, R2, R5
	MOVD R4, 16(RSP) // s
	MOVD R5, 24(RSP) // ns
	ADD  $16, RSP, R0
	MOVD $0, R1
	MOVD $SYS_nanosleep, R8
	SVC
	BL   dumpable<>(SB)
	MOVD 56(RSP), R1
	CMP  R1, R0
	BNE  gone
	BL   monotonic<>(SB)
	MOVD 32(RSP), R1
	SUB  R1, R0, R2
	MOVD R0, 32(RSP)
	MOVD 40(RSP), R3
	CMP  R3, R2
	CSEL GT, R3, R2, R2
	MOVD R2, 8(RSP) // the look's weight: ns since the last, capped
	BL   ·sampleOnce(SB)
	BL   monotonic<>(SB)
	MOVD 32(RSP), R1
	SUB  R1, R0, R0
	MOVD R0, 48(RSP) // what the look took
	B    loop
gone:
	MOVD $·samplerInterval(SB), R0
	MOVD ZR, (R0)
	RET

// dumpable returns the process's dumpable flag in R0 (prctl(2)). It uses
// R0 to R4 and R8.
TEXT dumpable<>(SB), NOSPLIT|NOFRAME, $0-0
	MOVD $PR_GET_DUMPABLE, R0
	MOVD $0, R1
	MOVD $0, R2
	MOVD $0, R3
	MOVD $0, R4
	MOVD $SYS_prctl, R8
	SVC
	RET

// monotonic returns CLOCK_MONOTONIC in R0, ns, through the system call
// (the vDSO needs a Go stack). It uses R0, R1 and R8.
TEXT monotonic<>(SB), NOSPLIT, $16-0
	MOVD $1, R0 // CLOCK_MONOTONIC
	ADD  $8, RSP, R1
	MOVD $SYS_clock_gettime, R8
	SVC
	MOVD 8(RSP), R0
	MOVD $1000000000, R1
	MUL  R1, R0
	MOVD 16(RSP), R1
	ADD  R1, R0
	RET
