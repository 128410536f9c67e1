package meter

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/meterio/meter/clock"
)

const (
	us = 1000
	ms = 1000 * us
)

// clk is the manual clock of the chain the running test wired.
var clk *clock.Manual

// wire configures c, with a fresh manual clock, for the running test, and
// restores a bare chain after it.
func wire(t testing.TB, c Chain) {
	t.Helper()
	clk = clock.NewManual()
	c.Enabled, c.Clock = true, clk
	registry.Lock()
	registry.anyRoot = false // roots are the program's; each test starts with none
	registry.Unlock()
	Configure(c)
	t.Cleanup(func() { Configure(Chain{Enabled: true, Clock: clock.NewManual()}) })
}

var probeSeq atomic.Int64

// newProbe registers a probe under a name unique to the test.
func newProbe(t testing.TB, name string) *Probe {
	return NewProbe(fmt.Sprintf("%s.#%d.%s", t.Name(), probeSeq.Add(1), name), nil)
}

// fire runs one firing of p as generated code does, its function taking
// cost ns of its own around body.
func fire(p *Probe, cost int64, body func()) {
	f := p.Begin()
	clk.Advance(cost)
	if body != nil {
		body()
	}
	p.End(&f)
}

func checkRow(t *testing.T, p *Probe, count, total, inherent int64) {
	t.Helper()
	r := p.row()
	if r.Count != count || r.Total != total || r.InherentTotal != inherent {
		t.Errorf("%s: count %d total %d inherent %d; want %d, %d, %d", p.Name(), r.Count, r.Total, r.InherentTotal, count, total, inherent)
	}
}

func TestInherentTimeOfNestedCalls(t *testing.T) {
	wire(t, Chain{})
	root, a, b := newProbe(t, "root"), newProbe(t, "a"), newProbe(t, "b")
	// root: 5 µs of its own, a (3 µs own + b twice of 2 µs), then b (2 µs).
	fire(root, 5*us, func() {
		fire(a, 3*us, func() {
			fire(b, 2*us, nil)
			fire(b, 2*us, nil)
		})
		fire(b, 2*us, nil)
	})
	checkRow(t, root, 1, 14*us, 5*us)
	checkRow(t, a, 1, 7*us, 3*us)
	checkRow(t, b, 3, 6*us, 6*us)
	if r := b.row(); r.Min != 2*us || r.Max != 2*us || r.Metered != 3 {
		t.Errorf("b: min %d max %d metered %d", r.Min, r.Max, r.Metered)
	}
	if d := depthNow(); d != 0 {
		t.Fatalf("depth after the calls = %d, want 0", d)
	}
}

// refuse is a chain whose trace gate never opens: every firing outside a
// trace is left unmetered.
func TestUnmeteredFiringsAreNotParents(t *testing.T) {
	wire(t, Chain{})
	outer, mid, inner := newProbe(t, "outer"), newProbe(t, "mid"), newProbe(t, "inner")
	mid.Disable(DisabledHotspot)
	fire(outer, 1*us, func() {
		fire(mid, 2*us, func() { fire(inner, 4*us, nil) })
	})
	// mid is not metered: inner's time is charged to outer.
	checkRow(t, outer, 1, 7*us, 3*us)
	checkRow(t, inner, 1, 4*us, 4*us)
	if mid.Metered() != 0 {
		t.Fatalf("a disabled probe was metered")
	}
}

// A firing that a panic or runtime.Goexit unwinds never reaches its End:
// its parent's End (or the goroutine's next push) ends it as of its last
// timed child's end, counts it as unwound, and finds the stack as it
// should be.
func TestPanicsAndGoexitUnwindThroughProbes(t *testing.T) {
	wire(t, Chain{})
	outer, middle, inner := newProbe(t, "outer"), newProbe(t, "middle"), newProbe(t, "inner")
	fire(newProbe(t, "settle"), 0, nil) // drops what an earlier goroutine on this g left
	unwound0 := Take().Unwound
	recovered := func() (r any) {
		f := outer.Begin()
		defer func() { r = recover(); outer.End(&f) }() // outer has a defer: End deferred
		clk.Advance(1 * us)
		fire(middle, 0, func() {
			fire(inner, 500, func() { panic("boom") })
		})
		return nil
	}()
	if recovered != "boom" {
		t.Fatalf("recovered %v", recovered)
	}
	if d := depthNow(); d != 0 {
		t.Fatalf("depth after a recovered panic = %d, want 0", d)
	}
	// outer's End, deferred, runs in the panic: the panic has reached it,
	// and inner ends there, its 500 ns its own.
	checkRow(t, outer, 1, 1500, 1000)
	checkRow(t, middle, 1, 500, 0)
	checkRow(t, inner, 1, 500, 500)
	fire(outer, 0, func() {
		defer func() { recover() }()
		fire(middle, 300, func() {
			fire(inner, 200, nil)
			clk.Advance(50)
			panic("after inner")
		})
	})
	// outer's End comes after the recovery, with no Panicking in the
	// recover: middle's stretch before inner is its own, the one the panic
	// cut outer's.
	checkRow(t, middle, 2, 500+500, 300)
	checkRow(t, inner, 2, 500+200, 500+200)
	checkRow(t, outer, 2, 2050, 1000+50)

	// A recovered panic in a function with no probe: the goroutine's next
	// firing at the same depth ends what the panic left.
	for i := 0; i < 3; i++ {
		func() {
			defer func() { recover() }()
			fire(middle, 100, func() { panic(i) })
		}()
	}
	fire(middle, 100, nil)
	checkRow(t, middle, 6, 1000+100, 300+100) // six calls: the loop's end where they began, the last timed
	if d := depthNow(); d != 0 {
		t.Fatalf("depth after recovered panics = %d, want 0", d)
	}
	// middle and inner by outer's End, middle again by outer's next End,
	// then the three loop firings, each by the next firing at its depth.
	if n := Take().Unwound - unwound0; n != 6 {
		t.Fatalf("unwound firings = %d, want 6", n)
	}

	done := make(chan int)
	go func() {
		defer func() { done <- depthNow() }()
		fire(outer, 0, func() { fire(middle, 0, func() { runtime.Goexit() }) })
	}()
	if d := <-done; d != 2 {
		t.Fatalf("depth seen by a deferred call during Goexit = %d, want 2 (nothing ended)", d)
	}
	if c, n := middle.Calls(), middle.Metered(); c != 7 || n != 6 {
		t.Fatalf("middle after Goexit: %d calls, %d metered; want 7 and 6", c, n)
	}
}

