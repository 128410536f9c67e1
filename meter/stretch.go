package meter

import "sync/atomic"

// Stretches. A metered firing's own time is measured in stretches: from
// its start to its first metered child's, between its metered children,
// and from its last child's end to its own end. A goroutine that waits (on
// a channel, a lock, a timer, the network) is off the CPU, and a CPU
// profile charges nothing to the function it waits in: so a stretch in
// which the goroutine parked to wait (wait_amd64.go) is left out of the
// firing's own time. One that the scheduler or the collector took off its
// P for a moment counts whole: it was on the CPU for the rest.
// Inclusive time stays the wall time, waits included: a request's latency.
//
// What a stretch left out costs: the CPU time it did hold, its part before
// the wait and after.

// disturbed counts stretches left out: the goroutine parked to wait in
// them.
var disturbed atomic.Int64

// openStretch begins a stretch of f at tick t. The running goroutine must
// be f's.
func (f *Frame) openStretch(t int64) {
	f.mark, f.child = t, 0
	engine.waitMark()
}

// closeStretch ends f's current stretch at tick t and begins the next: the
// stretch's time, less what was charged to it, goes to f's own time unless
// the goroutine parked to wait in it. The running goroutine must be f's.
func (f *Frame) closeStretch(t int64) {
	if engine.waited() {
		disturbed.Add(1)
	} else {
		f.own += nanos(f.mark, t) - f.child
	}
	f.mark, f.child = t, 0
	engine.waitMark()
}

// waitMark and waited read the process's goroutine (wait_amd64.go), or,
// with a manual clock, what a test's chain says.
func (e *engineState) waitMark() {
	if e.manual == nil {
		waitMark()
	}
}

func (e *engineState) waited() bool {
	if e.manual == nil {
		return waited()
	}
	return e.parked != nil && e.parked()
}
