package meter

import (
	"context"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meterio/meter/extensions/tracepoint"
)

// spawn runs body on a new goroutine and waits for it.
func spawn(body func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		body()
	}()
	<-done
}

// ended fires each probe once outside any trace, so that it may start a
// trace or a goroutine's part of one.
func ended(ps ...*Probe) {
	for _, p := range ps {
		fire(p, 0, nil)
	}
}

// A goroutine started inside a trace joins it: its first metered firing's
// parent is the span open at the go statement, not the one open when the
// goroutine first fires; its part comes before the root's, not final.
func TestJoinParentIsTheSpanOpenAtTheGoStatement(t *testing.T) {
	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: rec})
	root, a, b, child, leaf := newProbe(t, "root"), newProbe(t, "a"), newProbe(t, "b"), newProbe(t, "child"), newProbe(t, "leaf")
	ended(root, a, b, child, leaf)
	rec.parts = nil
	endedBefore, _ := traces()
	start, done := make(chan struct{}), make(chan struct{})
	fire(root, 1, func() {
		fire(a, 1, func() {
			go func() {
				defer close(done)
				<-start
				fire(child, 1, func() { fire(leaf, 1, nil) })
			}()
		})
		fire(b, 1, func() {
			close(start)
			<-done
		})
	})
	want := "[child:3<1 leaf:4<3 final=false truncated=false][root:0<-1 a:1<0 b:2<0 final=true truncated=false]"
	if got := rec.String(); got != want {
		t.Fatalf("parts %s\nwant %s", got, want)
	}
	if rec.parts[0].trace != rec.parts[1].trace {
		t.Fatalf("the goroutine's part is of trace %d, the root's of %d", rec.parts[0].trace, rec.parts[1].trace)
	}
	if n, _ := traces(); n != endedBefore+1 {
		t.Fatalf("%d traces ended, want %d: a joined goroutine's part is not a trace", n, endedBefore+1)
	}
}

// A goroutine whose first firing comes after the trace's root ended still
// joins, with the span open at its go statement as parent; its part comes
// after the root's, final and truncated, and the trace counts as
// truncated once.
func TestJoinAfterTheRootEnded(t *testing.T) {
	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: rec})
	root, child := newProbe(t, "root"), newProbe(t, "child")
	ended(root, child)
	rec.parts = nil
	_, truncBefore := traces()
	start, done := make(chan struct{}), make(chan struct{})
	fire(root, 1, func() {
		go func() {
			defer close(done)
			<-start
			fire(child, 1, nil)
			fire(child, 1, nil) // its part has ended: a trace of its own (sample 1)
		}()
	})
	close(start)
	<-done
	want := "[root:0<-1 final=true truncated=false][child:1<0 final=true truncated=true][child:0<-1 final=true truncated=false]"
	if got := rec.String(); got != want {
		t.Fatalf("parts %s\nwant %s", got, want)
	}
	if rec.parts[0].trace != rec.parts[1].trace || rec.parts[2].trace == rec.parts[0].trace {
		t.Fatalf("trace ids %d %d %d: want the first two equal, the third its own", rec.parts[0].trace, rec.parts[1].trace, rec.parts[2].trace)
	}
	if _, tr := traces(); tr != truncBefore+1 {
		t.Fatalf("%d truncated traces, want %d", tr, truncBefore+1)
	}
}

// Goroutines started by a goroutine that never fires a probe (a library's)
// carry the mark on: they join with the span open at the first go
// statement as parent.
func TestJoinThroughAnUninstrumentedGoroutine(t *testing.T) {
	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: rec})
	root, child := newProbe(t, "root"), newProbe(t, "child")
	ended(root, child)
	rec.parts = nil
	fire(root, 1, func() {
		var wg sync.WaitGroup
		spawn(func() { // errgroup's Go, say: no probe of its own
			for i := 0; i < 2; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					fire(child, 1, nil)
				}()
			}
		})
		wg.Wait()
	})
	got := rec.String()
	if n := strings.Count(got, "<0 final=false truncated=false]"); n != 2 || !strings.HasSuffix(got, "[root:0<-1 final=true truncated=false]") {
		t.Fatalf("parts %s: want two parts of child under root, then the root", got)
	}
}

// METER_TRACE_MAX caps the firings of the whole trace, across its
// goroutines; the trace counts as truncated.
func TestJoinTraceMaxIsForTheWholeTrace(t *testing.T) {
	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: rec, TraceMax: 4})
	root, child, leaf := newProbe(t, "root"), newProbe(t, "child"), newProbe(t, "leaf")
	ended(root, child, leaf)
	rec.parts = nil
	_, truncBefore := traces()
	fire(root, 1, func() {
		fire(leaf, 1, nil)
		spawn(func() {
			fire(child, 1, func() {
				for i := 0; i < 5; i++ {
					fire(leaf, 1, nil)
				}
			})
		})
		fire(leaf, 1, nil)
	})
	spans := 0
	for _, p := range rec.parts {
		spans += len(p.spans)
	}
	if spans != 4 {
		t.Fatalf("%d spans in %s, want 4 (METER_TRACE_MAX)", spans, rec)
	}
	if !rec.parts[0].truncated || !rec.parts[1].truncated {
		t.Fatalf("parts %s: want both truncated", rec)
	}
	if _, tr := traces(); tr != truncBefore+1 {
		t.Fatalf("%d truncated traces, want %d", tr, truncBefore+1)
	}
}

