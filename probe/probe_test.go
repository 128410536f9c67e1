package probe

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meterio/meter/meter"
)

// Properties are read once per process, so each case runs this test binary
// again as a child with its own environment.
func TestMain(m *testing.M) {
	if os.Getenv("PROBE_CHILD") != "" {
		child(os.Getenv("PROBE_CHILD"))
		return
	}
	os.Exit(m.Run())
}

var probes [3]Probe

// work has the shape meterinject gives a function with defers of its own:
// End deferred for a firing that has one to do.
func work(i int, d time.Duration, nested func()) {
	f := probes[i].Unmetered()
	if probes[i].On() && probes[i].Begin(&f) {
		defer probes[i].End(&f)
	}
	// Busy for d: a wait would not be the function's own time.
	for start := time.Now(); time.Since(start) < d; {
	}
	if nested != nil {
		nested()
	}
}

func child(mode string) {
	defer Shutdown()
	Register(probes[:], "example.com/app.main", "example.com/app.(*Server).handle", "example.com/app.parse")
	switch mode {
	case "run":
		for i := 0; i < 3; i++ {
			work(0, 0, func() { work(1, 2*time.Millisecond, func() { work(2, 0, nil) }) })
		}
	case "interval":
		written := make(chan struct{}, 1)
		onFlush = func() {
			select {
			case written <- struct{}{}:
			default:
			}
		}
		for i := 0; i < 5; i++ {
			work(1, time.Millisecond, nil)
		}
		<-written // a periodic write, while the program runs
		fmt.Println("written")
		work(1, 0, nil)
	case "sigterm", "handled":
		var sig chan os.Signal
		if mode == "handled" {
			sig = make(chan os.Signal, 1)
			SignalNotify(sig, syscall.SIGTERM)
		}
		Main()
		for i := 0; i < 3; i++ {
			work(0, 0, func() { work(1, 0, nil) })
		}
		fmt.Println("ready")
		if sig == nil {
			select {} // SIGTERM ends it
		}
		<-sig
		work(2, 0, nil) // the program's own shutdown
	case "stopped", "ctxstopped", "reset", "ignorereset":
		// The program handles SIGTERM for a while, then no longer: SIGTERM
		// ends it again.
		sig := make(chan os.Signal, 1)
		SignalNotify(sig, syscall.SIGTERM)
		_, stop := SignalNotifyContext(context.Background(), syscall.SIGTERM)
		Main()
		work(0, 0, func() { work(1, 0, nil) })
		switch mode {
		case "stopped":
			SignalStop(sig)
			stop()
		case "ctxstopped":
			SignalStop(sig)
			stop()
			stop() // twice, as a deferred stop often is
		case "reset":
			SignalReset(syscall.SIGTERM)
		case "ignorereset":
			SignalIgnore(syscall.SIGTERM)
			SignalReset()
		}
		fmt.Println("ready")
		select {}
	case "main":
		Main()
		work(0, 0, nil)
	case "deadlock":
		// Every goroutine parks, one inside a firing: the runtime must
		// find the program deadlocked, as it does the plain one.
		fmt.Println("sampler:", meter.Take().Sampler != 0) // Register starts it, without Main (tests)
		Main()
		block := make(chan int)
		go work(1, 0, func() { <-block })
		work(0, 0, func() { <-block })
	case "on":
		if probes[0].on.Load() == 0 || probes[0].Name() != "example.com/app.main" {
			os.Exit(3)
		}
	case "off":
		if probes[0].on.Load() != 0 {
			os.Exit(3)
		}
		work(0, 0, nil)
	}
}

func runChild(t *testing.T, mode string, env ...string) (stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, "PROBE_CHILD="+mode)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", mode, err, out)
	}
	return string(out)
}

// A program that deadlocks ends as the plain one does, with the runtime's
// report and exit status 2, the sampler running: neither the sampler's
// thread nor a watch of signals (none without an export) keeps the
// runtime from seeing every goroutine asleep.
func TestDeadlockIsReported(t *testing.T) {
	if raceBuild {
		t.Skip("under the race detector the runtime reports no deadlock, in a plain program either")
	}
	// A child the runtime does not find deadlocked waits for ever: killed
	// after a minute, it fails the test.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROBE_CHILD=deadlock")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "all goroutines are asleep - deadlock!") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	sampler := runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")
	if want := fmt.Sprintf("sampler: %v\n", sampler); !strings.HasPrefix(string(out), want) {
		t.Fatalf("child output does not start with %q:\n%s", want, out)
	}
}

