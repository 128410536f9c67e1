// Package tracepoint starts a trace on every Nth firing of a probe.
//
// Each probe has one firing counter shared by every goroutine. A firing
// outside any trace that the engine offers to the gates (its probe is
// enabled and some firing of it has ended) counts, and every
// METER_TRACEPOINT_SAMPLE-th one starts a trace on its goroutine. An
// include regular expression limits which probes may start traces at all;
// inside a trace every probe is metered, subject to hotspot and budget.
//
// Cost: the counter lives in one of the probe's extension words, with two
// flag bits that cache the include decision, so the regular expression runs
// once per probe, at its first offered firing, and never again. A firing
// outside a trace is then one load and one compare-and-swap on that word:
// no division, no allocation, no lock. The compare-and-swap is shared by
// every goroutine firing the probe, which is what makes the count exact
// (exactly one in N starts a trace); under heavy contention on one probe it
// retries.
package tracepoint
