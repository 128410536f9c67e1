package meter

import "sync/atomic"

// Stretches. A metered firing's own time is measured in stretches: from
// its start to its first metered child's, between its metered children,
// and from its last child's end to its own end. A goroutine that waits (on
// a channel, a lock, a timer, the network) is off the CPU, and a CPU
// profile charges nothing to the function it waits in: so a stretch in
// which the goroutine parked to wait (wait_amd64.go) is left out of the
// firing's own time. One in which the scheduler took the goroutine off its
// P without parking it (its time slice ran out) is charged its wall time
// left out too if short, else charged less its waits in the run queue
// (sched.go).
// Inclusive time stays the wall time, waits included: a request's latency.
//
// What a stretch left out costs: the CPU time it did hold, its part before
// the wait and after. A firing's stretches left out for a wait are summed
// (Frame.waited) into its probe's waited time, which the model reports
// (Row.Waited): a function whose own time is mostly in such stretches (it
// computes, waits, and computes again without a timed call in between)
// shows less own time than a CPU profile gives it, and the row says how
// much wall time it left out.

// disturbed counts stretches left out: the goroutine parked to wait in
// them.
var disturbed atomic.Int64

// openStretch begins a stretch of f at tick t. The running goroutine must
// be f's.
func (f *Frame) openStretch(t int64) {
	f.mark, f.child = t, 0
	f.left, _ = engine.marks()
}

// closeStretch ends f's current stretch at tick t and begins the next: the
// stretch's time, less what was charged to it, goes to f's own time unless
// the goroutine parked to wait in it. The running goroutine must be f's.
func (f *Frame) closeStretch(t int64) {
	left, reason := engine.marks()
	switch n := engine.descheduled(f.left, left); {
	case engine.waited(reason):
		disturbed.Add(1)
		f.waited += nanos(f.mark, t)
	case n > 0:
		l := nanos(f.mark, t)
		switch {
		case l >= longStretch && engine.assisted(reason) && l > int64(n)*maskedGap:
			// A wait the collector's assist wrote over: mostly waiting,
			// by its length.
			disturbed.Add(1)
			f.waited += l
		case l >= longStretch:
			w := runWait(t)
			descheduled.Add(1)
			f.own += max(l-int64(leftTimes(l, n, w))*w-f.child, 0)
		default:
			descheduled.Add(1)
		}
	default:
		f.own += nanos(f.mark, t) - f.child
	}
	f.mark, f.child = t, 0
	f.left = left
}

// marks reads the process's goroutine (wait_amd64.go): its count of
// leaving the running state and its wait reason since the last marks;
// with a manual clock, nothing (the test's chain says what happened).
func (e *engineState) marks() (left, reason uint8) {
	if e.manual == nil {
		return marks()
	}
	return 0, 0
}

// descheduled returns how many times the running goroutine left the
// running state between two marks, without counting a park.
func (e *engineState) descheduled(before, now uint8) int {
	if e.manual == nil {
		return int(now - before)
	}
	if e.desched == nil {
		return 0
	}
	return e.desched()
}

// assisted reports whether reason, read by marks, is the collector's
// assist, which the runtime writes while the goroutine works, over
// whatever reason came before it in the stretch.
func (e *engineState) assisted(reason uint8) bool {
	return e.manual == nil && reason != 0 && reason == assistReason
}

// waited reports whether reason, read by marks, says the goroutine parked
// to wait.
func (e *engineState) waited(reason uint8) bool {
	if e.manual == nil {
		return isWaitReason(reason)
	}
	return e.parked != nil && e.parked()
}
