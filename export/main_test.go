package export

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/meter/metertest"
)

// TestMain fails the package when goroutines outlive the tests: every
// pipeline, exporter and receiver a test starts must be stopped.
func TestMain(m *testing.M) {
	base := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		if err := settle(base, 5*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			code = 1
		}
	}
	os.Exit(code)
}

// allocsPerRun is testing.AllocsPerRun without its rounding down: the
// average number of heap allocations per call of f, over runs calls after
// one to warm up, counting every goroutine's.
func allocsPerRun(runs int, f func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&b)
	return float64(b.Mallocs-a.Mallocs) / float64(runs)
}

// runtimeYield lets other goroutines run while a test waits for a
// condition that they will make true.
func runtimeYield() { runtime.Gosched() }

// settle waits until at most base goroutines run: goroutines that have
// been told to stop need a turn to return, and nothing tells when they
// have, so it yields until they are gone or the timeout has passed.
func settle(base int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("goroutine leak: %d running, %d at the start", n, base)
		}
		runtime.Gosched()
	}
}

// app is a small instrumented program: handle → parse → lex, then handle →
// parse again, with times set on a manual clock.
type app struct {
	prefix             string
	handle, parse, lex *meter.Probe
	clk                *clock.Manual
}

var apps int

func newApp(t testing.TB) *app {
	apps++
	pre := fmt.Sprintf("example.com/app%d.", apps)
	a := &app{
		prefix: pre,
		handle: meter.NewProbe(pre+"handle", nil),
		parse:  meter.NewProbe(pre+"parse", nil),
		lex:    meter.NewProbe(pre+"(*lexer).next", nil),
		clk:    clock.NewManual(),
	}
	return a
}

// configure wires sink behind a gate on which handle starts traces, and
// lets one firing of handle end so that it may start traces.
func (a *app) configure(t testing.TB, sink meter.Sink) {
	meter.Configure(meter.Chain{Enabled: true, Tracepoint: metertest.TraceAt(a.handle), Sink: sink, Clock: a.clk})
	t.Cleanup(func() { meter.Configure(meter.Chain{}) })
	metertest.Fire(a.handle, nil)
}

// Times, in ns, of one request on the manual clock.
const (
	handleIncl = 215
	handleInh  = 105
	parse1Incl = 100
	parse1Inh  = 80
	lexIncl    = 20
	parse2Incl = 10
)

// request runs one traced request: four spans.
func (a *app) request() {
	h := a.handle.Begin()
	a.clk.Advance(100)
	p := a.parse.Begin()
	a.clk.Advance(50)
	l := a.lex.Begin()
	a.clk.Advance(lexIncl)
	a.lex.End(&l)
	a.clk.Advance(30)
	a.parse.End(&p)
	p2 := a.parse.Begin()
	a.clk.Advance(parse2Incl)
	a.parse.End(&p2)
	a.clk.Advance(5)
	a.handle.End(&h)
}

// row returns the model's row for a probe.
func row(t testing.TB, s meter.Snapshot, name string) meter.Row {
	t.Helper()
	for _, r := range s.Rows {
		if r.Probe == name {
			return r
		}
	}
	t.Fatalf("no row for %s in the model", name)
	return meter.Row{}
}
