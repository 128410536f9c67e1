// Package fakeclock is a wall clock that tests move by hand: it stands in
// for the time package wherever the runtime takes its time as a Clock
// (export.Clock, the trace pipeline's), so that a test of a deadline, a
// back-off or a schedule waits for nothing and asserts exact times.
//
// Timers fire only in Advance, in the order of their deadlines, on the
// goroutine that calls Advance. WaitArmed lets a test wait until the code
// under test has armed its timers before it moves the time.
//
// It imports nothing of the project, so that any package's tests may use
// it. The tests of the otlp module use it too: an internal package is
// importable from every import path beneath the repository's root, and
// those tests always run against this repository's runtime (otlp's go.mod
// replaces it with ../). Nothing but tests may import it from another
// module.
package fakeclock

import (
	"slices"
	"sync"
	"time"
)

// Clock is a fake wall clock. Its zero value is not usable: call New.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*Timer
	changed chan struct{} // closed and replaced whenever a timer is armed or disarmed
}

// New returns a clock that reads start until it is advanced.
func New(start time.Time) *Clock {
	return &Clock{now: start, changed: make(chan struct{})}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms a timer that calls f once the clock has been advanced by
// d or more, as time.AfterFunc does.
func (c *Clock) AfterFunc(d time.Duration, f func()) interface {
	Reset(d time.Duration) bool
	Stop() bool
} {
	t := &Timer{c: c, f: f}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	t.Reset(d)
	return t
}

// Advance moves the clock on by d and fires, in the order of their
// deadlines, the timers that are due. A timer's function runs on the
// calling goroutine, with no lock held.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*Timer
	for _, t := range c.timers {
		if t.armed && !t.when.After(c.now) {
			t.armed = false
			due = append(due, t)
		}
	}
	slices.SortStableFunc(due, func(a, b *Timer) int { return a.when.Compare(b.when) })
	if len(due) > 0 {
		c.notify()
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

// Armed returns how many timers are armed.
func (c *Clock) Armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armed()
}

// WaitArmed waits until at least n timers are armed, or done is closed;
// it reports whether they are.
func (c *Clock) WaitArmed(n int, done <-chan struct{}) bool {
	for {
		c.mu.Lock()
		ok, changed := c.armed() >= n, c.changed
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}

func (c *Clock) armed() int {
	n := 0
	for _, t := range c.timers {
		if t.armed {
			n++
		}
	}
	return n
}

// notify wakes whoever waits for a change; c.mu is held.
func (c *Clock) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Timer is a timer of a Clock.
type Timer struct {
	c     *Clock
	f     func()
	when  time.Time
	armed bool
}

// Reset arms the timer to fire d from the clock's time now, and reports
// whether it was armed.
func (t *Timer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.when, t.armed = t.c.now.Add(d), true
	t.c.notify()
	return was
}

// Stop disarms the timer, and reports whether it was armed.
func (t *Timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.armed = false
	if was {
		t.c.notify()
	}
	return was
}