func readModel(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, r := range recs[1:] {
		rows[r[0]] = r
	}
	return rows
}

func TestShutdownWritesTheModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.csv")
	if out := runChild(t, "run", "METER_EXPORT_CSV="+path, "METER_CLOCK=mono"); out != "" {
		t.Fatalf("unexpected output: %q", out)
	}
	rows := readModel(t, path)
	if len(rows) != 3 {
		t.Fatalf("rows: %v", rows)
	}
	h := rows["example.com/app.(*Server).handle"]
	if h[1] != "3" || h[8] != "hotspot" {
		t.Fatalf("handle row %v: want count 3, label hotspot", h)
	}
	if rows["example.com/app.parse"][1] != "3" || rows["example.com/app.main"][1] != "3" {
		t.Fatalf("rows: %v", rows)
	}
}

func TestIntervalWritesWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.csv")
	// The child waits for a periodic write before it goes on and ends.
	if out := runChild(t, "interval", "METER_EXPORT_CSV="+path, "METER_EXPORT_INTERVAL=20ms"); out != "written\n" {
		t.Fatalf("child output %q", out)
	}
	if r := readModel(t, path)["example.com/app.(*Server).handle"]; r == nil || r[1] != "6" {
		t.Fatalf("final model row %v, want count 6", r)
	}
}

// startChild runs the child in mode and waits for its "ready" line.
func startChild(t *testing.T, mode string, env ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, "PROBE_CHILD="+mode)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child %s: %q, %v\n%s", mode, line, err, stderr.String())
	}
	return cmd, &stderr
}

// SIGTERM, which is how services stop, leaves a complete model, and a
// program that does not handle it still dies of it.
func TestSIGTERMWritesTheModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.csv")
	cmd, stderr := startChild(t, "sigterm", "METER_EXPORT_CSV="+path)
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the child ended with %v (%v), not killed by SIGTERM\n%s", err, cmd.ProcessState, stderr)
	}
	rows := readModel(t, path)
	if r := rows["example.com/app.(*Server).handle"]; r == nil || r[1] != "3" || rows["example.com/app.main"][1] != "3" {
		t.Fatalf("model %v", rows)
	}
}

// A program that stopped handling SIGTERM (signal.Stop, NotifyContext's
// stop, signal.Reset, signal.Ignore then Reset) dies of it, as it would
// without meter, and the model is written first.
func TestSIGTERMNoLongerHandled(t *testing.T) {
	for _, mode := range []string{"stopped", "ctxstopped", "reset", "ignorereset"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "model.csv")
			cmd, stderr := startChild(t, mode, "METER_EXPORT_CSV="+path)
			cmd.Process.Signal(syscall.SIGTERM)
			err := cmd.Wait()
			ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
				t.Fatalf("the child ended with %v (%v), not killed by SIGTERM\n%s", err, cmd.ProcessState, stderr)
			}
			if r := readModel(t, path)["example.com/app.(*Server).handle"]; r == nil || r[1] != "1" {
				t.Fatalf("handle row %v: want count 1", r)
			}
		})
	}
}

// A program that handles SIGTERM keeps its own shutdown, and the model
// written when it ends counts what that shutdown did.
func TestHandledSIGTERMKeepsTheProgramsShutdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.csv")
	cmd, stderr := startChild(t, "handled", "METER_EXPORT_CSV="+path)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the child: %v\n%s", err, stderr)
	}
	if r := readModel(t, path)["example.com/app.parse"]; r == nil || r[1] != "1" {
		t.Fatalf("parse row %v: want the firing of the program's own shutdown", r)
	}
}

func TestStartupLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.csv")
	out := runChild(t, "main", "METER_EXPORT_CSV="+path)
	if want := "meter: 3 probes in 1 package, hotspot("; !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "; model to "+path+" at exit\n") {
		t.Fatalf("start-up line %q", out)
	}
	out = runChild(t, "main", "METER_EXPORT_CSV="+path, "METER_HOTSPOT_ENABLED=false")
	if want := "meter: 3 probes in 1 package, no extensions: every firing metered; model to " + path + " at exit\n"; out != want {
		t.Fatalf("start-up line with no extension %q, want %q", out, want)
	}
	if out := runChild(t, "main"); out != "" {
		t.Fatalf("with no export configured, the program printed %q", out)
	}
}

func TestMisspeltPropertyNamesTheNearest(t *testing.T) {
	out := runChild(t, "on", "METER_HOTSPOT_TRESHOLD=5")
	if out != "meter: METER_HOTSPOT_TRESHOLD is not a property (did you mean METER_HOTSPOT_THRESHOLD?); it is ignored\n" {
		t.Fatalf("stderr %q", out)
	}
}

func TestUnwritableModelPathIsReportedNotFatal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "model.csv")
	out := runChild(t, "run", "METER_EXPORT_CSV="+path)
	if !strings.Contains(out, "cannot write "+path) || strings.Count(out, "\n") != 1 {
		t.Fatalf("stderr %q: want one line naming the path", out)
	}
}

func TestBadPropertyKeepsRunning(t *testing.T) {
	out := runChild(t, "on", "METER_HOTSPOT_INITIAL=lots")
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "METER_HOTSPOT_INITIAL") {
		t.Fatalf("stderr %q", out)
	}
}

func TestMeterEnabledFalseTurnsEveryProbeOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.csv")
	runChild(t, "off", "METER_ENABLED=false", "METER_CLOCK=tsc", "METER_EXPORT_CSV="+path)
	if rows := readModel(t, path); len(rows) != 0 {
		t.Fatalf("metering off, yet rows: %v", rows)
	}
	// Nothing is timed, so the TSC is not calibrated (it takes about 5 ms
	// of the program's start), whatever METER_CLOCK says.
	meta, err := os.ReadFile(path + ".meta")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(meta), "\nclock: mono\n") {
		t.Fatalf("metering off, the clock set up anyway:\n%s", meta)
	}
}

func TestUnregisteredProbeIsInert(t *testing.T) {
	var p Probe
	if p.on.Load() != 0 || p.Name() != "" {
		t.Fatal("zero Probe is on or named")
	}
	f := p.Unmetered()
	if p.On() && p.Begin(&f) || f != 0 {
		t.Fatal("a zero Probe began a firing")
	}
	p.End(&f) // the call exit's end must not panic
}

var exits [1]Probe

// The generated code's exits, the test and the call, and its deferred End
// each end the firing that On and Begin began.
func TestEachExitEndsTheFiring(t *testing.T) {
	Register(exits[:], "example.com/app.exits")
	deferred := func() {
		f := exits[0].Unmetered()
		if exits[0].On() && exits[0].Begin(&f) {
			defer exits[0].End(&f)
		}
		if f == 0 {
			t.Fatal("deferred firing not metered")
		}
	}
	for i := 0; i < 12; i++ {
		if i%3 == 2 {
			deferred()
			if d := exits[0].m.Metered(); d != int64(i+1) {
				t.Fatalf("after %d firings, %d ended", i+1, d)
			}
			continue
		}
		f := exits[0].Unmetered()
		if metered := exits[0].On() && exits[0].Begin(&f); !metered || f == 0 {
			t.Fatalf("firing %d not metered (Begin said %v)", i, metered)
		}
		if i%3 == 0 {
			_ = f != 0 && exits[0].End(&f)
		} else {
			exits[0].End(&f)
		}
		if d := exits[0].m.Metered(); d != int64(i+1) {
			t.Fatalf("after %d firings, %d ended", i+1, d)
		}
	}
}

var nested [2]Probe

