package meter

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meterio/meter/clock"
)

// fixture registers fresh probes under names unique to the test.
type fixture struct {
	gates  []atomic.Uint32
	probes []*Probe
}

func newFixture(t testing.TB, names ...string) *fixture {
	f := &fixture{gates: make([]atomic.Uint32, len(names))}
	for i, n := range names {
		f.probes = append(f.probes, NewProbe(t.Name()+"."+n, &f.gates[i]))
	}
	return f
}

// fire runs one firing of probe i the way generated code does, with body
// inside it.
func (f *fixture) fire(i int, body func()) {
	if f.gates[i].Load() != 0 {
		defer f.probes[i].Begin().End()
	}
	body()
}

// rowOf takes a snapshot and returns p's row in it.
func rowOf(p *Probe) Row {
	Take()
	return p.row()
}

func configure(t testing.TB, c Chain) {
	c.Enabled = true
	Configure(c)
	t.Cleanup(func() { Configure(Chain{Enabled: true}) })
}

func TestInherentTimeOfNestedCalls(t *testing.T) {
	man := clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "root", "a", "b")
	// root: 5 µs of its own, a (3 µs own + b twice of 2 µs), then b (2 µs).
	f.fire(0, func() {
		man.Advance(5_000)
		f.fire(1, func() {
			man.Advance(3_000)
			f.fire(2, func() { man.Advance(2_000) })
			f.fire(2, func() { man.Advance(2_000) })
		})
		f.fire(2, func() { man.Advance(2_000) })
	})
	want := map[string]Row{
		"root": {Count: 1, Total: 14_000, InherentTotal: 5_000, Min: 14_000, Max: 14_000},
		"a":    {Count: 1, Total: 7_000, InherentTotal: 3_000, Min: 7_000, Max: 7_000},
		"b":    {Count: 3, Total: 6_000, InherentTotal: 6_000, Min: 2_000, Max: 2_000},
	}
	for i, name := range []string{"root", "a", "b"} {
		got := rowOf(f.probes[i])
		w := want[name]
		if got.Count != w.Count || got.Total != w.Total || got.InherentTotal != w.InherentTotal || got.Min != w.Min || got.Max != w.Max {
			t.Errorf("%s: got %+v, want %+v", name, got, w)
		}
	}
	if d := current().Depth(); d != 0 {
		t.Fatalf("stack depth after the calls = %d, want 0", d)
	}
}

func TestUnmeteredFiringsAreNotParents(t *testing.T) {
	man := clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "root", "off", "leaf")
	f.probes[1].Disable(DisabledHotspot)
	f.fire(0, func() {
		f.fire(1, func() { // disabled: its leaf's time is the root's child time
			man.Advance(1_000)
			f.fire(2, func() { man.Advance(4_000) })
		})
	})
	if r := rowOf(f.probes[0]); r.Total != 5_000 || r.InherentTotal != 1_000 {
		t.Fatalf("root = %+v, want total 5000 inherent 1000", r)
	}
	if r := rowOf(f.probes[1]); r.Count != 0 || r.Label != LabelDisabled {
		t.Fatalf("disabled probe = %+v, want no count and label disabled", r)
	}
	if f.gates[1].Load() != 0 {
		t.Fatal("Disable left the gate word set")
	}
}

func TestPanicsAndGoexitUnwindThroughProbes(t *testing.T) {
	man := clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "outer", "middle", "inner")
	recovered := func() (r any) {
		defer func() { r = recover() }()
		f.fire(0, func() {
			man.Advance(1_000)
			f.fire(1, func() {
				f.fire(2, func() { man.Advance(500); panic("boom") })
			})
		})
		return nil
	}()
	if recovered != "boom" {
		t.Fatalf("recovered %v", recovered)
	}
	if d := current().Depth(); d != 0 {
		t.Fatalf("depth after a recovered panic = %d, want 0", d)
	}
	for i, want := range []int64{1_500, 500, 500} {
		if r := rowOf(f.probes[i]); r.Count != 1 || r.Total != want {
			t.Errorf("probe %d after panic: %+v, want count 1 total %d", i, r, want)
		}
	}

	done := make(chan int)
	go func() {
		defer func() { done <- current().Depth() }()
		f.fire(0, func() { f.fire(1, func() { runtime.Goexit() }) })
	}()
	if d := <-done; d != 0 {
		t.Fatalf("depth after Goexit = %d, want 0", d)
	}
	if c := f.probes[1].Count(); c != 2 {
		t.Fatalf("middle count after Goexit = %d, want 2", c)
	}
}

