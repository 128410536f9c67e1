package meter

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// fireGated runs one firing of p as generated code does with its on-word:
// the test of probe.Probe.On, the tally counted there, then Begin where
// the word says so; its function takes cost ns.
func fireGated(p *Probe, gate *atomic.Uint32, cost int64) {
	if w := gate.Load(); w != 0 && (w == 1 || Tally(w)) {
		fire(p, cost, nil)
		return
	}
	clk.Advance(cost)
}

// newGated registers a probe with an on-word, as probe.Register does.
func newGated(t testing.TB, name string) (*Probe, *atomic.Uint32) {
	gate := new(atomic.Uint32)
	p := newProbe(t, name)
	p.SetGate(gate)
	return p, gate
}

// An untimed probe's on-word names its tally, and the firings counted
// there are in its count with those counted before; disabled, the word is
// 0; enabled again, 1; untimed again, the same tally.
func TestUntimedProbeCountsOnItsTally(t *testing.T) {
	if tallyBase == nil {
		t.Skip("no tallies on this platform")
	}
	wire(t, Chain{})
	p, gate := newGated(t, "call")
	for range 10 {
		fireGated(p, gate, 1*us)
	}
	if w := gate.Load(); w != 1 {
		t.Fatalf("metered: on-word %d, want 1", w)
	}
	if !p.setState(Enabled, Untimed) {
		t.Fatal("not untimed")
	}
	w := gate.Load()
	if w < firstTallyOn || w != p.tally.Load() {
		t.Fatalf("untimed: on-word %d, tally %d", w, p.tally.Load())
	}
	for range 1000 {
		fireGated(p, gate, 1*us)
	}
	if n := p.Calls(); n != 1010 {
		t.Errorf("count %d, want 1010", n)
	}
	if n := p.tallied(); n != 1000 {
		t.Errorf("tally %d, want 1000", n)
	}
	if r := p.row(); r.Count != 1010 || r.Metered != 10 {
		t.Errorf("row: count %d metered %d, want 1010 and 10", r.Count, r.Metered)
	}
	p.Disable(DisabledHotspot)
	if w := gate.Load(); w != 0 {
		t.Errorf("disabled: on-word %d, want 0", w)
	}
	p.Enable()
	if w := gate.Load(); w != 1 {
		t.Errorf("enabled again: on-word %d, want 1", w)
	}
	if !p.setState(Enabled, Untimed) || gate.Load() != w {
		t.Errorf("untimed again: on-word %d, want its tally %d", gate.Load(), w)
	}
}

// Many goroutines, started and ended as they go, fire one untimed probe
// at once: its count is every firing, whichever counter each landed on,
// and a firing counted allocates nothing, its checkpoints included.
func TestTallyIsExactUnderChurn(t *testing.T) {
	if tallyBase == nil {
		t.Skip("no tallies on this platform")
	}
	wire(t, Chain{})
	p, gate := newGated(t, "call")
	if !p.setState(Enabled, Untimed) {
		t.Fatal("not untimed")
	}
	const waves, perWave, each = 8, 16, 3 * checkpointEvery / 2
	for range waves {
		var wg sync.WaitGroup
		for range perWave {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					fireGated(p, gate, 0)
					if i%4096 == 0 {
						runtime.Gosched()
					}
				}
			}()
		}
		wg.Wait()
	}
	if n, want := p.Calls(), int64(waves*perWave*each); n != want {
		t.Errorf("count %d, want %d", n, want)
	}
	if a := testing.AllocsPerRun(2*checkpointEvery, func() { fireGated(p, gate, 0) }); a != 0 {
		t.Errorf("%v allocations a firing", a)
	}
}

// With tallies, as with the P's countdown, every checkpointEvery-th
// firing of an untimed probe on one stack is a checkpoint: the innermost
// metered firing's stretch ends there. A loop of 1 µs untimed calls waits
// 30 ms once; its own time is its calls' time.
func TestTallyMakesCheckpoints(t *testing.T) {
	if tallyBase == nil {
		t.Skip("no tallies on this platform")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var left int
	wire(t, Chain{Descheduled: func() int { n := left; left = 0; return n }, RunWait: 4 * ms})
	loop := newProbe(t, "loop")
	call, gate := newGated(t, "call")
	if !call.setState(Enabled, Untimed) || gate.Load() < firstTallyOn {
		t.Fatal("call is not untimed with a tally")
	}
	const calls = 4 * checkpointEvery
	fire(loop, 0, func() {
		for i := range calls {
			if i == 2*checkpointEvery+100 {
				clk.Advance(30 * ms)
				left = 1
			}
			fireGated(call, gate, 1*us)
		}
	})
	checkRow(t, loop, 1, calls*us+30*ms, calls*us)
	if r := call.row(); r.Count != calls {
		t.Errorf("untimed calls counted %d, want %d", r.Count, calls)
	}
}

// Where tallies run out, an untimed probe counts on its P's slot: its
// on-word stays 1.
func TestNoTallyLeftCountsInBegin(t *testing.T) {
	wire(t, Chain{})
	saved := tallyNext.Load()
	tallyNext.Store(maxTallies)
	defer tallyNext.Store(saved)
	p, gate := newGated(t, "call")
	if !p.setState(Enabled, Untimed) {
		t.Fatal("not untimed")
	}
	if w := gate.Load(); w != 1 || p.tally.Load() != 0 {
		t.Fatalf("on-word %d, tally %d; want 1 and none", w, p.tally.Load())
	}
	for range 100 {
		fireGated(p, gate, 1*us)
	}
	if n := p.Calls(); n != 100 {
		t.Errorf("count %d, want 100", n)
	}
}