// Two firings begun in one function, one inside the other, are both
// metered, in every build (under -race Begin is not inlined).
func TestNestedFiringsInOneFunction(t *testing.T) {
	Register(nested[:], "example.com/app.outer", "example.com/app.inner")
	for i := 0; i < 10; i++ {
		f := nested[0].Unmetered()
		_ = nested[0].On() && nested[0].Begin(&f)
		g := nested[1].Unmetered()
		_ = nested[1].On() && nested[1].Begin(&g)
		_ = g != 0 && nested[1].End(&g)
		_ = f != 0 && nested[0].End(&f)
	}
	if a, b := nested[0].m.Metered(), nested[1].m.Metered(); a != 10 || b != 10 {
		t.Fatalf("outer metered %d, inner %d; want 10 and 10", a, b)
	}
}

var defers [2]Probe

//go:noinline
func add(n *int, d int) { *n += d }

// deferShaped has the shape meterinject gives a function with a defer of
// its own: End deferred for a firing that Begin says has one to do. The
// compiler open-codes both defers.
//
//go:noinline
func deferShaped(n *int) {
	f := defers[0].Unmetered()
	if defers[0].On() && defers[0].Begin(&f) {
		defer defers[0].End(&f)
	}
	defer add(n, 1)
}

//go:noinline
func deferShapedPlain(n *int) {
	defer add(n, 1)
}

// deferLooping has the same shape in a function that defers in a loop:
// the compiler open-codes none of its defers, and the runtime allocates
// those in the loop.
//
//go:noinline
func deferLooping(n *int) {
	f := defers[1].Unmetered()
	if defers[1].On() && defers[1].Begin(&f) {
		defer defers[1].End(&f)
	}
	for i := 0; i < 2; i++ {
		defer add(n, 1)
	}
}

//go:noinline
func deferLoopingPlain(n *int) {
	for i := 0; i < 2; i++ {
		defer add(n, 1)
	}
}

// The defer shape allocates nothing, metered or not: the firing's
// address, which the deferred End takes, stays on the stack, whether the
// compiler open-codes the defers or not. A function allocates what its
// plain twin does.
func TestDeferShapeAllocatesNothing(t *testing.T) {
	Register(defers[:], "example.com/app.deferShaped", "example.com/app.deferLooping")
	for i, c := range []struct {
		fn, plain func(*int)
		adds      int
	}{{deferShaped, deferShapedPlain, 1}, {deferLooping, deferLoopingPlain, 2}} {
		m := defers[i].m
		var n int
		plain := testing.AllocsPerRun(100, func() { c.plain(&n) })
		n = 0
		c.fn(&n) // the goroutine's frames, once
		metered := m.Metered()
		allocs := testing.AllocsPerRun(100, func() { c.fn(&n) }) // 101 calls
		if d := m.Metered() - metered; d != 101 {
			t.Fatalf("%s: %d firings of 101 metered", m.Name(), d)
		}
		if allocs != plain {
			t.Errorf("%s metered: %v allocations a call, plain %v", m.Name(), allocs, plain)
		}
		m.Disable(meter.DisabledHotspot)
		if allocs := testing.AllocsPerRun(100, func() { c.fn(&n) }); allocs != plain {
			t.Errorf("%s disabled: %v allocations a call, plain %v", m.Name(), allocs, plain)
		}
		if want := c.adds * 203; n != want {
			t.Fatalf("%s: its own defers ran %d times, want %d", m.Name(), n, want)
		}
	}
	if plain := testing.AllocsPerRun(100, func() { var n int; deferShapedPlain(&n) }); plain != 0 {
		t.Fatalf("an open-coded defer allocates %v times a call", plain)
	}
}

// A package's variable initialisers run before its init functions: one may
// start a goroutine that calls the package's instrumented functions while
// the generated init registers their probes. Such a firing sees the probe
// off, or sees it on and finds it whole: no nil engine probe, and under
// the race detector no race between Register's writes and the firing's
// reads.
func TestFiringWhileRegistering(t *testing.T) {
	var probes [8]Probe
	names := make([]string, len(probes))
	for i := range names {
		names[i] = fmt.Sprintf("example.com/early.f%d", i)
	}
	seen := make(chan struct{})
	go func() {
		defer close(seen)
		for on := 0; on < len(probes); {
			on = 0
			for i := range probes {
				p := &probes[i]
				if p.On() {
					on++
					f := p.Unmetered()
					if p.Begin(&f) {
						p.End(&f)
					}
				}
			}
		}
	}()
	Register(probes[:], names...)
	<-seen
}