// TestManyGoroutines runs 64 goroutines that nest probes, churn through
// short-lived goroutines, panic and Goexit, and checks the exact counts.
func TestManyGoroutines(t *testing.T) {
	clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "worker", "step", "leaf")
	const workers, rounds = 64, 200
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				f.fire(0, func() {
					f.fire(1, func() { f.fire(2, func() {}) })
					var inner sync.WaitGroup
					inner.Add(1)
					go func() { // churn: a goroutine that lives for one firing
						defer inner.Done()
						switch r % 3 {
						case 0:
							f.fire(2, func() {})
						case 1:
							defer func() { recover() }()
							f.fire(2, func() { panic(r) })
						case 2:
							f.fire(2, func() { runtime.Goexit() })
						}
					}()
					inner.Wait()
				})
			}
		}()
	}
	wg.Wait()
	for i, want := range []int64{workers * rounds, workers * rounds, 2 * workers * rounds} {
		if c := f.probes[i].Count(); c != want {
			t.Errorf("probe %d count = %d, want %d", i, c, want)
		}
	}
}

func TestGoroutineStateIsBoundedUnderChurn(t *testing.T) {
	clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "short")
	before := Goroutines()
	const total, live = 200_000, 32
	sem := make(chan struct{}, live)
	var wg sync.WaitGroup
	for i := 0; i < total; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f.fire(0, func() {})
		}()
	}
	wg.Wait()
	if c := f.probes[0].Count(); c != total {
		t.Fatalf("count = %d, want %d", c, total)
	}
	// States follow runtime gs, which the runtime reuses: far fewer than
	// the goroutines started.
	if grew := Goroutines() - before; grew > 10*live+runtime.GOMAXPROCS(0)*64 {
		t.Fatalf("%d goroutine states for %d goroutines, at most %d alive at once", grew, total, live)
	}
}

func TestSnapshotRowsAreConsistent(t *testing.T) {
	clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "p")
	p := f.probes[0]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					p.record(1_000, 400) // every firing: 1 µs inclusive, 0.4 µs inherent
				}
			}
		}()
	}
	for i := 0; i < 200; i++ {
		r := rowOf(p)
		if r.Total != 1_000*r.Count || r.InherentTotal != 400*r.Count {
			close(stop)
			wg.Wait()
			t.Fatalf("torn row: %+v", r)
		}
	}
	close(stop)
	wg.Wait()
}

func TestTakeSortsAndLabels(t *testing.T) {
	clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "small", "big", "never", "off")
	f.probes[0].record(10, 10)
	f.probes[1].record(100, 90)
	f.probes[3].Disable(DisabledBudget)
	s := Take()
	var names []string
	for _, r := range s.Rows {
		if len(r.Probe) > len(t.Name()) && r.Probe[:len(t.Name())] == t.Name() {
			names = append(names, r.Probe[len(t.Name())+1:]+":"+r.Label)
		}
	}
	if got, want := fmt.Sprint(names), "[big: small: off:budget]"; got != want {
		t.Fatalf("rows = %s, want %s", got, want)
	}
}

