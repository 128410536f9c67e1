package spotcheck

import "fmt"

// Properties and their defaults (METER_SPOTCHECK_*).
const (
	DefaultInterval = 10000   // METER_SPOTCHECK_INTERVAL
	MaxInterval     = 1 << 40 // the largest interval
)

// Rule is spotcheck's configuration.
type Rule struct {
	Interval int64 // every Interval-th firing of a disabled probe is metered
	// A spot check at or above both thresholds (ns; hotspot's) re-enables
	// its probe.
	Threshold, ThresholdInherent int64
}

// Reenables reports whether a spot check with these times re-enables its
// probe.
func (r *Rule) Reenables(inclusive, inherent int64) bool {
	return inclusive >= r.Threshold && inherent >= r.ThresholdInherent
}

// Settings describes the rule for the model's metadata.
func (r *Rule) Settings() string {
	return fmt.Sprintf("interval=%d threshold=%dns inherent=%dns", r.Interval, r.Threshold, r.ThresholdInherent)
}
