// Package tracepoint starts a trace on every Nth firing of a probe.
//
// Each probe has one firing counter shared by every goroutine. A firing
// outside any trace that the engine offers to the gates (its probe is
// enabled and some firing of it has ended) counts, and every
// METER_TRACEPOINT_SAMPLE-th one starts a trace on its goroutine. An
// include regular expression limits which probes may start traces at all;
// inside a trace every probe is metered, subject to hotspot and budget.
//
// Cost: the counter is one of the probe's extension words, and counts
// down. The include expression runs once per probe, when the probe is
// registered (or when the chain is wired, for probes registered before):
// an included probe's counter starts at the sample rate, an excluded one's
// at a value it never runs down. The engine itself decrements the counter
// for each offered firing, with one atomic add and no call; only the firing
// that takes it to zero calls the extension, which adds the sample rate
// back and starts a trace. The add is shared by every goroutine firing the
// probe, which is what makes the count exact (exactly one in N starts a
// trace, however the goroutines interleave); there is no retry loop, no
// division on the common path, no allocation and no lock.
package tracepoint
