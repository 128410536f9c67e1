package probe

import (
	"os"
	"testing"
	"time"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/meter"
)

// mix is the body of every function under test: straight-line work of a
// few ns, inlined into each.
func mix(x uint64) uint64 {
	x = (x ^ x>>31) * 0x9E3779B97F4A7C15
	x = (x ^ x>>29) * 0xBF58476D1CE4E5B9
	return x ^ x>>32
}

// The functions under test do a few ns of work and are never inlined, as
// a small function that is worth instrumenting would be.
var (
	benchProbes [2]Probe
	sink        uint64
)

//go:noinline
func plain(x uint64) uint64 {
	return mix(x)
}

// instrumented has the generated conditional-defer shape.
//
//go:noinline
func instrumented(x uint64) uint64 {
	if benchProbes[0].On() {
		if f := benchProbes[0].Begin(); f.Active() {
			defer f.End()
		}
	}
	return mix(x)
}

// twin has the generated shape whose disabled path has no defer at all:
// when Begin meters the firing, the enabled path calls a metered twin,
// which holds the defer and calls the function again (Reenter keeps that
// call from firing again).
//
//go:noinline
func twin(x uint64) uint64 {
	if benchProbes[1].On() {
		if f := benchProbes[1].Begin(); f.Active() {
			return twinMetered(f, x)
		}
	}
	return mix(x)
}

func twinMetered(f Firing, x uint64) uint64 {
	defer f.End()
	f.Reenter()
	return twin(x)
}

// benchChain wires the chain for a benchmark: every firing metered, no
// extension, the real clock (METER_CLOCK picks it; scripts/callgrind.sh
// sets mono, whose set-up runs the same instructions every time, unlike
// TSC calibration, which loops for a span of wall time).
func benchChain(b *testing.B, source string) {
	if s := os.Getenv("METER_CLOCK"); s != "" {
		source = s
	}
	if err := clock.Setup(source); err != nil {
		b.Skip(err)
	}
	setupOnce.Do(func() {})
	if benchProbes[0].m == nil {
		Register(benchProbes[:], "bench.instrumented", "bench.other")
	}
	meter.Configure(meter.Chain{Enabled: true})
}

func BenchmarkFiring(b *testing.B) {
	benchChain(b, "auto")
	disable := func(i int) func() func() {
		return func() func() {
			benchProbes[i].m.Disable(meter.DisabledHotspot)
			return benchProbes[i].m.Enable
		}
	}
	for _, c := range []struct {
		name  string
		setup func() (undo func()) // nil: none
		call  func(uint64) uint64
	}{
		{"plain", nil, plain},
		{"disabled", disable(0), instrumented},
		{"metered", nil, instrumented},
		// The engine's own cost: each clock read is one atomic load.
		{"metered-manual-clock", func() func() {
			clock.UseManual()
			return func() { clock.Setup(clockSource()) }
		}, instrumented},
		{"twin-disabled", disable(1), twin},
		{"twin-metered", nil, twin},
		{"clock-read", nil, func(x uint64) uint64 { return x + uint64(clock.Now()) }},
		{"time.Now", nil, func(x uint64) uint64 { return x + uint64(time.Now().UnixNano()) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.setup != nil {
				undo := c.setup()
				defer func() { b.StopTimer(); undo() }()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sink = c.call(sink)
			}
		})
	}
}

func BenchmarkFiringParallel(b *testing.B) {
	benchChain(b, "auto")
	b.Run("plain", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			var x uint64
			for pb.Next() {
				x = plain(x)
			}
			_ = x
		})
	})
	b.Run("metered", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var x uint64
			for pb.Next() {
				x = instrumented(x)
			}
			_ = x
		})
	})
}

func clockSource() string {
	if s := os.Getenv("METER_CLOCK"); s != "" {
		return s
	}
	return "auto"
}
