// Package hotspot decides which probes are worth metering at all.
//
// Each probe has a credit balance shared by every goroutine, starting at
// Initial. A metered firing is hot when its inclusive time reaches
// Threshold and its inherent time reaches ThresholdInherent; a hot firing
// adds one credit, never above Initial, and any other takes one away. At
// zero the probe is disabled: from then on its firings cost one load and
// one branch in the generated code; unless its mean inclusive and inherent
// times reach the thresholds, which is what the model's "hotspot" label
// says: then it keeps being metered, with its balance restored. So a
// probe labelled "disabled" is one whose metered firings were cold on
// average, and a request handler whose firings are mostly quick but
// sometimes long stays in the model.
//
// Sampled probes. A probe whose firings are each too short to be hot can
// still be where the program's time goes: a parser's inner function called
// millions of times. When a probe's balance runs out, Keep looks at what its
// metered firings cost in all: if their inherent time is at least
// SampleShare of the wall time they were metered over, the probe is not
// disabled but sampled. A sampled probe is off, as a disabled one is,
// except during sampling windows, of two kinds, metered ones open 1/Sample
// of the time and counting ones four times as much (windows of Window,
// 250 µs, or more, at random times): in a counting window
// every firing of it that begins is counted, in a metered one metered,
// with what is nested in it. The model estimates its count from the
// counting windows and its times per firing from the metered ones, and
// labels the row "sampled". It stays sampled: the windows follow what it
// costs. Sample 0 turns sampling off, and every cold probe is disabled.
//
// What metering costs. A probe kept for being hot on average has firings
// that are mostly short; metered at every call, it costs what metering a
// firing costs (two clock reads and the engine's work, about 100 ns on a
// VM) at each of them. Where that is more than Cost of its mean own time
// per firing (2%), it is sampled instead, whatever its share of the wall
// time, and its row is an estimate. yaml.v3's (*parser).mapping has 2.2 to
// 3.2 µs of its own a call, 78 to 126 ns of metering each, and a quarter of
// a decoding's time: metered always, it was a point of the program's
// instructions by itself. The comparison is of two times measured on the
// same clock, so it decides the same under valgrind, where every time is
// slower, as natively. Firings hot one by one keep their probe metered
// whatever metering costs, as DESIGN's rule says.
//
// This package holds the rule and its properties only; the engine (package
// meter) keeps each probe's balance and calls Hot and Keep. Nothing here
// allocates, blocks or takes a lock.
package hotspot

import "fmt"

// Properties and their defaults (METER_HOTSPOT_*).
const (
	DefaultThreshold         = 10_000  // ns, METER_HOTSPOT_THRESHOLD (µs there)
	DefaultThresholdInherent = 2_000   // ns, METER_HOTSPOT_THRESHOLD_INHERENT
	DefaultInitial           = 1000    // METER_HOTSPOT_INITIAL
	DefaultSample            = 100     // METER_HOTSPOT_SAMPLE: sampling windows open 1/N of the time; 0: off
	DefaultSampleShare       = 0.0005  // METER_HOTSPOT_SAMPLE_SHARE (a percentage there, 0.05)
	DefaultWindow            = 250_000 // ns, METER_HOTSPOT_WINDOW (µs there): a sampling window's length, at least
	DefaultCost              = 0.02    // METER_HOTSPOT_COST (a percentage there, 2)
)

// Rule is hotspot's configuration.
type Rule struct {
	Threshold         int64   // ns, inclusive
	ThresholdInherent int64   // ns, inherent
	Initial           int64   // starting credit balance, at least 1
	Sample            int64   // sampling windows are open 1/Sample of the time; 0: no probe is sampled
	SampleShare       float64 // share of wall time a cold probe's inherent time must reach to be sampled
	Window            int64   // ns: how long a sampling window lasts, at least; 0: DefaultWindow
	Cost              float64 // share of its own time per firing that metering may cost a probe hot on average; 0: no limit
}

// Default returns the rule at its default properties.
func Default() Rule {
	return Rule{
		Threshold:         DefaultThreshold,
		ThresholdInherent: DefaultThresholdInherent,
		Initial:           DefaultInitial,
		Sample:            DefaultSample,
		SampleShare:       DefaultSampleShare,
		Window:            DefaultWindow,
		Cost:              DefaultCost,
	}
}

// Hot reports whether one firing with these times (ns) is hot.
func (r *Rule) Hot(inclusive, inherent int64) bool {
	return inclusive >= r.Threshold && inherent >= r.ThresholdInherent
}

// Keep reports whether a probe whose balance ran out is sampled rather than
// disabled: its metered firings spent inherent ns over a window of wall
// time (ns, from its first metered firing to now). A root (a request
// handler, a goroutine's function: the entry of a unit of work) is kept
// whatever its share: a service's cheap handlers (a health check) are
// what its owner counts requests by, and a root fires once a request, so
// its windows cost next to nothing.
func (r *Rule) Keep(inherent, window int64, root bool) bool {
	if r.Sample <= 0 {
		return false
	}
	return root || window > 0 && float64(inherent) >= r.SampleShare*float64(window)
}

// Affords reports whether a probe hot on average, of own ns of inherent
// time per firing, is metered at every call when metering one firing costs
// cost ns; if not, it is sampled. With sampling off there is nothing
// cheaper that keeps it measured, and it is.
func (r *Rule) Affords(own, cost int64) bool {
	return r.Sample <= 0 || r.Cost <= 0 || float64(cost) <= r.Cost*float64(own)
}

// Label reports whether a probe with these mean times is a hotspot.
func (r *Rule) Label(avg, inherentAvg int64) bool { return r.Hot(avg, inherentAvg) }

// Settings describes the rule for the model's metadata.
func (r *Rule) Settings() string {
	s := fmt.Sprintf("threshold=%dns inherent=%dns initial=%d sample=%d share=%g",
		r.Threshold, r.ThresholdInherent, r.Initial, r.Sample, r.SampleShare)
	if r.Window != 0 && r.Window != DefaultWindow {
		s += fmt.Sprintf(" window=%dns", r.Window)
	}
	if r.Cost != DefaultCost {
		s += fmt.Sprintf(" cost=%g", r.Cost)
	}
	return s
}
