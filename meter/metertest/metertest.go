// Package metertest helps test code that sits behind the engine: exporters,
// sinks, pages. It wires chains whose decisions a test knows in advance.
package metertest

import (
	"regexp"
	"strings"

	"github.com/meterio/meter/extensions/tracepoint"
	"github.com/meterio/meter/meter"
)

// TraceAt returns a tracepoint rule under which every firing of one of
// roots outside a trace starts one (once a firing of that probe has
// ended), and no other probe's firing does.
func TraceAt(roots ...*meter.Probe) *tracepoint.Rule {
	var names []string
	for _, p := range roots {
		names = append(names, regexp.QuoteMeta(p.Name()))
	}
	return &tracepoint.Rule{Sample: 1, Include: regexp.MustCompile("^(" + strings.Join(names, "|") + ")$")}
}

// Fire runs body (if not nil) inside one firing of p, begun and ended on
// the calling goroutine as generated code does: Begin before, End after.
// Fire(p, nil) is an empty firing, such as the one that lets a probe
// start traces (none of its firings has ended before).
func Fire(p *meter.Probe, body func()) {
	f := p.Begin()
	if body != nil {
		body()
	}
	p.End(&f)
}
