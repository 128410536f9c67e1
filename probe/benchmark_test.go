package probe

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/extensions/budget"
	"github.com/meterio/meter/extensions/flowcheck"
	"github.com/meterio/meter/extensions/hotspot"
	"github.com/meterio/meter/extensions/spotcheck"
	"github.com/meterio/meter/extensions/tracepoint"
	"github.com/meterio/meter/meter"
)

// mix is the body of every function under test: straight-line work of a
// few ns, inlined into each.
func mix(x uint64) uint64 {
	x = (x ^ x>>31) * 0x9E3779B97F4A7C15
	x = (x ^ x>>29) * 0xBF58476D1CE4E5B9
	return x ^ x>>32
}

// benchProbes[i] is the probe of the i-th function below; each has its own
// so that one's state never leaks into another's case.
var (
	benchProbes [4]Probe
	sink        uint64
)

// The functions under test do a few ns of work and are never inlined, as a
// function worth instrumenting would be.

//go:noinline
func plain(x uint64) uint64 {
	return mix(x)
}

// instrumented has the shape meterinject generates for a function with no
// defer of its own: On and Begin first, End before the return.
//
//go:noinline
func instrumented(x uint64) uint64 {
	f := benchProbes[0].Unmetered()
	_ = benchProbes[0].On() && benchProbes[0].Begin(&f)
	r := mix(x)
	_ = f != 0 && benchProbes[0].End(&f)
	return r
}

// deferred has the conditional-defer shape, which meterinject generates
// for a function with defers of its own.
//
//go:noinline
func deferred(x uint64) uint64 {
	f := benchProbes[1].Unmetered()
	if benchProbes[1].On() && benchProbes[1].Begin(&f) {
		defer benchProbes[1].End(&f)
	}
	return mix(x)
}

// other is instrumented's twin on another probe, for the parallel cases
// on different probes, with the call exit meterinject generates where a
// branch would cost the user's condition its short circuit.
//
//go:noinline
func other(x uint64) uint64 {
	f := benchProbes[2].Unmetered()
	_ = benchProbes[2].On() && benchProbes[2].Begin(&f)
	r := mix(x)
	benchProbes[2].End(&f)
	return r
}

var (
	registered bool
	mu         sync.Mutex
)

// wire registers the probes once and wires ch (plus Enabled) with the
// clock METER_CLOCK names (callgrind.sh sets mono: TSC calibration runs a
// varying number of instructions under valgrind).
func wire(b *testing.B, ch meter.Chain) {
	source := "auto"
	if s := os.Getenv("METER_CLOCK"); s != "" {
		source = s
	}
	if err := clock.Setup(source); err != nil {
		b.Skip(err)
	}
	if !registered {
		setupOnce.Do(func() {})
		Register(benchProbes[:], "bench.instrumented", "bench.deferred", "bench.other", "bench.spare")
		registered = true
	}
	ch.Enabled = true
	meter.Configure(ch)
	for i := range benchProbes {
		benchProbes[i].m.Enable()
	}
}

func loop(b *testing.B, call func(uint64) uint64) {
	b.ReportAllocs()
	b.ResetTimer()
	x := sink
	for i := 0; i < b.N; i++ {
		x = call(x)
	}
	sink = x
}

// BenchmarkFiring is what one call costs: plain, with its probe disabled,
// and metered (the engine with the process clock, and alone with a clock
// that costs nothing); nested/metered is a metered call inside a metered
// firing of another probe, whose stretches it ends and begins again, as
// most metered firings of a program are.
func BenchmarkFiring(b *testing.B) {
	for _, c := range []struct {
		name  string
		chain meter.Chain
		off   bool
		call  func(uint64) uint64
	}{
		{"nested/metered", meter.Chain{}, false, instrumented},
		{"plain", meter.Chain{}, false, plain},
		{"disabled", meter.Chain{}, true, instrumented},
		{"defer/disabled", meter.Chain{}, true, deferred},
		{"metered", meter.Chain{}, false, instrumented},
		{"metered-manual-clock", meter.Chain{Clock: clock.NewManual()}, false, instrumented},
		{"defer/metered", meter.Chain{}, false, deferred},
		{"call-exit/disabled", meter.Chain{}, true, other},
		{"call-exit/metered", meter.Chain{}, false, other},
		{"clock-read", meter.Chain{}, false, func(x uint64) uint64 { return x + uint64(clock.Now()) }},
		{"time.Now", meter.Chain{}, false, func(x uint64) uint64 { return x + uint64(time.Now().UnixNano()) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			wire(b, c.chain)
			if c.off {
				benchProbes[0].m.Disable(meter.DisabledHotspot)
				benchProbes[1].m.Disable(meter.DisabledHotspot)
				benchProbes[2].m.Disable(meter.DisabledHotspot)
			}
			if c.name == "nested/metered" {
				f := benchProbes[3].Unmetered()
				_ = benchProbes[3].On() && benchProbes[3].Begin(&f)
				defer benchProbes[3].End(&f)
			}
			loop(b, c.call)
		})
	}
}