// Where a function that recovers calls Panicking (generated code defers
// it first, so that it runs as the function returns), a firing the panic
// unwinds ends there: its work up to the panic, and the deferred call,
// which runs on top of its frame, are its own, as a CPU profile charges
// them; what follows (the runtime's recovery) is its parent's. Outside a
// panic, Panicking does nothing. A deferred End that a panic or Goexit runs
// is such a moment too.
func TestPanickingEndsTheUnwoundFiringWhereThePanicIsCaught(t *testing.T) {
	wire(t, Chain{})
	outer, middle, inner := newProbe(t, "outer"), newProbe(t, "middle"), newProbe(t, "inner")
	fire(newProbe(t, "settle"), 0, nil) // drops what an earlier goroutine on this g left
	fire(outer, 100, func() {
		defer func() {
			defer Panicking()
			clk.Advance(400) // the deferred call, on top of middle's frame
			recover()
		}()
		fire(middle, 300, func() {
			fire(inner, 200, nil)
			clk.Advance(50) // middle's own, up to the panic
			panic("caught")
		})
	})
	checkRow(t, middle, 1, 950, 750)
	checkRow(t, inner, 1, 200, 200)
	checkRow(t, outer, 1, 1050, 100)
	fire(middle, 100, func() {
		Panicking() // not panicking: the stretch goes on
		clk.Advance(50)
	})
	checkRow(t, middle, 2, 1100, 900)
	if d := depthNow(); d != 0 {
		t.Fatalf("depth after a caught panic = %d, want 0", d)
	}
	// A deferred End that runtime.Goexit runs: Goexit has reached its
	// function, and the firing it unwound ends there, its 250 ns its own.
	done := make(chan struct{})
	go func() {
		defer close(done)
		f := outer.Begin()
		defer outer.End(&f)
		fire(middle, 250, func() { runtime.Goexit() })
	}()
	<-done
	checkRow(t, middle, 3, 1350, 1150)
	checkRow(t, outer, 2, 1300, 100)
}

// The End of a firing below firings a panic unwound ends them first: their
// ends are the engine's work (verdicts, a metered firing's whole path),
// here the clock's advance in a stretch's close, timed and taken off the
// own and inclusive times of the firing that ends.
func TestUnwoundEndsAreNotTheirParentsTime(t *testing.T) {
	var working bool
	wire(t, Chain{Descheduled: func() int {
		if working {
			working = false
			clk.Advance(700) // the engine's work of ending inner
		}
		return 0
	}})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	fire(newProbe(t, "settle"), 0, nil)
	fo := outer.Begin()
	clk.Advance(200)
	fi := inner.Begin() // a panic unwinds it: no End
	clk.Advance(300)
	if fi == 0 {
		t.Fatal("inner not metered")
	}
	working = true
	outer.End(&fo)
	if working {
		t.Fatal("no stretch of inner closed in outer's End")
	}
	// inner ends as of its start, where its only stretch began: what it
	// ran is outer's.
	checkRow(t, inner, 1, 0, 0)
	checkRow(t, outer, 1, 500, 500)
}

// The word of the runtime's g that Panicking reads is nil outside a panic,
// and not nil in the deferred calls of a panic or of runtime.Goexit.
func TestPanickingSeesThePanic(t *testing.T) {
	word := func() unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Add(getgp(), gPanic)) }
	if !Supported {
		t.Skip("no g on this platform")
	}
	if w := word(); w != nil {
		t.Fatalf("_panic %p outside a panic", w)
	}
	func() {
		defer func() {
			if w := word(); w == nil {
				t.Errorf("_panic nil in a panic's deferred call")
			}
			recover()
		}()
		panic("seen")
	}()
	seen := make(chan unsafe.Pointer)
	go func() {
		defer func() { seen <- word() }()
		runtime.Goexit()
	}()
	if w := <-seen; w == nil {
		t.Fatalf("_panic nil in a deferred call of runtime.Goexit")
	}
	if w := word(); w != nil {
		t.Fatalf("_panic %p after a recovered panic", w)
	}
}