// A goroutine started outside any trace never joins one, nor does one
// started by a goroutine whose trace has a part of its own that ended.
func TestNoJoinOutsideTraces(t *testing.T) {
	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1 << 20}, Sink: rec})
	root, child := newProbe(t, "root"), newProbe(t, "child")
	ended(root, child)
	for i := 0; i < 50; i++ {
		spawn(func() { fire(child, 1, nil) })
	}
	if len(rec.parts) != 0 {
		t.Fatalf("untraced goroutines handed over %s", rec)
	}
}

// A goroutine whose part does not end (a worker's loop that the request
// started) leaves the trace at its first hand-over after the trace's root
// ended: its part truncated, its open spans cut off; it then runs
// untraced.
func TestJoinedLoopLeavesAfterTheRoot(t *testing.T) {
	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1 << 20}, Sink: rec, HandOver: time.Second})
	root, loop, job := newProbe(t, "root"), newProbe(t, "loop"), newProbe(t, "job")
	ended(root, job)
	rec.parts = nil
	jobs, done := make(chan int64), make(chan struct{})
	root.count.reset(1, procSpread()) // this root's next firing starts a trace
	fire(root, 1, func() {
		go func() {
			defer close(done)
			fire(loop, 1, func() {
				for cost := range jobs {
					fire(job, cost, nil)
				}
			})
		}()
		jobs <- 1
	})
	jobs <- 1                             // the root has ended: not yet a hand-over
	jobs <- 2 * time.Second.Nanoseconds() // past the hand-over interval: the part ends
	jobs <- 1                             // untraced
	close(jobs)
	<-done
	want := "[root:0<-1 final=true truncated=false][loop:1<0! job:2<1 job:3<1 job:4<1 final=true truncated=true]"
	if got := rec.String(); got != want {
		t.Fatalf("parts %s\nwant %s", got, want)
	}
}

// The labels a goroutine carries inside a trace read, for the profiler,
// as the ones it had; after the trace it has the very pointer back, and a
// child that joined carries its creator's.
func TestMarksKeepTheProgramsLabels(t *testing.T) {
	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: rec})
	root, child := newProbe(t, "root"), newProbe(t, "child")
	ended(root, child)
	pprof.Do(context.Background(), pprof.Labels("user", "yes"), func(context.Context) {
		before := getProfLabel()
		var inTrace, inChild, childAfter []profLabel
		fire(root, 1, func() {
			if asMark(getProfLabel()) == nil {
				t.Errorf("no mark inside the trace")
			}
			inTrace = (*labelList)(getProfLabel()).list
			spawn(func() {
				fire(child, 1, func() { inChild = (*labelList)(getProfLabel()).list })
				childAfter = (*labelList)(getProfLabel()).list
				if asMark(getProfLabel()) != nil {
					t.Errorf("the child still carries a mark after its part")
				}
			})
		})
		if getProfLabel() != before {
			t.Errorf("labels after the trace are not the ones before")
		}
		for _, l := range [][]profLabel{inTrace, inChild, childAfter} {
			if len(l) != 1 || l[0] != (profLabel{"user", "yes"}) {
				t.Errorf("labels %v, want user=yes", l)
			}
		}
	})
}

// The layout the marks copy is runtime/pprof's.
func TestMarkLayout(t *testing.T) {
	defer pprof.SetGoroutineLabels(context.Background())
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("a", "1", "b", "2")))
	l := (*labelList)(getProfLabel()).list
	if len(l) != 2 || l[0] != (profLabel{"a", "1"}) || l[1] != (profLabel{"b", "2"}) {
		t.Fatalf("runtime/pprof's labels read as %v", l)
	}
	if asMark(getProfLabel()) != nil {
		t.Fatalf("a label set reads as a mark")
	}
}

// The blocks of marks that traces took come back to the pool once no
// goroutine reaches them: after a collection or two.
func TestJoinBlocksComeBack(t *testing.T) {
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: nopSink{}})
	root, child := newProbe(t, "root"), newProbe(t, "child")
	ended(root, child)
	traces := int(pooled.Load()) / 2 // a block for the root's part, one for the child's
	before, dry := blocksRecycled.Load(), unfollowed.Load()
	for i := 0; i < traces; i++ {
		fire(root, 1, func() { spawn(func() { fire(child, 1, nil) }) })
	}
	if n := unfollowed.Load() - dry; n != 0 {
		t.Fatalf("%d parts unfollowed with the pool full", n)
	}
	returnMarks()
	if n := blocksRecycled.Load() - before; n < int64(2*traces) {
		t.Fatalf("%d blocks came back of %d", n, 2*traces)
	}
}

