// Package flowcheck starts traces at random gaps in each goroutine's flow.
//
// Each goroutine has a countdown of firings outside traces, drawn as
// LOWER + a uniform random number in [0, UPPER−LOWER). Each firing outside
// a trace that the engine offers to the gates counts down; the firing that
// finds the countdown at zero starts a trace, and a new countdown is drawn
// when that trace ends. So the gap, the number of offered firings left
// unmetered between two traces of one goroutine, lies in [LOWER, UPPER):
// LOWER=250, UPPER=500 skips at least 250 flows, then starts somewhere in
// the next 250; UPPER = LOWER gives a fixed gap of LOWER (and 0 traces
// every offered firing).
//
// Cost: the countdown and the goroutine's random state live in the
// goroutine's two extension words (meter.Goroutine.Ext), which only that
// goroutine touches. The engine runs the countdown itself (flowcheck is a
// meter.Countdown), so a firing outside a trace is a load, a decrement and
// a store inside Begin: no call, no atomic, no division, no allocation, no
// lock. Only the firing that finds the countdown run out calls the
// extension. Wiring a new chain zeroes the words. A draw (once a
// gap) is a wyrand step and a multiply. Each goroutine's generator is
// seeded at its first draw from the extension's seed and a counter of
// goroutines, so a run with a fixed seed and a fixed goroutine schedule
// repeats itself.
package flowcheck