func TestDisabledEngineMetersNothing(t *testing.T) {
	clock.UseManual()
	Configure(Chain{Enabled: false})
	t.Cleanup(func() { Configure(Chain{Enabled: true}) })
	f := newFixture(t, "p")
	if f.gates[0].Load() != 0 {
		t.Fatal("a probe registered while metering is off has its gate set")
	}
	if fr := f.probes[0].Begin(); fr.g != nil {
		t.Fatal("Begin metered with the engine off")
	}
}

func TestFiringsAllocateNothing(t *testing.T) {
	clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "metered", "disabled")
	f.probes[1].Disable(DisabledHotspot)
	work := func() {}
	f.fire(0, func() { f.fire(0, work) }) // grow the stack once
	cases := map[string]func(){
		"metered":  func() { f.fire(0, work) },
		"nested":   func() { f.fire(0, func() { f.fire(0, work) }) },
		"disabled": func() { f.fire(1, work) },
		"begin on a disabled probe": func() {
			f.probes[1].Begin().End()
		},
	}
	for name, fn := range cases {
		if a := testing.AllocsPerRun(1000, fn); a != 0 {
			t.Errorf("%s: %v allocations per firing, want 0", name, a)
		}
	}
}

// refuse is a gate that never starts a trace: outside traces nothing is
// metered.
type refuse struct{}

func (refuse) Start(*Goroutine, *Probe) bool { return false }
func (refuse) Ended(*Goroutine)              {}

func TestUnmeteredFiringAllocatesNothing(t *testing.T) {
	clock.UseManual()
	configure(t, Chain{Gates: []Gate{refuse{}}})
	f := newFixture(t, "gated")
	f.fire(0, func() {}) // the first firing marks the probe as having ended
	if !f.probes[0].ended.Load() {
		t.Fatal("an unmetered firing's end went unnoticed")
	}
	if a := testing.AllocsPerRun(1000, func() { f.fire(0, func() {}) }); a != 0 {
		t.Fatalf("%v allocations per unmetered firing, want 0", a)
	}
	if c := f.probes[0].Count(); c != 0 {
		t.Fatalf("gate refused every firing, yet count = %d", c)
	}
}

func TestEndTwiceAndLostEnd(t *testing.T) {
	man := clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "outer", "lost")
	outer := f.probes[0].Begin()
	man.Advance(100)
	_ = f.probes[1].Begin() // never ended: a manual caller forgot End
	man.Advance(100)
	outer.End()
	outer.End()
	if r := rowOf(f.probes[0]); r.Count != 1 || r.Total != 200 {
		t.Fatalf("outer = %+v, want one firing of 200 ns", r)
	}
	if d := current().Depth(); d != 0 {
		t.Fatalf("depth = %d, want 0", d)
	}
}

// always is a gate that starts a trace at every firing outside one.
type always struct{}

func (always) Start(*Goroutine, *Probe) bool { return true }
func (always) Ended(*Goroutine)              {}

// broke is an allowance of zero for every probe.
type broke struct{}

func (broke) Allowance(*Probe) int64 { return 0 }

func TestTraceNeedsItsRootMetered(t *testing.T) {
	clock.UseManual()
	configure(t, Chain{Gates: []Gate{always{}}, Allowance: broke{}})
	f := newFixture(t, "root")
	f.probes[0].ended.Store(true)
	fr := f.probes[0].Begin()
	if g := current(); g.InTrace() || fr.g != nil {
		t.Fatalf("a trace started with a root the budget refused (in trace %v)", g.InTrace())
	}
	fr.End()
}

func TestTraceEndsWithItsRoot(t *testing.T) {
	man := clock.UseManual()
	configure(t, Chain{Gates: []Gate{always{}}, TraceMax: 3})
	f := newFixture(t, "root", "child")
	f.probes[0].ended.Store(true)
	f.probes[1].ended.Store(true)
	before := tracesTruncated.Load()
	f.fire(0, func() {
		if !current().InTrace() {
			t.Fatal("root did not start a trace")
		}
		for i := 0; i < 5; i++ {
			f.fire(1, func() { man.Advance(1) })
		}
	})
	if current().InTrace() {
		t.Fatal("trace outlived its root")
	}
	if c := f.probes[1].Count(); c != 2 {
		t.Fatalf("child metered %d times in a trace of at most 3 firings, want 2", c)
	}
	if tracesTruncated.Load() != before+1 {
		t.Fatal("truncated trace not counted")
	}
}

