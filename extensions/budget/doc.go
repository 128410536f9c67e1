// Package budget caps how many measurements one firing may cause, itself
// and everything metered inside it included.
//
// Metering a firing costs about one budget unit (METER_BUDGET_UNIT, 1 µs by
// default). A probe's typical time T is the mean inclusive time of its
// metered firings, and its allowance is A = ⌊T × percent/100 ÷ unit⌋
// units: a 1 ms function at 10% may cause at most 100 measurements per
// call. The engine (package meter) keeps the pools: a metered firing f gets
// B(f) = min(A(f), what its nearest metered ancestor has left), spends one
// unit on itself, and what it spent passes up to every metered ancestor
// when it ends. This package says what A is; the engine disables a probe
// whose T is known and whose A is below one unit (model label `budget`):
// such a probe could never afford its own measurement.
//
// A probe whose T is not known yet (none of its metered firings has ended)
// has an unlimited allowance. It is measured, which teaches T, and caps
// nothing nested in it, so main, a worker loop or a goroutine's body never
// starves what runs beneath it. A firing skipped for want of budget is not
// disabled: it may be metered on another path.
//
// This package holds the rule and its properties; the engine (package
// meter) keeps each probe's allowance, recomputed when a metered firing
// ends, and the pools of the firings on each goroutine's stack. Nothing
// here allocates, blocks or takes a lock.
package budget