// With the pool of marks dry, a trace start allocates nothing: its part
// is counted as unfollowed and the goroutines it starts do not join (at
// one in one, the child starts a trace of its own). Once the pool is
// filled again (by a refill, here by hand), twice as large as before it
// ran dry, they join again.
func TestDryPoolAllocatesNothing(t *testing.T) {
	// As if a refill ran already: none starts, and the pool stays dry.
	refilling.Store(true)
	defer refilling.Store(false)
	var held []*markBlock // taken, as traces still running would hold them
	drain := func() {
		for b := takeBlock(); b != nil; b = takeBlock() {
			held = append(held, b)
		}
	}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: nopSink{}})
	root, child := newProbe(t, "root"), newProbe(t, "child")
	ended(root, child)
	drain()
	for range sharedFirings { // past the firings whose statistics allocate their rows
		fire(root, 1, nil)
	}
	if n := allocsPerRun(1000, func() { fire(root, 1, nil) }); n != 0 {
		t.Fatalf("%v allocations per trace with the pool dry", n)
	}

	rec := &recorder{}
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: rec})
	want := poolWant.Load()
	drain()
	before := unfollowed.Load()
	fire(root, 1, func() { spawn(func() { fire(child, 1, nil) }) })
	if got := rec.String(); got != "[child:0<-1 final=true truncated=false][root:0<-1 final=true truncated=false]" || rec.parts[0].trace == rec.parts[1].trace {
		t.Fatalf("parts %s, want two traces", got)
	}
	if n := unfollowed.Load() - before; n != 2 {
		t.Fatalf("%d parts unfollowed, want 2 (the root's trace, the child's)", n)
	}
	fillPool()
	if w := poolWant.Load(); w != min(2*want, maxPool) {
		t.Fatalf("pool topped up to %d blocks, want %d", w, min(2*want, maxPool))
	}
	rec.parts = nil
	fire(root, 1, func() { spawn(func() { fire(child, 1, nil) }) })
	if got := rec.String(); got != "[child:1<0 final=false truncated=false][root:0<-1 final=true truncated=false]" {
		t.Fatalf("parts %s, want the child joined", got)
	}
	runtime.KeepAlive(held)
}

// A trace start that finds the pool of marks low starts a refill, which
// fills it to its size; one that finds it dry, to twice that.
func TestPoolRefills(t *testing.T) {
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1}, Sink: nopSink{}})
	want := poolWant.Load()
	var held []*markBlock
	for pooled.Load() >= want/4 {
		held = append(held, takeBlock())
	}
	waitRefill := func() {
		for refilling.Load() {
			runtime.Gosched()
		}
	}
	waitRefill()
	if n := pooled.Load(); n < want {
		t.Fatalf("%d blocks after a refill, want %d", n, want)
	}
	refilling.Store(true) // no refill while the pool is drained
	for b := takeBlock(); b != nil; b = takeBlock() {
		held = append(held, b)
	}
	refilling.Store(false)
	takeBlock() // finds it dry
	waitRefill()
	if w, n := poolWant.Load(), pooled.Load(); w != min(2*want, maxPool) || n < w {
		t.Fatalf("pool of %d blocks, size %d, want size %d", n, w, min(2*want, maxPool))
	}
	runtime.KeepAlive(held)
}

// A goroutine started outside any trace costs its first firing nothing
// in allocations: the engine's look at its labels allocates nothing, with
// tracepoint on. What starting a goroutine allocates is the same with the
// firing and without it, but for the engine's state of a g the runtime
// made new rather than reused (insert): once per g, a few in 500 runs
// at most where the runtime's own goroutines took the free gs. A firing
// that allocated one time in ten would still fail.
func TestNewGoroutineAllocatesNothing(t *testing.T) {
	wire(t, Chain{Tracepoint: &tracepoint.Rule{Sample: 1 << 20}, Sink: nopSink{}})
	p := newProbe(t, "p")
	ended(p)
	for i := 0; i < 300; i++ { // past the probe's first metered firings
		spawn(func() { fire(p, 1, nil) })
	}
	run := func(firing bool) func() {
		return func() {
			spawn(func() {
				if firing {
					fire(p, 1, nil)
				}
			})
		}
	}
	with, without := allocsPerRun(500, run(true)), allocsPerRun(500, run(false))
	if with > without+0.05 {
		t.Fatalf("a goroutine's first firing allocates: %v allocations with it, %v without", with, without)
	}
}

// returnMarks runs the collector until the blocks of marks that no
// goroutine reaches any more are back in the engine's pool, a few
// collections at most. A program's own collections give the blocks back.
func returnMarks() {
	last := blocksRecycled.Load()
	for quiet := 0; quiet < 3; {
		runtime.GC()
		for i := 0; i < 10; i++ {
			runtime.Gosched() // the finalizers run on a goroutine of their own
		}
		if n := blocksRecycled.Load(); n != last {
			last, quiet = n, 0
		} else {
			quiet++
		}
	}
}
