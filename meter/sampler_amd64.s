//go:build linux && !race

#include "textflag.h"
#include "go_asm.h"

// The sampler (sampler_linux.go). It runs on a thread the Go runtime
// does not know of, on a stack of 16 KiB: nothing here may grow the stack,
// call Go, or read the thread's g.

#define SYS_rt_sigprocmask 14
#define SYS_nanosleep 35
#define SYS_clone 56
#define SYS_exit 60
#define SYS_clock_gettime 228
#define SYS_prctl 157
#define PR_GET_DUMPABLE 3
#define SIG_SETMASK 2
// CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|
// CLONE_SETTLS: a thread of this process, as the runtime clones its own.
#define CLONE_FLAGS $0xd0f00
#define GSTATUS_MASK $0xFFFFEFFF // without _Gscan
#define GRUNNING $2
#define GWAITING $4

// func sampleOnce(weight uint64)
//
// weight is in ns.
TEXT ·sampleOnce(SB), NOSPLIT, $0-8
	MOVQ weight+0(FP), BX
	MOVQ ·gtab(SB), R8
	MOVQ gtable_entries(R8), R9     // the entries
	MOVQ gtable_entries+8(R8), R10  // how many
	MOVQ ·statusOffset(SB), R11
	TESTQ R11, R11
	JEQ  done
scan:
	TESTQ R10, R10
	JEQ  done
	MOVQ gentry_key(R9), CX
	TESTQ CX, CX
	JEQ  next
	MOVQ gentry_val(R9), DX
	TESTQ DX, DX
	JEQ  next
	CMPL Goroutine_depth(DX), $0
	JLE  next
	MOVL (CX)(R11*1), AX
	ANDL GSTATUS_MASK, AX
	CMPL AX, GRUNNING
	JEQ  credit
	// Waiting, but working on its system stack: an assist of the
	// collector's marking, a scan of its own stack (isWorking).
	CMPL AX, GWAITING
	JNE  next
	MOVQ ·waitOffset(SB), DI
	TESTQ DI, DI
	JEQ  next
	MOVBLZX (CX)(DI*1), AX
	LEAQ ·isWorking(SB), DI
	CMPB (DI)(AX*1), $0
	JEQ  next
credit:
	LOCK
	ADDQ BX, Goroutine_ran(DX)
next:
	ADDQ $const_gentrySize, R9
	DECQ R10
	JMP  scan
done:
	RET

// func cloneSampler(stack, tls uintptr, us int64) int64
//
// The new thread inherits the signal mask: every signal is blocked around
// clone(2), and the old mask (at 0(SP)) restored in this thread after it.
// The system calls clobber CX and R11; the child gets the other registers.
TEXT ·cloneSampler(SB), NOSPLIT, $16-32
	MOVQ $-1, AX
	MOVQ AX, 8(SP)
	MOVL $SIG_SETMASK, DI
	LEAQ 8(SP), SI
	LEAQ 0(SP), DX
	MOVL $8, R10
	MOVL $SYS_rt_sigprocmask, AX
	SYSCALL
	MOVQ us+16(FP), R12
	MOVQ stack+0(FP), SI
	MOVQ tls+8(FP), R8
	MOVL CLONE_FLAGS, DI
	XORL DX, DX
	XORL R10, R10
	MOVL $SYS_clone, AX
	SYSCALL
	CMPQ AX, $0
	JEQ  child
	MOVQ AX, ret+24(FP)
	MOVL $SIG_SETMASK, DI
	LEAQ 0(SP), SI
	XORL DX, DX
	MOVL $8, R10
	MOVL $SYS_rt_sigprocmask, AX
	SYSCALL
	RET
child:
	// On the new stack, whose top word below SP's is free for the
	// argument.
	XORL BP, BP
	MOVQ R12, 0(SP)
	CALL ·sampleLoop(SB)
	MOVL $0, DI
	MOVL $SYS_exit, AX
	SYSCALL
	JMP  -3(PC)

