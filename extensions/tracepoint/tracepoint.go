package tracepoint

import (
	"fmt"
	"regexp"
)

// Properties and their defaults (METER_TRACEPOINT_*).
const (
	DefaultSample = 100     // METER_TRACEPOINT_SAMPLE
	MaxSample     = 1 << 40 // the largest sample rate
)

// Rule is tracepoint's configuration.
type Rule struct {
	Sample  int64          // every Sample-th firing of a probe starts a trace, 1..MaxSample
	Include *regexp.Regexp // METER_TRACEPOINT_INCLUDE; nil: the default roots (see Eligible)
}

// Default returns the rule at its default properties.
func Default() Rule { return Rule{Sample: DefaultSample} }

// Eligible reports whether a probe may start traces: its name matches
// Include when there is one; otherwise it is a root (the entry of a unit of
// work: a request handler, a goroutine's function, as meterinject marks
// them), or the program has no roots at all.
func (r *Rule) Eligible(name string, root, anyRoot bool) bool {
	if r.Include != nil {
		return r.Include.MatchString(name)
	}
	return root || !anyRoot
}

// Settings describes the rule for the model's metadata.
func (r *Rule) Settings() string {
	s := fmt.Sprintf("sample=%d", r.Sample)
	if r.Include != nil {
		s += fmt.Sprintf(" include=%q", r.Include.String())
	} else {
		s += " include=roots"
	}
	return s
}
