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
// This package holds the rule (the draw) and its properties. The engine
// (package meter) keeps each goroutine's countdown and generator state in
// the goroutine's own state, which only that goroutine touches: a firing
// outside a trace is a decrement in Begin, with no call, atomic, division,
// allocation or lock, and only the firing that finds the countdown run out
// draws. Each goroutine's generator is seeded at its first draw from the
// process seed and a count of goroutines (Seed).
package flowcheck
