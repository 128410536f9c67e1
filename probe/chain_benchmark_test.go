package probe

import (
	"testing"

	"github.com/meterio/meter/extensions/budget"
	"github.com/meterio/meter/extensions/flowcheck"
	"github.com/meterio/meter/extensions/spotcheck"
	"github.com/meterio/meter/extensions/tracepoint"
	"github.com/meterio/meter/meter"
)

var chainSink int

// chainWork is a small function with the generated twin shape: an
// unmetered firing is the call to Begin and a test.
//
//go:noinline
func chainWork(p *Probe, x int) int {
	if p.On() {
		if f := p.Begin(); f.Active() {
			return chainWorkMetered(f, p, x)
		}
	}
	return x*x + 1
}

func chainWorkMetered(f Firing, p *Probe, x int) int {
	defer f.End()
	f.Reenter()
	return chainWork(p, x)
}

// chainWorkDefer has the generated conditional-defer shape.
//
//go:noinline
func chainWorkDefer(p *Probe, x int) int {
	if p.On() {
		if f := p.Begin(); f.Active() {
			defer f.End()
		}
	}
	return x*x + 1
}

// BenchmarkChain compares, in one run, a firing of a disabled probe with a
// firing outside any trace while a trace gate is on (DESIGN.md: at most
// 10 ns more), and with a disabled probe while spotcheck keeps its gate
// word set.
func BenchmarkChain(b *testing.B) {
	cases := []struct {
		name  string
		chain func() meter.Chain
		off   bool // disable the probe
	}{
		{"disabled", func() meter.Chain { return meter.Chain{Enabled: true} }, true},
		{"outside-tracepoint", func() meter.Chain {
			return meter.Chain{Enabled: true, Gates: []meter.Gate{tracepoint.New(tracepoint.MaxSample, nil)}}
		}, false},
		{"outside-flowcheck", func() meter.Chain {
			return meter.Chain{Enabled: true, Gates: []meter.Gate{flowcheck.New(flowcheck.MaxGap, flowcheck.MaxGap)}}
		}, false},
		{"outside-tracepoint+flowcheck+budget", func() meter.Chain {
			bu := budget.New(10, 1000)
			return meter.Chain{Enabled: true, Allowance: bu, Judges: []meter.Judge{bu}, Gates: []meter.Gate{
				tracepoint.New(tracepoint.MaxSample, nil), flowcheck.New(flowcheck.MaxGap, flowcheck.MaxGap)}}
		}, false},
		{"disabled-spotcheck", func() meter.Chain {
			s := spotcheck.New(spotcheck.MaxInterval, 0, 0)
			return meter.Chain{Enabled: true, Spotter: s, KeepGates: true, Judges: []meter.Judge{s}}
		}, true},
	}
	for _, c := range cases {
		meter.Configure(c.chain())
		p := newProbe("bench")
		chainWork(p, 0) // ended once: eligible for the gates
		n0 := p.m.Count()
		if c.off {
			p.m.Disable(meter.DisabledHotspot)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				chainSink += chainWork(p, i)
			}
		})
		b.Run("defer/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				chainSink += chainWorkDefer(p, i)
			}
		})
		b.Run("parallel/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				s := 0
				for i := 0; pb.Next(); i++ {
					s += chainWork(p, i)
				}
				chainSink += s
			})
		})
		if n := p.m.Count() - n0; n != 0 {
			b.Fatalf("%s: %d firings metered", c.name, n)
		}
	}
	meter.Configure(meter.Chain{})
}
