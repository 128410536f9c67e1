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
