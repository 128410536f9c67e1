// Package tracepoint starts a trace on every Nth firing of a probe.
//
// Each probe has one firing count, shared in meaning by every goroutine.
// Every firing outside any trace counts, and every Sample-th one starts a
// trace on its goroutine, if the probe is eligible; an eligible probe's
// due firing that cannot start a trace (its probe has not ended a firing
// yet) is passed over. Which probes are eligible: those whose name matches
// METER_TRACEPOINT_INCLUDE when it is set; otherwise the roots that
// meterinject marks (request handlers and the functions goroutines start
// with), so that a service gets one trace per sampled request, rooted at
// its handler; and every probe in a program that has no roots.
//
// This package holds the rule and its properties. The engine (package
// meter) keeps the counts: per probe, a count split across a few stripes
// so that goroutines on different cores do not write one cache line, with
// exactly one firing in Sample due over whole rounds (meter.Countdown).
package tracepoint
