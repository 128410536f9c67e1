package budget

import "fmt"

// Properties and their defaults (METER_BUDGET_*).
const (
	DefaultPercent = 10    // METER_BUDGET_PERCENT, 1..100
	DefaultUnit    = 1_000 // ns, METER_BUDGET_UNIT (µs there)
)

// Rule is budget's configuration.
type Rule struct {
	Percent int64 // 1..100
	Unit    int64 // ns charged per measurement, at least 1
}

// Default returns the rule at its default properties.
func Default() Rule { return Rule{Percent: DefaultPercent, Unit: DefaultUnit} }

// Allowance returns A for a typical time of t ns: ⌊t × Percent/100 ÷ Unit⌋.
func (r *Rule) Allowance(t int64) int64 {
	return t * r.Percent / (100 * max(r.Unit, 1))
}

// Settings describes the rule for the model's metadata.
func (r *Rule) Settings() string { return fmt.Sprintf("percent=%d unit=%dns", r.Percent, r.Unit) }