// A runtime g that a dead goroutine leaves with frames on it is reused by
// later goroutines: their firings start from an empty stack.
func TestReusedGoroutineStartsClean(t *testing.T) {
	if goidOffset == 0 {
		t.Skip("the goroutine id's place in g was not found") // the test of findGoid fails then
	}
	wire(t, Chain{})
	leak, p := newProbe(t, "leak"), newProbe(t, "p")
	for i := 0; i < 200; i++ {
		done := make(chan struct{})
		go func() {
			defer close(done)
			fire(leak, 0, func() { runtime.Goexit() })
		}()
		<-done
	}
	for i := 0; i < 200; i++ {
		done := make(chan int)
		go func() {
			fire(p, 10, nil)
			done <- depthNow()
		}()
		if d := <-done; d != 0 {
			t.Fatalf("a new goroutine found %d frames of a dead one", d)
		}
	}
	checkRow(t, p, 200, 2000, 2000)
}

func TestFindGoid(t *testing.T) {
	findGoid()
	if goidOffset == 0 {
		t.Fatalf("the goroutine id's place in the runtime's g was not found")
	}
	ids := make(chan [2]uint64)
	for i := 0; i < 5; i++ {
		go func() { ids <- [2]uint64{goid(), stackGoid()} }()
		if v := <-ids; v[0] != v[1] || v[0] == 0 {
			t.Fatalf("goid() = %d, runtime.Stack says %d", v[0], v[1])
		}
	}
}

// Two firings begun in one function, one inside the other (a probed
// function inlined into another shares its frame): the inner one does not
// drop the outer.
func TestNestedInOneFrame(t *testing.T) {
	wire(t, Chain{})
	a, b := newProbe(t, "a"), newProbe(t, "b")
	fa := a.Begin()
	clk.Advance(1 * us)
	fb := b.Begin()
	clk.Advance(2 * us)
	b.End(&fb)
	a.End(&fa)
	checkRow(t, a, 1, 3*us, 1*us)
	checkRow(t, b, 1, 2*us, 2*us)
}

// TestManyGoroutines runs 64 goroutines that nest probes, churn through
// short-lived goroutines, panic and Goexit, and checks the exact counts.
func TestManyGoroutines(t *testing.T) {
	wire(t, Chain{})
	worker, step, leaf := newProbe(t, "worker"), newProbe(t, "step"), newProbe(t, "leaf")
	const workers, rounds = 64, 200
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				fire(worker, 0, func() {
					fire(step, 0, func() { fire(leaf, 0, nil) })
					var inner sync.WaitGroup
					inner.Add(1)
					go func() { // churn: a goroutine that lives for one firing
						defer inner.Done()
						switch r % 3 {
						case 0:
							fire(leaf, 0, nil)
						case 1:
							defer func() { recover() }()
							fire(leaf, 0, func() { panic(r) })
						case 2:
							fire(leaf, 0, func() { runtime.Goexit() })
						}
					}()
					inner.Wait()
				})
			}
		}()
	}
	wg.Wait()
	// Of the churned firings, only the third that returned are counted.
	for p, want := range map[*Probe]int64{worker: workers * rounds, step: workers * rounds, leaf: workers*rounds + workers*(rounds/3+1)} {
		if c := p.Metered(); c != want {
			t.Errorf("%s count = %d, want %d", p.Name(), c, want)
		}
	}
}

func TestGoroutineStateIsBoundedUnderChurn(t *testing.T) {
	wire(t, Chain{})
	p := newProbe(t, "short")
	before := goroutineStates()
	const total, live = 100_000, 32
	sem := make(chan struct{}, live)
	var wg sync.WaitGroup
	for i := 0; i < total; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fire(p, 0, nil)
		}()
	}
	wg.Wait()
	if c := p.Metered(); c != total {
		t.Fatalf("count = %d, want %d", c, total)
	}
	// States follow runtime gs, which the runtime reuses: far fewer than
	// the goroutines started.
	if grew := goroutineStates() - before; grew > 10*live+runtime.GOMAXPROCS(0)*64 {
		t.Fatalf("%d goroutine states for %d goroutines, at most %d alive at once", grew, total, live)
	}
}

// Every row of a snapshot taken while firings are recorded holds whole
// firings: each firing here costs 3 µs, so a row's total is 3 µs times
// its count, in the shared row and in the per-P rows alike.
func TestSnapshotRowsAreConsistent(t *testing.T) {
	wire(t, Chain{})
	p := newProbe(t, "p")
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
				}
				p.stats.record(3*us, 3*us, 1)
			}
		}()
	}
	for n := int64(0); n < 100*sharedFirings; {
		r := p.row()
		if r.Total != 3*us*r.Metered || r.InherentTotal != 3*us*r.Metered {
			t.Fatalf("torn row: metered %d total %d inherent %d", r.Metered, r.Total, r.InherentTotal)
		}
		n = r.Metered
	}
	close(stop)
	wg.Wait()
	if p.stats.perP.Load() == nil {
		t.Fatalf("no per-P rows after %d firings", p.Metered())
	}
}