// never is a sample rate no benchmark reaches: every firing stays outside
// a trace.
const never = tracepoint.MaxSample

// BenchmarkChain compares, in one run, a firing of a disabled probe with a
// firing outside any trace while a trace gate is on, with a disabled
// probe's firing while spotcheck counts it, and with a sampled probe's.
func BenchmarkChain(b *testing.B) {
	flow := &flowcheck.Rule{Lower: flowcheck.MaxGap, Upper: flowcheck.MaxGap}
	for _, c := range []struct {
		name  string
		chain meter.Chain
		state meter.State
	}{
		{"disabled", meter.Chain{}, meter.DisabledHotspot},
		{"outside-tracepoint", meter.Chain{Tracepoint: &tracepoint.Rule{Sample: never}}, meter.Enabled},
		{"outside-flowcheck", meter.Chain{Flowcheck: flow}, meter.Enabled},
		{"outside-tracepoint+flowcheck+budget", meter.Chain{Tracepoint: &tracepoint.Rule{Sample: never}, Flowcheck: flow,
			Budget: &budget.Rule{Percent: 10, Unit: 1000}}, meter.Enabled},
		{"disabled-spotcheck", meter.Chain{Spotcheck: &spotcheck.Rule{Interval: spotcheck.MaxInterval}}, meter.DisabledHotspot},
		// Untimed: counted only. Sampled: counted and counted down, never
		// selected (one in 2^30), with no metered firing around it.
		{"untimed", meter.Chain{Hotspot: &hotspot.Rule{Threshold: 1 << 40, ThresholdInherent: 1 << 40, Initial: 1, Untimed: 1000}}, meter.Untimed},
		{"sampled", meter.Chain{Hotspot: &hotspot.Rule{Threshold: 1 << 40, Initial: 1, Sample: 1 << 30, Cost: 1e-9}}, meter.Sampled},
	} {
		b.Run(c.name, func(b *testing.B) {
			wire(b, c.chain)
			instrumented(0) // its first firing ends: it may be counted down from now on
			switch c.state {
			case meter.DisabledHotspot:
				benchProbes[0].m.Disable(meter.DisabledHotspot)
			case meter.Sampled, meter.Untimed:
				instrumented(0) // one cold firing: the balance of 1 runs out
				if s := benchProbes[0].m.State(); s != c.state {
					b.Fatalf("state %d, want %d", s, c.state)
				}
			}
			loop(b, instrumented)
		})
	}
}

// BenchmarkParallel runs the same probe, or one probe per goroutine, on
// every P at once: how a probe scales when all request goroutines fire it.
// bench/scaling.sh prints the ratio of 2 goroutines to 1 next to the plain
// function's.
func BenchmarkParallel(b *testing.B) {
	for _, c := range []struct {
		name  string
		chain meter.Chain
		state meter.State
		other bool // every other goroutine fires another probe
	}{
		{"plain", meter.Chain{}, meter.Enabled, false},
		{"disabled", meter.Chain{}, meter.DisabledHotspot, false},
		{"metered", meter.Chain{}, meter.Enabled, false},
		{"metered-different", meter.Chain{}, meter.Enabled, true},
		// untimed: counted only, on each P's slot.
		{"untimed", meter.Chain{Hotspot: &hotspot.Rule{Threshold: 1 << 40, ThresholdInherent: 1 << 40, Initial: 1, Untimed: 1000}}, meter.Untimed, false},
		{"outside-tracepoint", meter.Chain{Tracepoint: &tracepoint.Rule{Sample: never}}, meter.Enabled, false},
		// tracepoint at its default rate: one firing in 100 starts a trace
		// (metered), the others count on their stripes.
		{"tracepoint-default", meter.Chain{Tracepoint: &tracepoint.Rule{Sample: 100}}, meter.Enabled, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			wire(b, c.chain)
			instrumented(0)
			other(0)
			switch c.state {
			case meter.DisabledHotspot:
				benchProbes[0].m.Disable(meter.DisabledHotspot)
			case meter.Untimed:
				instrumented(0) // one cold firing: the balance of 1 runs out
				if s := benchProbes[0].m.State(); s != c.state {
					b.Fatalf("state %d, want %d", s, c.state)
				}
			}
			call := instrumented
			if c.name == "plain" {
				call = plain
			}
			var turn uint32
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				f := call
				if c.other && turnOf(&turn)%2 == 1 {
					f = other
				}
				var x uint64
				for pb.Next() {
					x = f(x)
				}
				_ = x
			})
		})
	}
}

func turnOf(t *uint32) uint32 {
	mu.Lock()
	defer mu.Unlock()
	*t++
	return *t
}
