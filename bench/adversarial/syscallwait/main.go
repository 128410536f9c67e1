// Command syscallwait runs a consumer that waits inside a blocking system
// call beside the CPU work that feeds it: blocking's shape, with a pipe
// read where blocking has a channel receive. A producer goroutine computes
// each value (produce, about 25 µs of CPU) and writes it to a pipe whose
// ends are in blocking mode, outside Go's network poller; the consumer
// waits for it in receive, a read(2) that blocks in the kernel, then
// digests it (about 12 µs). A goroutine in a system call does not park:
// its g stays in the system call state while its thread sleeps in the
// kernel, and the runtime may hand its P to another thread meanwhile. A
// CPU profile charges receive almost nothing. Cgo calls, file I/O on slow disks,
// flock and os/exec's waits block so.
//
// A CPU profile of this program holds some 85% of the process's CPU time,
// and charges the system calls' part (the write that wakes the reader,
// the read's return) less than it takes: -threadcpu, run plain, times each
// function by its thread's CPU clock instead (both goroutines locked to
// their threads), the reference docs/adversarial.md compares the model
// with.
//
// Calls are known from the loop bounds. The functions are marked
// //go:noinline and are small: instrument with -all (the goroutines'
// functions are kept by the default selection too).
//
//	go run ./bench/adversarial/syscallwait [-n 60000] [-cpuprofile cpu.pprof]
//	go run ./bench/adversarial/syscallwait -threadcpu
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/meterio/meter/bench/adversarial/internal/busy"
	"github.com/meterio/meter/bench/adversarial/internal/truth"
)

var sink uint64

//go:noinline
func produce(i int) uint64 {
	return busy.Spin(uint64(i), 16000)
}

// receive reads one value from fd, a pipe in blocking mode: the read
// waits in the kernel until the producer writes.
//
//go:noinline
func receive(fd int) uint64 {
	var b [8]byte
	for got := 0; got < len(b); {
		n, err := syscall.Read(fd, b[got:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			fmt.Fprintln(os.Stderr, "syscallwait: read:", n, err)
			os.Exit(1)
		}
		got += n
	}
	return binary.LittleEndian.Uint64(b[:])
}

//go:noinline
func digest(v uint64) uint64 {
	return busy.Spin(v, 8000)
}

//go:noinline
func producer(fd int, n int) {
	var b [8]byte
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint64(b[:], produce(i))
		if _, err := syscall.Write(fd, b[:]); err != nil {
			fmt.Fprintln(os.Stderr, "syscallwait: write:", err)
			os.Exit(1)
		}
	}
}

//go:noinline
func consumer(fd int, n int) uint64 {
	var x uint64
	for i := 0; i < n; i++ {
		x ^= digest(receive(fd))
	}
	return x
}

func main() {
	n := flag.Int("n", 60000, "values produced and consumed")
	reference := flag.Bool("threadcpu", false, "time each function by its thread's CPU clock and print it (run plain)")
	flag.Parse()
	if *reference {
		threadCPUReference(*n)
		return
	}
	rec := truth.Start()

	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		fmt.Fprintln(os.Stderr, "syscallwait: pipe:", err)
		os.Exit(1)
	}
	go producer(p[1], *n)
	sink = consumer(p[0], *n)
	fmt.Println("syscallwait:", sink)

	rec.Add("main.main", 1)
	rec.Add("main.producer", 1)
	rec.Add("main.consumer", 1)
	rec.Add("main.produce", int64(*n))
	rec.Add("main.receive", int64(*n))
	rec.Add("main.digest", int64(*n))
	rec.Finish()
}

// threadCPU is the calling thread's CPU time, user and system, in ns.
//
//meter:ignore
func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// threadCPUReference runs producer's and consumer's loops with each call
// between two reads of its thread's CPU clock, and prints the CPU time a
// call of each function takes (the producer's write stands for what
// producer keeps of its own). Each figure holds a read's cost, a tenth of
// a microsecond or so.
//
//meter:ignore
func threadCPUReference(n int) {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		fmt.Fprintln(os.Stderr, "syscallwait: pipe:", err)
		os.Exit(1)
	}
	done := make(chan [2]int64)
	go func() {
		runtime.LockOSThread()
		var b [8]byte
		var prod, write int64
		for i := 0; i < n; i++ {
			a := threadCPU()
			v := produce(i)
			c := threadCPU()
			binary.LittleEndian.PutUint64(b[:], v)
			syscall.Write(p[1], b[:])
			prod, write = prod+c-a, write+threadCPU()-c
		}
		done <- [2]int64{prod, write}
	}()
	runtime.LockOSThread()
	var recv, dig int64
	var x uint64
	for i := 0; i < n; i++ {
		a := threadCPU()
		v := receive(p[0])
		c := threadCPU()
		x ^= digest(v)
		recv, dig = recv+c-a, dig+threadCPU()-c
	}
	r := <-done
	per := func(t int64) int64 { return t / int64(n) }
	fmt.Printf("thread CPU a call: produce %d ns, producer's write %d ns, receive %d ns, digest %d ns (%d)\n",
		per(r[0]), per(r[1]), per(recv), per(dig), x&1)
}
