package fakeclock

import (
	"testing"
	"time"
)

// TestTimers: timers fire in Advance once their deadline has come, in
// deadline order, and not again; Stop and Reset report whether they were
// armed.
func TestTimers(t *testing.T) {
	start := time.Unix(1000, 0)
	c := New(start)
	var fired []string
	a := c.AfterFunc(3*time.Second, func() { fired = append(fired, "a") })
	c.AfterFunc(2*time.Second, func() { fired = append(fired, "b") })
	s := c.AfterFunc(time.Second, func() { fired = append(fired, "stopped") })
	if !s.Stop() || s.Stop() {
		t.Error("Stop of an armed timer, then of a stopped one: want true, then false")
	}
	if c.Armed() != 2 {
		t.Errorf("%d timers armed, want 2", c.Armed())
	}
	c.Advance(time.Second + 999*time.Millisecond)
	if len(fired) != 0 {
		t.Errorf("fired %v before any deadline", fired)
	}
	c.Advance(2 * time.Second)
	if got := c.Now(); !got.Equal(start.Add(3*time.Second + 999*time.Millisecond)) {
		t.Errorf("Now = %v", got)
	}
	if len(fired) != 2 || fired[0] != "b" || fired[1] != "a" {
		t.Errorf("fired %v, want [b a]", fired)
	}
	c.Advance(time.Hour)
	if len(fired) != 2 {
		t.Errorf("fired %v: a timer fired twice", fired)
	}
	if a.Reset(time.Second) {
		t.Error("Reset of a timer that fired reports it armed")
	}
	c.Advance(time.Second)
	if len(fired) != 3 || fired[2] != "a" {
		t.Errorf("fired %v after Reset", fired)
	}
}

// TestWaitArmed: WaitArmed returns once another goroutine arms a timer,
// and gives up when done is closed.
func TestWaitArmed(t *testing.T) {
	c := New(time.Time{})
	go c.AfterFunc(time.Second, func() {})
	if !c.WaitArmed(1, nil) {
		t.Fatal("WaitArmed gave up with no done channel")
	}
	done := make(chan struct{})
	close(done)
	if c.WaitArmed(2, done) {
		t.Error("WaitArmed(2) with one timer armed reports true")
	}
}