// func sampleLoop(us int64)
//
// It returns only where credentials change (below). The mean interval is
// us µs, or 500 times what the last look took, if longer: a look at a
// large table (tens of thousands of goroutines, each a cache miss or two)
// then costs at most a fifth of a percent of a core. Each look weighs the time since the one before, read
// from CLOCK_MONOTONIC: a sleep ends late on a busy machine, and a look's
// weight must be the time it stands for, up to four times the mean: a
// process stopped (SIGSTOP, a debugger, a machine asleep) must not give
// the goroutines it stopped running the whole stop. The frame: the
// argument of sampleOnce at 0(SP), the timespec of nanosleep at 8(SP),
// the time of the last look at 24(SP), the cap at 32(SP), what the last
// look took at 40(SP), the process's dumpable flag as the thread was made
// (sampleDumpable) at 48(SP).
//
// It returns, for its thread to end, when the dumpable flag changes: the
// kernel changes it where a thread's credentials change (syscall.Setuid
// and the like, done on every thread the runtime knows), and this thread,
// which the runtime does not know, must not keep the credentials the
// process gave up. samplerInterval then reads 0: no sampler.
TEXT ·sampleLoop(SB), NOSPLIT, $56-8
	MOVQ us+0(FP), R12
	IMULQ $1000, R12 // ns
	MOVQ ·sampleSeed(SB), R13
	MOVQ $0, 40(SP)
	MOVQ ·sampleDumpable(SB), AX // read before the thread was made
	MOVQ AX, 48(SP)
	CALL monotonic<>(SB)
	MOVQ AX, 24(SP)
loop:
	// The mean interval, ns.
	MOVQ 40(SP), AX
	IMULQ $500, AX
	CMPQ AX, R12
	CMOVQLT R12, AX
	MOVQ AX, CX
	SHLQ $2, CX
	MOVQ CX, 32(SP)
	// xorshift64
	MOVQ R13, CX
	SHRQ $12, CX
	XORQ CX, R13
	MOVQ R13, CX
	SHLQ $25, CX
	XORQ CX, R13
	MOVQ R13, CX
	SHRQ $27, CX
	XORQ CX, R13
	// The sleep, ns: uniform in [mean/2, 3·mean/2).
	MOVQ R13, CX
	SHRQ $32, CX
	IMULQ AX, CX
	SHRQ $32, CX
	SHRQ $1, AX
	ADDQ CX, AX
	XORL DX, DX
	MOVQ $1000000000, CX
	DIVQ CX
	MOVQ AX, 8(SP)  // s
	MOVQ DX, 16(SP) // ns
	LEAQ 8(SP), DI
	XORL SI, SI
	MOVL $SYS_nanosleep, AX
	SYSCALL
	CALL dumpable<>(SB)
	CMPQ AX, 48(SP)
	JNE  gone
	CALL monotonic<>(SB)
	MOVQ AX, CX
	SUBQ 24(SP), CX
	MOVQ AX, 24(SP)
	CMPQ CX, 32(SP)
	CMOVQGT 32(SP), CX
	MOVQ CX, 0(SP) // the look's weight: ns since the last, capped
	CALL ·sampleOnce(SB)
	CALL monotonic<>(SB)
	SUBQ 24(SP), AX
	MOVQ AX, 40(SP) // what the look took
	JMP  loop
gone:
	MOVQ $0, ·samplerInterval(SB)
	RET

// dumpable returns the process's dumpable flag in AX (prctl(2)). It uses
// AX, CX, DX, SI, DI, R8, R10, R11.
TEXT dumpable<>(SB), NOSPLIT, $0-0
	MOVL $PR_GET_DUMPABLE, DI
	XORL SI, SI
	XORL DX, DX
	XORL R10, R10
	XORL R8, R8
	MOVL $SYS_prctl, AX
	SYSCALL
	RET

// monotonic returns CLOCK_MONOTONIC in AX, ns, through the system call
// (the vDSO needs a Go stack). It uses AX, CX, DX, SI, DI, R11.
TEXT monotonic<>(SB), NOSPLIT, $16-0
	MOVL $1, DI // CLOCK_MONOTONIC
	LEAQ 0(SP), SI
	MOVL $SYS_clock_gettime, AX
	SYSCALL
	MOVQ 0(SP), AX
	IMULQ $1000000000, AX
	ADDQ 8(SP), AX
	RET
