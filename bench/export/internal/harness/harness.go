// Package harness holds what the export benchmarks share: an OTLP
// receiver in a process of its own, CPU clocks, a traced workload through
// the meter engine, and producers paced at a rate.
package harness

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/meter/metertest"
	"github.com/meterio/meter/otlp/otlptest"
)

const childEnv = "METER_BENCH_RECEIVER"

// ServeIfChild runs the receiver and exits when the process was started by
// StartReceiver; call it first thing in main.
func ServeIfChild() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	r, err := otlptest.Start(otlptest.CountOnly())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", r.GRPCAddr, r.HTTPAddr)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() { // one query per line; EOF ends the receiver
		fmt.Printf("%d %d\n", r.SpanCount(), ProcessCPU())
	}
	r.Close()
	os.Exit(0)
}

// Receiver is a loopback OTLP receiver (otlptest, counting only) in a
// child process, as a collector on the same machine would be.
type Receiver struct {
	GRPCAddr, HTTPAddr string
	cmd                *exec.Cmd
	in                 io.WriteCloser
	out                *bufio.Scanner
}

// StartReceiver starts this program again as a receiver.
func StartReceiver() (*Receiver, error) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &Receiver{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	if !r.out.Scan() {
		cmd.Process.Kill()
		return nil, fmt.Errorf("receiver: no addresses")
	}
	f := strings.Fields(r.out.Text())
	if len(f) != 2 {
		cmd.Process.Kill()
		return nil, fmt.Errorf("receiver: %q", r.out.Text())
	}
	r.GRPCAddr, r.HTTPAddr = f[0], f[1]
	return r, nil
}

// Count returns how many spans the receiver has decoded, and its CPU time.
func (r *Receiver) Count() (spans int64, cpu time.Duration) {
	fmt.Fprintln(r.in, "count")
	if !r.out.Scan() {
		return -1, -1
	}
	f := strings.Fields(r.out.Text())
	spans, _ = strconv.ParseInt(f[0], 10, 64)
	ns, _ := strconv.ParseInt(f[1], 10, 64)
	return spans, time.Duration(ns)
}

// Close stops the receiver.
func (r *Receiver) Close() {
	r.in.Close()
	r.cmd.Wait()
}

// ProcessCPU returns the process's CPU time (user + system) in ns.
func ProcessCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// Traffic makes traces through the meter engine: a root probe's firing
// with spans-1 nested firings of a child probe. Wire it with Configure.
type Traffic struct {
	Root, Child *meter.Probe
	Spans       int
}

var traffics atomic.Int64

// NewTraffic registers two probes for traces of spans spans.
func NewTraffic(spans int) *Traffic {
	n := traffics.Add(1)
	return &Traffic{
		Root:  meter.NewProbe(fmt.Sprintf("bench.example/traffic%d.handle", n), nil),
		Child: meter.NewProbe(fmt.Sprintf("bench.example/traffic%d.work", n), nil),
		Spans: max(spans, 1),
	}
}

// Configure wires the engine so that every firing of the root starts a
// trace handed to sink, and lets the root start traces.
func (t *Traffic) Configure(sink meter.Sink) {
	meter.Configure(meter.Chain{Enabled: true, Tracepoint: metertest.TraceAt(t.Root), Sink: sink})
	metertest.Fire(t.Root, nil) // a probe starts traces once a firing of it has ended
}

// Trace makes one trace on the calling goroutine.
func (t *Traffic) Trace() {
	f := t.Root.Begin()
	for i := 1; i < t.Spans; i++ {
		t.child()
	}
	t.Root.End(&f)
}

// child is one nested firing, in a function of its own as generated code
// has it.
func (t *Traffic) child() { metertest.Fire(t.Child, nil) }

// Produce runs producers goroutines that call trace (each makes spans
// spans) for d, at rate spans per second in all (0: as fast as they can),
// and returns how many spans they made. Paced producers work in ticks of
// 1 ms, catching up after a sleep that overshot: Go's timers do not keep
// finer sleeps on a busy VM. With spin, they make each span when it is due
// and spin between, a steady rate for as many producers as there are idle
// cores.
func Produce(producers int, rate float64, d time.Duration, spans int, spin bool, trace func()) int64 {
	var made atomic.Int64
	var wg sync.WaitGroup
	per := rate / float64(producers)
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			k := int64(0)
			for {
				el := time.Since(start)
				if el >= d {
					break
				}
				if rate <= 0 {
					for range 64 {
						trace()
					}
					k += int64(64 * spans)
					continue
				}
				for due := int64(el.Seconds() * per); k < due; k += int64(spans) {
					trace()
				}
				if !spin {
					time.Sleep(time.Millisecond)
				}
			}
			made.Add(k)
		}()
	}
	wg.Wait()
	return made.Load()
}
