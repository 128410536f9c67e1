package meter

import "testing"

// A firing still open shows the own time of its stretches that closed, in
// whole units, and its inclusive time up to now; its End takes them back
// and records the whole call once.
func TestOpenFiringShowsItsTime(t *testing.T) {
	wire(t, Chain{})
	loop, work := newProbe(t, "loop"), newProbe(t, "work")
	f := loop.Begin()
	for range 5 {
		clk.Advance(400 * us) // loop's own, closed at work's Begin
		fire(work, 100*us, nil)
	}
	clk.Advance(300 * us) // its current stretch: not shown
	r := loop.row()
	if r.Count != 1 || r.Open != 1 || r.InherentTotal != 2*ms || r.Total != 2800*us {
		t.Fatalf("open: count %d open %d inherent %d total %d; want 1, 1, 2 ms (of 2 ms closed), 2.8 ms (up to now)", r.Count, r.Open, r.InherentTotal, r.Total)
	}
	if s := Take(); s.Rows[indexOfRow(s.Rows, loop.Name())].Open != 1 {
		t.Fatal("the snapshot's row lost its open call")
	}
	loop.End(&f)
	checkRow(t, loop, 1, 2800*us, 2300*us)
	checkRow(t, work, 5, 500*us, 500*us)
	if r := loop.row(); r.Open != 0 || loop.open.own.Load() != 0 || loop.open.calls.Load() != 0 || loop.open.start.Load() != 0 {
		t.Fatalf("after End: open %d, sums %d %d %d", r.Open, loop.open.own.Load(), loop.open.calls.Load(), loop.open.start.Load())
	}
}

// A firing open on a goroutine that ended without its End (its g reused
// by the next goroutine) is dropped with what it showed.
func TestDroppedOpenFiringShowsNothing(t *testing.T) {
	wire(t, Chain{})
	loop, work := newProbe(t, "loop"), newProbe(t, "work")
	f := loop.Begin()
	clk.Advance(1500 * us)
	fire(work, 100*us, nil)
	if r := loop.row(); r.InherentTotal != 1*ms {
		t.Fatalf("open: inherent %d; want 1 ms", r.InherentTotal)
	}
	g := current()
	g.unwind()
	if r := loop.row(); r.Open != 0 || r.InherentTotal != 0 || loop.open.calls.Load() != 0 {
		t.Fatalf("dropped: open %d inherent %d calls %d; want none", r.Open, r.InherentTotal, loop.open.calls.Load())
	}
	loop.End(&f) // dropped already: nothing
	checkRow(t, loop, 1, 0, 0)
}

func indexOfRow(rows []Row, name string) int {
	for i, r := range rows {
		if r.Probe == name {
			return i
		}
	}
	return -1
}
