// Package hotspot decides which probes are worth metering, and how.
//
// Each probe has a credit balance shared by every goroutine, starting at
// Initial, and every firing of a probe is metered until hotspot has judged
// it. A metered firing is hot when its inclusive time reaches Threshold and
// its inherent time reaches ThresholdInherent; a hot firing adds one
// credit, never above Initial, and any other takes one away. When the
// balance runs out the probe is judged on its totals, never on one
// firing: its mean inclusive and own times per call, its exact count, and
// how long it has run.
//
//   - Hot on average (both means at or above the thresholds): metered at
//     every call, its balance restored (the model's label "hotspot"), where
//     metering a call costs at most Cost of its own time; else sampled.
//   - Its own time (own time per call times its count) below SampleShare
//     of the time since its first metered firing: disabled. From then on
//     its firings cost one load and one branch in the generated code, and
//     are no longer counted. A root (a request handler, a goroutine's
//     function) is never disabled: a service's cheap handlers are what its
//     owner counts requests by.
//   - Its inclusive time per call below the untimed limit (Untimed times
//     what timing a call costs, at most 300 ns): untimed. Its calls are counted, never metered: the
//     clock cannot time them, and their time stays in their callers' own.
//   - Metering a call costs at most Cost of its own time: metered at every
//     call.
//   - Otherwise sampled: counted at every call, about one call in Sample
//     metered, the model's times estimated from those (label "sampled").
//
// Under a trace gate (tracepoint, flowcheck) probes are metered in traces
// only, and the verdict is hot, kept or disabled.
//
// This package holds the rule and its properties only; the engine (package
// meter) keeps each probe's balance and calls the rule. Nothing here
// allocates, blocks or takes a lock.
package hotspot

import "fmt"

// Properties and their defaults (METER_HOTSPOT_*).
const (
	DefaultThreshold         = 10_000 // ns, METER_HOTSPOT_THRESHOLD (µs there)
	DefaultThresholdInherent = 2_000  // ns, METER_HOTSPOT_THRESHOLD_INHERENT
	DefaultInitial           = 1000   // METER_HOTSPOT_INITIAL
	DefaultSample            = 100    // METER_HOTSPOT_SAMPLE: one call in N of a sampled probe metered; 0: no sampling
	DefaultSampleShare       = 0.0005 // METER_HOTSPOT_SAMPLE_SHARE (a percentage there, 0.05)
	DefaultCost              = 0.02   // METER_HOTSPOT_COST (a percentage there, 2)
	DefaultUntimed           = 2      // METER_HOTSPOT_UNTIMED: times what timing a call costs; 0: every kept probe timed
)

// Rule is hotspot's configuration.
type Rule struct {
	Threshold         int64   // ns, inclusive
	ThresholdInherent int64   // ns, inherent
	Initial           int64   // starting credit balance, at least 1
	Sample            int64   // one call in Sample of a sampled probe is metered; 0: no probe is sampled
	SampleShare       float64 // share of the time it has run under which a cold probe is disabled
	Cost              float64 // share of its own time and waits per call that metering may cost a probe metered at every call; 0: no limit
	Untimed           int64   // a cold probe whose calls take less than this many times what timing a call costs (at most 300 ns) is untimed; 0: none is
}

// Default returns the rule at its default properties.
func Default() Rule {
	return Rule{
		Threshold:         DefaultThreshold,
		ThresholdInherent: DefaultThresholdInherent,
		Initial:           DefaultInitial,
		Sample:            DefaultSample,
		SampleShare:       DefaultSampleShare,
		Cost:              DefaultCost,
		Untimed:           DefaultUntimed,
	}
}

// Hot reports whether one firing with these times (ns) is hot.
func (r *Rule) Hot(inclusive, inherent int64) bool {
	return inclusive >= r.Threshold && inherent >= r.ThresholdInherent
}

// Keep reports whether a cold probe is kept rather than disabled: its own
// time, own ns in all, over the span of wall time (ns) since its first
// metered firing, is at least SampleShare.
func (r *Rule) Keep(own, span int64) bool {
	return span > 0 && float64(own) >= r.SampleShare*float64(span)
}

// Affords reports whether a probe whose calls hold their goroutine held ns
// each (their own time and their waits) is metered at every call when
// metering one call costs cost ns; if not, it is sampled. With sampling off there is nothing cheaper that keeps it
// measured, and it is.
func (r *Rule) Affords(held, cost int64) bool {
	return r.Sample <= 0 || r.Cost <= 0 || float64(cost) <= r.Cost*float64(held)
}

// Label reports whether a probe with these mean times is a hotspot.
func (r *Rule) Label(avg, inherentAvg int64) bool { return r.Hot(avg, inherentAvg) }

// Settings describes the rule for the model's metadata.
func (r *Rule) Settings() string {
	s := fmt.Sprintf("threshold=%dns inherent=%dns initial=%d sample=%d share=%g",
		r.Threshold, r.ThresholdInherent, r.Initial, r.Sample, r.SampleShare)
	if r.Cost != DefaultCost {
		s += fmt.Sprintf(" cost=%g", r.Cost)
	}
	if r.Untimed != DefaultUntimed {
		s += fmt.Sprintf(" untimed=%d", r.Untimed)
	}
	return s
}
