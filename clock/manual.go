package clock

import "sync/atomic"

// Manual is a clock that moves only when told to: its ticks are
// nanoseconds. Tests hand one to the engine (meter.Chain.Clock) so that
// every time the model holds is known in advance. Its methods are safe to
// call from any goroutine.
type Manual struct{ t atomic.Int64 }

// NewManual returns a manual clock at zero.
func NewManual() *Manual { return &Manual{} }

// Now returns the clock's reading.
func (m *Manual) Now() int64 { return m.t.Load() }

// Advance moves the clock forward by ns nanoseconds.
func (m *Manual) Advance(ns int64) { m.t.Add(ns) }

// Set sets the clock to ns.
func (m *Manual) Set(ns int64) { m.t.Store(ns) }
