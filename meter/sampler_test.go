//go:build linux && (amd64 || arm64) && !race

package meter

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// One look of the sampler adds its weight to each goroutine that has a
// metered firing open and runs, or assists the collector: not to one
// parked, nor to one that runs with no firing open. The status word of g is where findStatus says.
func TestSamplerLooksAtRunningGoroutines(t *testing.T) {
	if !findStatus() {
		t.Fatal("the status word of the runtime's g was not found")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	wire(t, Chain{})
	p := newProbe(t, "spinner")
	var (
		state   atomic.Pointer[Goroutine]
		gp      atomic.Pointer[byte]
		phase   atomic.Int32 // the spinner's: 1 spinning in a firing, 2 parked, 3 spinning outside
		next    atomic.Int32 // the test's: the phase to go to
		release = make(chan struct{})
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		state.Store(current())
		gp.Store((*byte)(getgp()))
		f := p.Begin()
		phase.Store(1)
		for next.Load() < 2 {
		}
		phase.Store(2)
		<-release
		p.End(&f)
		phase.Store(3)
		for next.Load() < 4 {
		}
	}()
	status := func() uint32 {
		return atomic.LoadUint32((*uint32)(unsafe.Add(unsafe.Pointer(gp.Load()), statusOffset)))
	}
	for phase.Load() != 1 {
		runtime.Gosched()
	}
	st := state.Load()
	for st.ran == 0 { // the spinner may be taken off its P for a moment
		sampleOnce(1000)
	}
	if r := atomic.LoadUint64(&st.ran); r%1000 != 0 || r == 0 {
		t.Fatalf("a running goroutine in a firing got %d ns, want a multiple of the weight", r)
	}
	next.Store(2)
	for phase.Load() != 2 || status()&^0x1000 != 4 {
		runtime.Gosched()
	}
	before := atomic.LoadUint64(&st.ran)
	sampleOnce(1000)
	if r := atomic.LoadUint64(&st.ran); r != before {
		t.Errorf("a parked goroutine got %d ns", r-before)
	}
	// Waiting with the reason an assist of the collector writes, it works:
	// the reason is written in by hand, and put back.
	findWaits()
	if assistReason == 0 || waitOffset == 0 {
		t.Fatal("the assist's wait reason was not found")
	}
	reason := (*uint8)(unsafe.Add(unsafe.Pointer(gp.Load()), waitOffset))
	was := *reason
	*reason = assistReason
	sampleOnce(1000)
	*reason = was
	if r := atomic.LoadUint64(&st.ran); r != before+1000 {
		t.Errorf("a goroutine in an assist got %d ns, want 1000", r-before)
	}
	close(release)
	for phase.Load() != 3 {
		runtime.Gosched()
	}
	before = atomic.LoadUint64(&st.ran)
	for range 100 {
		sampleOnce(1000)
	}
	if r := atomic.LoadUint64(&st.ran); r != before {
		t.Errorf("a goroutine with no firing open got %d ns", r-before)
	}
	next.Store(4)
	<-done
}

// The sampler runs on its own thread in the system call state: in a
// process of its own (the test binary again), it sees a goroutine that
// computes in a firing, while the collector runs, stacks are dumped and
// goroutines come and go; and the process exits normally.
func TestSamplerRuns(t *testing.T) {
	if os.Getenv("METER_TEST_SAMPLER") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSamplerRuns$", "-test.count=1")
		cmd.Env = append(os.Environ(), "METER_TEST_SAMPLER=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("sampler: seen")) {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	wire(t, Chain{})
	if !StartSampler(100 * time.Microsecond) {
		t.Fatal("the sampler does not start")
	}
	if !StartSampler(100 * time.Microsecond) {
		t.Fatal("a second start does not report the sampler running")
	}
	p := newProbe(t, "spinner")
	f := p.Begin()
	g := current()
	buf := make([]byte, 1<<20)
	var wg sync.WaitGroup
	for i := 0; atomic.LoadUint64(&g.ran) == 0; i++ {
		// Work that allocates, collects, dumps every stack, and starts
		// goroutines, until a look sees this one run.
		if i%1000 == 0 {
			runtime.GC()
			runtime.Stack(buf, true)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = make([]byte, 64) }()
	}
	wg.Wait()
	p.End(&f)
	fmt.Println("sampler: seen")
}

// Where the process's credentials change (syscall.Setuid, which the
// runtime does on each of its threads), the sampler's thread, which the
// runtime does not know, ends rather than keep the old ones, and the
// sampler is off. As root the test drops to nobody; otherwise it changes
// what the kernel changes on such a drop, the dumpable flag.
func TestSamplerEndsWhereCredentialsChange(t *testing.T) {
	if os.Getenv("METER_TEST_SAMPLER") == "" {
		// A sampler that does not end keeps the child waiting: killed
		// after a minute, it fails the test.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSamplerEndsWhereCredentialsChange$", "-test.count=1")
		cmd.Env = append(os.Environ(), "METER_TEST_SAMPLER=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("sampler: ended")) {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	if !StartSampler(100 * time.Microsecond) {
		t.Fatal("the sampler does not start")
	}
	task := fmt.Sprintf("/proc/self/task/%d", samplerTid)
	if _, err := os.Stat(task); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		if err := syscall.Setgid(65534); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Setuid(65534); err != nil {
			t.Fatal(err)
		}
	} else if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); e != 0 {
		t.Fatal(e)
	}
	for samplerInterval.Load() != 0 {
		runtime.Gosched()
	}
	for {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		runtime.Gosched()
	}
	fmt.Println("sampler: ended")
}