// twin runs one firing of probe i the way a generated twin does: a metered
// firing calls the twin, which holds the defer and calls the function
// again after Reenter.
func (f *fixture) twin(i int, body func()) {
	if f.gates[i].Load() != 0 {
		if fr := f.probes[i].Begin(); fr.Active() {
			defer fr.End()
			fr.Reenter()
			f.twin(i, body)
			return
		}
	}
	body()
}

// counting starts a trace when told to, and counts the firings it is asked
// about.
type counting struct {
	start bool
	asked *int
}

func (c counting) Start(*Goroutine, *Probe) bool { *c.asked++; return c.start }
func (counting) Ended(*Goroutine)                {}

func TestTwinCallsBackOnce(t *testing.T) {
	man := clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "rec")
	// A recursive function: 5 µs of its own around one call of itself of 2 µs.
	f.twin(0, func() {
		man.Advance(5_000)
		f.twin(0, func() { man.Advance(2_000) })
	})
	got := rowOf(f.probes[0])
	if got.Count != 2 || got.Total != 9_000 || got.InherentTotal != 7_000 {
		t.Fatalf("got %+v, want 2 firings, 9 µs inclusive, 7 µs inherent", got)
	}
	if g := current(); g.Depth() != 0 || g.reenter != 0 {
		t.Fatalf("depth %d, reenter %v after the calls", g.Depth(), g.reenter)
	}
}

func TestTwinInATrace(t *testing.T) {
	clock.UseManual()
	asked := 0
	configure(t, Chain{Gates: []Gate{counting{true, &asked}}})
	f := newFixture(t, "root", "child")
	f.probes[0].ended.Store(true)
	f.probes[1].ended.Store(true)
	ended := tracesEnded.Load()
	f.twin(0, func() {
		if !current().InTrace() {
			t.Fatal("root did not start a trace")
		}
		f.twin(1, func() {})
		f.twin(0, func() {})
	})
	if asked != 1 || tracesEnded.Load() != ended+1 {
		t.Fatalf("gate asked %d times, %d traces ended; want 1 and 1", asked, tracesEnded.Load()-ended)
	}
	if a, b := f.probes[0].Count(), f.probes[1].Count(); a != 2 || b != 1 {
		t.Fatalf("counts root %d child %d, want 2 and 1", a, b)
	}
}

func TestTwinOfAFirstFiring(t *testing.T) {
	clock.UseManual()
	asked := 0
	configure(t, Chain{Gates: []Gate{counting{false, &asked}}})
	f := newFixture(t, "first")
	ran := 0
	f.twin(0, func() { ran++ })
	if ran != 1 || asked != 0 || !f.probes[0].ended.Load() || current().reenter != 0 {
		t.Fatalf("first firing: body ran %d times, gate asked %d times, ended %v, reenter %v",
			ran, asked, f.probes[0].ended.Load(), current().reenter)
	}
	f.twin(0, func() { ran++ })
	if ran != 2 || asked != 1 {
		t.Fatalf("second firing: body ran %d times in all, gate asked %d times; want 2 and 1", ran, asked)
	}
}

func TestUnusedReenterIsForgotten(t *testing.T) {
	clock.UseManual()
	configure(t, Chain{})
	f := newFixture(t, "p")
	fr := f.probes[0].Begin()
	fr.Reenter() // and the probe is switched off before the call back
	fr.End()
	f.fire(0, func() {})
	if c := f.probes[0].Count(); c != 2 {
		t.Fatalf("count %d, want 2: a Reenter that no Begin used swallowed a later firing", c)
	}
}
