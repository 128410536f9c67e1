// Package spotcheck meters disabled probes now and then, so the model
// follows a program whose costs change.
//
// Every METER_SPOTCHECK_INTERVAL-th firing of a disabled probe is metered
// anyway (outside the trace gates and the budget). When such a spot check
// is hot, by the hotspot thresholds handed to New, the probe is enabled
// again; the engine then tells hotspot, which gives it back its initial
// balance. A probe that budget disabled comes back the same way, and
// budget then judges it again from its typical time, which now includes
// the spot checks.
//
// Cost. The count to the next spot check lives in one of the probe's
// extension words, and the engine counts it down itself (meter.Spotter):
// a disabled firing costs one atomic decrement, in the engine's assembly
// leaf on amd64, and Spot is called only when the count runs out. The
// firing that takes it to zero adds the interval back, so the count is
// exact across goroutines with no compare-and-swap loop. The spot checks
// in flight have a word of their own; a metered firing that ends costs
// this extension one load of it. But to see a disabled probe's firings at
// all, the chain keeps disabled probes' gate words set
// (meter.Chain.KeepGates): with spotcheck on, a disabled probe costs a call
// into the engine and that decrement, not just the load and branch it
// costs otherwise. That is the price of following changing costs; leave
// spotcheck off where disabled probes are most of the cost. Nothing here
// allocates, blocks or takes a lock.
package spotcheck
