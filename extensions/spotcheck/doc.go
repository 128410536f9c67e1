// Package spotcheck meters disabled probes now and then, so the model
// follows a program whose costs change.
//
// Every Interval-th firing of a disabled probe is metered anyway (outside
// the trace gates and the probe's own allowance, but within its metered
// ancestor's pool and the trace maximum). When such a spot check is hot, by
// hotspot's thresholds, the probe is enabled again with hotspot's initial
// balance. A probe that budget disabled comes back the same way, and is
// judged again from its typical time, which now includes the spot checks.
//
// This package holds the rule and its properties. The engine (package
// meter) keeps each disabled probe's count (meter.Countdown). To see a
// disabled probe's firings at all, the engine keeps disabled probes'
// generated on-words set while spotcheck is on: a disabled probe then
// costs a call into the engine and one striped atomic decrement, not just
// the load and branch it costs otherwise. That is the price of following
// changing costs; leave spotcheck off where disabled probes are most of
// the cost.
package spotcheck