func TestTakeSortsAndLabels(t *testing.T) {
	wire(t, Chain{})
	small, big := newProbe(t, "small"), newProbe(t, "big")
	fire(small, 1*us, nil)
	fire(big, 9*us, nil)
	cold := newProbe(t, "cold")
	cold.Disable(DisabledBudget)
	s := Take()
	var order []string
	labels := map[string]string{}
	for _, r := range s.Rows {
		order = append(order, r.Probe)
		labels[r.Probe] = r.Label
	}
	if i, j := indexOf(order, big.Name()), indexOf(order, small.Name()); i < 0 || j < 0 || i > j {
		t.Fatalf("rows not sorted by inherent total: %v", order)
	}
	if labels[cold.Name()] != LabelBudget {
		t.Fatalf("a budget-disabled probe with no firing is labelled %q", labels[cold.Name()])
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestDisabledEngineMetersNothing(t *testing.T) {
	Configure(Chain{Enabled: false, Clock: clock.NewManual()})
	t.Cleanup(func() { Configure(Chain{Enabled: true, Clock: clock.NewManual()}) })
	var gate atomic.Uint32
	p := NewProbe(t.Name()+".p", &gate)
	if gate.Load() != 0 {
		t.Fatalf("gate set with the engine off")
	}
	if f := p.Begin(); f != 0 {
		t.Fatalf("Begin with the engine off = %v", f)
	}
}

func TestEndTwiceAndLostEnd(t *testing.T) {
	wire(t, Chain{})
	a, b := newProbe(t, "a"), newProbe(t, "b")
	fa := a.Begin()
	clk.Advance(1 * us)
	a.End(&fa)
	a.End(&fa) // twice: nothing
	checkRow(t, a, 1, 1*us, 1*us)
	// A manual caller that loses an End: the parent's End ends it as of
	// its last timed child's end, here its start.
	fa = a.Begin()
	func() { b.Begin() }() // deeper, never ended
	clk.Advance(1 * us)
	a.End(&fa)
	checkRow(t, a, 2, 2*us, 2*us)
	checkRow(t, b, 1, 0, 0)
	if d := depthNow(); d != 0 {
		t.Fatalf("depth = %d", d)
	}
}

// End ends a metered firing, and does nothing for a firing that is nil
// (the generated code's call exit calls it whatever the firing), even on
// a probe that was never made.
func TestEndOfMeteredAndNilFirings(t *testing.T) {
	wire(t, Chain{})
	p, q := newProbe(t, "p"), newProbe(t, "q")
	for i := 0; i < 3; i++ {
		f := p.Begin()
		clk.Advance(2 * us)
		g := q.Begin()
		clk.Advance(1 * us)
		q.End(&g)
		p.End(&f)
	}
	checkRow(t, p, 3, 9*us, 6*us)
	checkRow(t, q, 3, 3*us, 3*us)
	if d := depthNow(); d != 0 {
		t.Fatalf("depth = %d", d)
	}
	var none Firing
	p.End(&none)
	(*Probe)(nil).End(&none) // an unregistered probe's
	checkRow(t, p, 3, 9*us, 6*us)
	f := p.Begin()
	if n := testing.AllocsPerRun(1000, func() { p.End(&none) }); n != 0 {
		t.Errorf("End of a nil firing: %v allocations", n)
	}
	p.End(&f)
	if n := testing.AllocsPerRun(1000, func() { f := p.Begin(); clk.Advance(1); p.End(&f) }); n != 0 {
		t.Errorf("End of a metered firing: %v allocations", n)
	}
}

func TestFiringsAllocateNothing(t *testing.T) {
	wire(t, Chain{})
	p, q := newProbe(t, "p"), newProbe(t, "q")
	body := func() { fire(q, 1, nil) }
	fire(p, 1, body)
	if n := testing.AllocsPerRun(1000, func() { fire(p, 1, body) }); n != 0 {
		t.Errorf("metered firings: %v allocations", n)
	}
	q.Disable(DisabledHotspot)
	if n := testing.AllocsPerRun(1000, func() { fire(p, 1, body) }); n != 0 {
		t.Errorf("with a disabled child: %v allocations", n)
	}
}

// A stretch in which the scheduler took the goroutine off its P without
// parking it (its time slice ran out, with more goroutines ready than Ps)
// is left out of own time when short, as a parked one is; a long one is
// charged its wall time less a run-queue wait for each time. The inclusive
// time keeps the waits.
func TestRunQueueWaitsAreNotOwnTime(t *testing.T) {
	var left int
	var parked bool
	wire(t, Chain{
		Descheduled: func() int { n := left; left = 0; return n },
		Parked:      func() bool { p := parked; parked = false; return p },
		RunWait:     4 * ms,
	})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	before := Take().Descheduled
	fire(outer, 2*us, func() {
		clk.Advance(8 * us) // taken off its P once: a short stretch, left out
		left = 1
		fire(inner, 3*us, nil)
		clk.Advance(40 * ms) // 32 ms of work, and ready twice for 4 ms
		left = 2
		fire(inner, 3*us, nil)
		clk.Advance(6 * us) // parked, and counted as leaving: left out
		left, parked = 1, true
	})
	checkRow(t, outer, 1, 2*us+8*us+3*us+40*ms+3*us+6*us, 32*ms)
	checkRow(t, inner, 2, 6*us, 6*us)
	if d := Take().Descheduled - before; d != 2 {
		t.Fatalf("descheduled stretches %d, want 2", d)
	}
}

// A goroutine that left the running state once, to assist the collector
// (the runtime marks it waiting while it works on its system stack), ran
// throughout: the stretch is own time, short or long, between children or
// not. Left twice, one of them may have been a park or a wait in the run
// queue: the rules for a descheduled stretch hold.
func TestCollectorAssistIsOwnTime(t *testing.T) {
	var left int
	var worked bool
	wire(t, Chain{
		Descheduled: func() int { n := left; left = 0; return n },
		Worked:      func() bool { w := worked; worked = false; return w },
		RunWait:     4 * ms,
	})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	fire(outer, 2*us, func() {
		clk.Advance(8 * us) // the first stretch: assisted once
		left, worked = 1, true
		fire(inner, 3*us, nil)
		clk.Advance(5 * us) // between children, whole
		fire(inner, 3*us, nil)
		clk.Advance(30 * ms) // between children: assisted once, 30 ms
		left, worked = 1, true
		fire(inner, 3*us, nil)
		clk.Advance(7 * us) // the last: left twice, short: left out
		left, worked = 2, true
	})
	checkRow(t, outer, 1, 2*us+8*us+3*us+5*us+3*us+30*ms+3*us+7*us, 2*us+8*us+5*us+30*ms)
}

// A stretch between two metered children that was taken off its P is
// charged what the firing's stretches between children held where they
// ran whole, not its wall time less a mean run-queue wait: a loop around
// metered calls, whose goroutine waits its turn for tens of ms among
// busier ones, holds a few µs of its own between two calls, waits or not.
// The scheduler takes a goroutine off after so long running, so a longer
// stretch is taken off more often: the mean is weighted by length,
// Σown²/Σown, here (2² + 4²)/(2 + 4) µs, not 3. A stretch that does not
// lie between two metered children (the first, the last) holds other
// work, and keeps the rules above.
func TestDescheduledStretchChargedItsHistory(t *testing.T) {
	var left int
	wire(t, Chain{Descheduled: func() int { n := left; left = 0; return n }, RunWait: 4 * ms})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	fire(outer, 5*us, func() { // the first stretch: not between children
		fire(inner, 1*us, nil)
		clk.Advance(2 * us) // between, whole
		fire(inner, 1*us, nil)
		clk.Advance(4 * us) // between, whole: 3 µs a stretch
		fire(inner, 1*us, nil)
		clk.Advance(30 * ms) // between, taken off its P once: 3.333 µs
		left = 1
		fire(inner, 1*us, nil)
		clk.Advance(20 * ms) // the last, taken off twice: 20 ms less 2 waits
		left = 2
	})
	checkRow(t, outer, 1, 5*us+4*us+2*us+4*us+30*ms+20*ms, 5*us+2*us+4*us+3333+12*ms)
	checkRow(t, inner, 4, 4*us, 4*us)
}

// Where no goroutine waits to run, a goroutine taken off its P runs again
// at once: a long stretch between children (a phase of work between two
// calls of a loop, preempted at its time slices) is charged its wall time
// less its waits, not what the stretches around it hold.
func TestLongStretchOfAnIdleProgramChargedItsTime(t *testing.T) {
	var left int
	wire(t, Chain{Descheduled: func() int { n := left; left = 0; return n }, RunWait: 10 * us, Idle: true})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	fire(outer, 0, func() {
		fire(inner, 1*us, nil)
		clk.Advance(2 * us) // between, whole
		fire(inner, 1*us, nil)
		clk.Advance(100 * ms) // between, taken off its P 5 times
		left = 5
		fire(inner, 1*us, nil)
	})
	checkRow(t, outer, 1, 3*us+2*us+100*ms, 2*us+100*ms-5*10*us)
}

// A metered firing whose calls inside are all untimed ends its stretch at
// a checkpoint every checkpointEvery of their firings on a P, so that a
// wait in the run queue costs it one short stretch, charged what its
// stretches hold, not a long one charged from a mean wait. Here a loop of
// 1 µs untimed calls waits 30 ms once: its own time is its calls' time.
func TestCheckpointsKeepStretchesShort(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: one countdown
	var left int
	wire(t, Chain{Descheduled: func() int { n := left; left = 0; return n }, RunWait: 4 * ms})
	loop, call := newProbe(t, "loop"), newProbe(t, "call")
	if !call.setState(Enabled, Untimed) {
		t.Fatal("call is not untimed")
	}
	// Checkpoints at every checkpointEvery-th call (the countdown starts
	// full as the probe turns untimed): the wait falls in the third
	// stretch, after one between two checkpoints that ran whole.
	const calls = 4 * checkpointEvery
	fire(loop, 0, func() {
		for i := range calls {
			if i == 2*checkpointEvery+100 {
				clk.Advance(30 * ms)
				left = 1
			}
			fire(call, 1*us, nil)
		}
	})
	checkRow(t, loop, 1, calls*us+30*ms, calls*us)
	if r := call.row(); r.Count != calls {
		t.Errorf("untimed calls counted %d, want %d", r.Count, calls)
	}
}

// Where a stretch taken off its P held unmetered sampled children, what
// it ran is known: their mean own times (its child), and the firing's own
// time per ns of theirs in its stretches between children that ran whole.
func TestDescheduledStretchChargedByItsChildren(t *testing.T) {
	var left int
	wire(t, Chain{Descheduled: func() int { n := left; left = 0; return n }, RunWait: 4 * ms})
	f := &Frame{g: &Goroutine{}}
	stretch := func(start, end, children int64, times int) {
		f.openStretch(start, 0)
		f.base = 0         // began at a metered child's end, which cost nothing here
		f.child = children // what the leaf adds for unmetered sampled children
		left = times
		closeAt(f, end)
	}
	stretch(0, 10*us, 8*us, 0)            // whole: 2 µs own for 8 µs of children
	stretch(10*us, 10*us+30*ms, 16*us, 1) // taken off its P: 16 µs of children, so 4 µs own
	if f.own != 6*us {
		t.Fatalf("own %d ns, want %d", f.own, 6*us)
	}
	// Without that history, the rule of long stretches: 30 ms less a wait
	// and the children.
	f = &Frame{g: &Goroutine{}}
	stretch(0, 30*ms, 16*us, 1)
	if want := int64(30*ms - 4*ms - 16*us); f.own != want {
		t.Fatalf("own %d ns with no history, want %d", f.own, want)
	}
}

// A stretch of own time in which the goroutine parked to wait (a channel,
// a lock, the network) is left out of its firing's own time, as a CPU
// profile leaves the wait out; the firing's inclusive time keeps it, and so
// does the stretch of a child.
func TestWaitsAreNotOwnTime(t *testing.T) {
	var parked bool
	wire(t, Chain{Parked: func() bool { p := parked; parked = false; return p }})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	fire(outer, 1*us, func() {
		clk.Advance(5 * us) // waits, in outer's own code
		parked = true
		fire(inner, 2*us, nil)
		clk.Advance(3 * us) // works again
	})
	// outer: 1 + 5 µs before inner (a wait in it: left out), 3 µs after.
	checkRow(t, outer, 1, 11*us, 3*us)
	checkRow(t, inner, 1, 2*us, 2*us)
	s := Take()
	if s.Disturbed < 1 {
		t.Fatalf("disturbed stretches %d, want 1", s.Disturbed)
	}
	// The row says what it left out: the stretch's wall time, 6 µs.
	for _, r := range s.Rows {
		want := map[string]int64{outer.Name(): 6 * us, inner.Name(): 0}
		if w, ok := want[r.Probe]; ok && r.Waited != w {
			t.Errorf("%s waited %d ns, want %d", r.Probe, r.Waited, w)
		}
	}
}

// A stretch in which the goroutine waited in a system call (a read that
// blocks in the kernel, a cgo call) holds the wait in its wall time: timed
// by the wall clock, it is left out, and its probe's stretches are timed
// by the thread's CPU clock from its next metered firing on, which the
// wait does not advance. The caller's stretches, which held no call, stay
// on the wall clock. Without a CPU clock, such stretches are left out.
func TestSystemCallWaitsAreNotOwnTime(t *testing.T) {
	var sys bool
	cpu := int64(1_000_000) // the thread's CPU clock, ns
	wire(t, Chain{Syscalled: func() bool { s := sys; sys = false; return s }, ThreadCPU: func() int64 { return cpu }})
	outer, read := newProbe(t, "outer"), newProbe(t, "read")
	work := func(d int64) { clk.Advance(d); cpu += d }   // on the CPU
	wait := func(d int64) { clk.Advance(d); sys = true } // in a call, off it
	fire(outer, 0, func() {
		work(2 * us)
		fire(read, 0, func() { work(1 * us); wait(50 * us) }) // on the wall clock: left out
		fire(read, 0, func() { work(1 * us); wait(50 * us); work(1 * us) })
		work(3 * us)
	})
	checkRow(t, read, 2, 103*us, 2*us)
	checkRow(t, outer, 1, 108*us, 5*us)
	if !(read.cpuTimed.Load()&cpuSyscalls != 0) || (outer.cpuTimed.Load()&cpuSyscalls != 0) {
		t.Errorf("timed by the CPU clock: read %v, outer %v; want true, false", (read.cpuTimed.Load()&cpuSyscalls != 0), (outer.cpuTimed.Load()&cpuSyscalls != 0))
	}
	for _, r := range Take().Rows {
		if r.Probe == read.Name() && r.Waited != 51*us {
			t.Errorf("read waited %d ns, want %d (its first stretch)", r.Waited, 51*us)
		}
	}
	if n := testing.AllocsPerRun(100, func() { fire(read, 0, func() { work(1 * us); wait(5 * us) }) }); n != 0 {
		t.Errorf("a firing timed by the CPU clock: %v allocations", n)
	}
	// The firing that met the call times its next stretches by the CPU
	// clock as well: a loop that writes, called once.
	loop, child := newProbe(t, "loop"), newProbe(t, "child")
	fire(loop, 0, func() {
		work(1 * us)
		wait(20 * us) // left out
		fire(child, 0, func() { work(1 * us) })
		work(2 * us)
		wait(30 * us)
	})
	checkRow(t, loop, 1, 54*us, 2*us)
	checkRow(t, child, 1, 1*us, 1*us)
	// A stretch on the CPU clock that held no call returns the firing to
	// the wall clock (which counts the 4 µs the thread was off the CPU
	// without a call: the OS's, not the program's), and its probe's next
	// firing too.
	once := newProbe(t, "once")
	fire(once, 0, func() {
		wait(10 * us)                           // left out
		fire(child, 0, func() { work(1 * us) }) //
		clk.Advance(3 * us)                     // CPU clock: nothing
		fire(child, 0, func() { work(1 * us) }) //
		clk.Advance(4 * us)                     // wall clock: 4 µs
	})
	checkRow(t, once, 1, 19*us, 4*us)
	if once.cpuTimed.Load()&cpuSyscalls != 0 {
		t.Error("a firing whose last call was in its first stretch keeps its probe on the CPU clock")
	}

	wire(t, Chain{Syscalled: func() bool { s := sys; sys = false; return s }})
	read = newProbe(t, "read")
	for range 2 {
		fire(read, 0, func() { work(1 * us); wait(50 * us) })
	}
	checkRow(t, read, 2, 102*us, 0)
	if read.cpuTimed.Load()&cpuSyscalls != 0 {
		t.Error("timed by a CPU clock that is not there")
	}
}

// A wait of the function's own body, bracketed by Wait and Woke: where the
// goroutine parked in it, or was taken off its P in it, the wait is left
// out of own time, and the time before it and after it kept, where without
// the brackets the stretch would be left out whole; where it did not park,
// the stretch goes on, the wait's time its own. A metered child between
// the two (a select's operands) leaves the stretch to the rules of its
// close. Neither allocates.
func TestWaitsOfTheBodyAreLeftOut(t *testing.T) {
	var parked bool
	var left int
	wire(t, Chain{
		Parked:      func() bool { p := parked; parked = false; return p },
		Descheduled: func() int { n := left; left = 0; return n },
		RunWait:     1 * us,
	})
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	f := outer.Begin()
	clk.Advance(5 * us) // work
	outer.Wait(&f)
	clk.Advance(1 * ms) // parked
	parked = true
	outer.Woke(&f)
	clk.Advance(2 * us) // work
	outer.Wait(&f)
	clk.Advance(15 * ms) // yielded (an Unlock handing the lock over): ready, off the CPU
	left = 1
	outer.Woke(&f)
	clk.Advance(1 * us) // work
	outer.Wait(&f)
	clk.Advance(200) // a wait that did not park
	outer.Woke(&f)
	clk.Advance(2 * us) // work, up to a child: one stretch of 3.2 µs
	fire(inner, 1*us, nil)
	clk.Advance(4 * us)
	outer.Wait(&f)
	fire(inner, 1*us, nil) // a child inside the brackets
	clk.Advance(2 * ms)
	parked = true
	outer.Woke(&f) // the stretch since the child is left at its close
	clk.Advance(6 * us)
	outer.End(&f)
	checkRow(t, outer, 1, 5*us+1*ms+2*us+15*ms+1*us+200+2*us+1*us+4*us+1*us+2*ms+6*us, 5*us+2*us+1*us+200+2*us+4*us)
	for _, r := range Take().Rows {
		if r.Probe == outer.Name() && r.Waited != 1*ms+15*ms+2*ms+6*us {
			t.Errorf("outer waited %d ns, want %d", r.Waited, 1*ms+15*ms+2*ms+6*us)
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		f := outer.Begin()
		outer.Wait(&f)
		clk.Advance(1 * us)
		parked = true
		outer.Woke(&f)
		outer.End(&f)
	}); n != 0 {
		t.Errorf("a firing with a wait: %v allocations", n)
	}
}

// A mark after a go statement ends the firing's stretch there: the time
// spent starting goroutines is its own, and the wait for them that follows
// is left out alone, not with it.
func TestMarkAfterGoStatement(t *testing.T) {
	var parked bool
	wire(t, Chain{Parked: func() bool { p := parked; parked = false; return p }})
	p := newProbe(t, "spawner")
	f := p.Begin()
	clk.Advance(5 * us) // starts a goroutine
	p.Mark(&f)
	clk.Advance(20 * us) // waits for it
	parked = true
	p.End(&f)
	checkRow(t, p, 1, 25*us, 5*us)
	for _, r := range Take().Rows {
		if r.Probe == p.Name() && r.Waited != 20*us {
			t.Errorf("waited %d ns, want %d", r.Waited, 20*us)
		}
	}
	var none Firing
	p.Mark(&none) // not metered: nothing
	if n := testing.AllocsPerRun(100, func() { f := p.Begin(); p.Mark(&f); p.End(&f) }); n != 0 {
		t.Errorf("a metered firing with a mark: %v allocations", n)
	}
}

// A stretch of seconds may have left the running state 256 times or more,
// its count a byte: it is taken to have left it the least number of
// times, equal to the count modulo 256, whose charge fits in as many 20 ms
// time slices. 3 s, a count of 44 and a run-queue wait of 4 ms: 300
// times, 1.8 s charged.
func TestLongStretchCountWraps(t *testing.T) {
	var left int
	wire(t, Chain{Descheduled: func() int { n := left; left = 0; return n }, RunWait: 4 * ms})
	p := newProbe(t, "p")
	fire(p, 0, func() {
		clk.Advance(3000 * ms)
		left = 44
	})
	checkRow(t, p, 1, 3000*ms, 1800*ms)
	for _, c := range []struct {
		l    int64
		n    int
		w    int64
		want int
	}{
		{3000 * ms, 44, 4 * ms, 300},
		{3000 * ms, 200, 4 * ms, 200}, // 2.2 s in 201 slices of 20 ms: no wrap needed
		{2600 * ms, 1, 1 * ms, 257},
	} {
		if got := leftTimes(c.l, c.n, c.w); got != c.want {
			t.Errorf("leftTimes(%d, %d, %d) = %d, want %d", c.l, c.n, c.w, got, c.want)
		}
	}
}

// A stretch left out as a wait keeps, as own time, what the sampler saw
// the goroutine run in it (Goroutine.ran, sampler_linux.go), less what was
// charged to the stretch; clamped neither to the stretch's time nor at
// zero, so that over many stretches it is the CPU time they held. A bracketed wait keeps what the sampler saw
// since its Wait.
func TestLeftOutStretchKeepsWhatTheSamplerSaw(t *testing.T) {
	var parked bool
	wire(t, Chain{Parked: func() bool { p := parked; parked = false; return p }})
	samplerInterval.Store(1)
	defer samplerInterval.Store(0)
	outer, inner := newProbe(t, "outer"), newProbe(t, "inner")
	g := current()
	g.ran = 5 * ms // seen before the firing: not its own
	f := outer.Begin()
	clk.Advance(1 * ms) // computes, parks in a call without probes, computes
	g.ran += 30 * us
	parked = true
	fire(inner, 2*us, nil) // the stretch closes at the child: 30 µs kept
	clk.Advance(100 * us)  // parks; one look, a millisecond after the last, saw it run
	g.ran += 1 * ms
	parked = true
	fire(inner, 2*us, nil) // 1 ms kept: more than the stretch held
	clk.Advance(3 * us)    // work
	g.ran += 2 * us        // seen before the wait: the stretch's own, timed
	outer.Wait(&f)
	clk.Advance(400 * us) // the wait
	g.ran += 1 * us
	parked = true
	outer.Woke(&f) // 3 µs before the wait, 1 µs in it
	clk.Advance(6 * us)
	outer.End(&f)
	total := int64(1*ms) + 2*us + 100*us + 2*us + 3*us + 400*us + 6*us
	checkRow(t, outer, 1, total, 30*us+1*ms+3*us+1*us+6*us)
	for _, r := range Take().Rows {
		// What was not seen running is the wait: less than nothing in the
		// stretch that a look found, so that the sum is unbiased too.
		if want := int64(1*ms - 30*us + 100*us - 1*ms + 400*us - 1*us); r.Probe == outer.Name() && r.Waited != want {
			t.Errorf("outer waited %d ns, want %d", r.Waited, want)
		}
	}
	// A stretch that no look found gives back what its unmetered sampled
	// children were charged: their time is in the looks of other stretches.
	fr := &Frame{g: &Goroutine{}}
	fr.openStretch(0, 0)
	fr.child = 50 * us
	fr.leaveOut(1 * ms)
	if fr.own != -50*us || fr.waited != 1*ms {
		t.Errorf("a stretch no look found: own %d, waited %d; want %d, %d", fr.own, fr.waited, -50*us, 1*ms)
	}
	// Without the sampler a stretch left out keeps nothing, and gives
	// nothing back.
	samplerInterval.Store(0)
	fr = &Frame{g: &Goroutine{}}
	fr.openStretch(0, 0)
	fr.child = 50 * us
	fr.g.ran = 20 * us
	fr.leaveOut(1 * ms)
	if fr.own != 0 || fr.waited != 1*ms {
		t.Errorf("without the sampler: own %d, waited %d; want 0, %d", fr.own, fr.waited, 1*ms)
	}
}

// A stretch that the scheduler took the goroutine off its P in, with
// nothing to tell what it ran (the only stretch of its firing), keeps what
// the sampler saw it run there, short or long: a long one may be long for
// its wait alone (a call of a few µs preempted among busier goroutines, one
// P, waits tens of ms), and the mean run-queue wait of the moment is not
// its wait. Without the sampler, a short one keeps nothing and a long one
// its wall time less a run-queue wait for each time it left.
func TestDescheduledStretchKeepsWhatTheSamplerSaw(t *testing.T) {
	for _, c := range []struct {
		on        bool
		wall, ran int64
		want      int64
	}{
		{true, 1 * ms, 3 * us, 3 * us},
		{false, 1 * ms, 3 * us, 0},
		{true, 30 * ms, 5 * ms, 5 * ms},
		{false, 30 * ms, 5 * ms, 30*ms - 4*ms},
	} {
		t.Run(fmt.Sprintf("sampler=%v,wall=%dms", c.on, c.wall/ms), func(t *testing.T) {
			var left int
			wire(t, Chain{Descheduled: func() int { n := left; left = 0; return n }, RunWait: 4 * ms})
			if c.on {
				samplerInterval.Store(1)
			}
			defer samplerInterval.Store(0)
			p := newProbe(t, "preempted")
			f := p.Begin()
			clk.Advance(c.wall) // ran c.ran, waited its turn the rest
			current().ran += uint64(c.ran)
			left = 1
			p.End(&f)
			checkRow(t, p, 1, c.wall, c.want)
		})
	}
}

// A stretch left out in which unmetered sampled children ran keeps what
// the firing's stretches that ran whole say it runs per ns of theirs, not
// the sampler's looks: those would give it whatever the children's means
// miss. One without such children keeps the looks.
func TestLeftOutStretchWithSampledChildrenKeepsItsHistory(t *testing.T) {
	var parked bool
	wire(t, Chain{Parked: func() bool { p := parked; parked = false; return p }})
	samplerInterval.Store(1)
	defer samplerInterval.Store(0)
	f := &Frame{g: &Goroutine{}}
	stretch := func(start, end, children, ran int64, park bool) {
		f.openStretch(start, 0)
		f.base = 0         // began at a metered child's end, which cost nothing here
		f.child = children // what the leaf adds for unmetered sampled children
		f.g.ran = uint64(ran)
		parked = park
		closeAt(f, end)
	}
	stretch(0, 10*us, 8*us, 0, false)             // whole: 2 µs own for 8 µs of children
	stretch(10*us, 10*us+5*ms, 16*us, 1*ms, true) // parked: 16 µs of children, so 4 µs own
	if f.own != 6*us {
		t.Fatalf("own %d ns, want %d", f.own, 6*us)
	}
	stretch(10*us+5*ms, 10*us+9*ms, 0, 300*us, true) // parked, no children: what the looks saw
	if f.own != 306*us {
		t.Fatalf("own %d ns, want %d", f.own, 306*us)
	}
}

// closeAt ends f's stretch at tick t, with the manual chain's marks.
func closeAt(f *Frame, t int64) {
	left, reason, sys := engine.manualMarks()
	f.closeBetween(t, left, reason, sys)
}
