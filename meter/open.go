package meter

import (
	"sync/atomic"
	"time"
)

// Firings still open. A firing's times reach its probe's row when it ends
// (end.go), so a function that runs for the life of the program (a
// worker's loop over a channel, a server's accept loop, a main that waits
// for a signal) would show none of its own time while a CPU profile of the
// same run charges it all it ran. So a firing shows its own time while it
// is open: where one of its stretches closes inside it (closeBetween, at a
// metered child's Begin or a checkpoint; woke, after a wait), what it holds
// of its own in whole units of shownUnit moves to its probe's open sums,
// which the model's rows add (Probe.openTimes). Its End, or the engine's
// dropping it (unwind), takes them back; the End then records the whole
// call as any other. What an open firing ran since its last stretch
// closed, less than a unit and its current stretch, is not shown.
const shownUnit = int64(time.Millisecond)

// openFirings are a probe's sums over its open firings that showed own
// time: each weighted by the calls the firing stands for (Frame.weight).
type openFirings struct {
	own   atomic.Int64 // ns of own time shown
	calls atomic.Int64 // the calls those firings stand for
	start atomic.Int64 // their starts, ns after openBase, each times its weight
}

// openBase is the tick from which open firings' starts are counted, so
// that the sums stay far from overflow whatever the clock's origin:
// Configure sets it, before any firing on its clock.
var (
	openBase  atomic.Int64
	openBased bool // set once
)

// show moves f's own time, in whole units, to its probe's open sums; f's
// stretch has just closed and f.own holds a unit or more. A spot check or
// a recheck stands for no call of its own and shows nothing.
func (f *Frame) show() {
	if f.weight <= 0 || f.how > meterForced {
		return
	}
	k := f.own / shownUnit
	f.own -= k * shownUnit
	w := int64(f.weight)
	p := &f.probe.open
	if f.shown == 0 {
		p.calls.Add(w)
		p.start.Add(w * nanos(openBase.Load(), f.start))
	}
	f.shown += uint32(k)
	p.own.Add(k * shownUnit * w)
}

// unshow takes back what f showed while open (show) and returns it, in ns
// of f's own time.
func (f *Frame) unshow() int64 {
	s := int64(f.shown) * shownUnit
	w := int64(f.weight)
	p := &f.probe.open
	p.own.Add(-s * w)
	p.calls.Add(-w)
	p.start.Add(-w * nanos(openBase.Load(), f.start))
	f.shown = 0
	return s
}

// openTimes returns the own and inclusive time, in ns, that p's open
// firings have shown up to now, and the calls they stand for.
func (p *Probe) openTimes() (own, incl, calls int64) {
	calls = p.open.calls.Load()
	if calls <= 0 {
		return 0, 0, 0
	}
	own = p.open.own.Load()
	incl = max(calls*nanos(openBase.Load(), now())-p.open.start.Load(), own)
	return own, incl, calls
}
