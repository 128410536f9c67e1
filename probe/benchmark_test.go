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

//go:noinline
func instrumented(x uint64) uint64 {
	if benchProbes[0].On() {
		defer benchProbes[0].Begin().End()
	}
	return mix(x)
}

// twin has the generated shape whose disabled path has no defer at all:
// the body is repeated in a metered twin that the enabled path calls.
//
//go:noinline
func twin(x uint64) uint64 {
	if benchProbes[1].On() {
		return twinMetered(x)
	}
	return mix(x)
}

func twinMetered(x uint64) uint64 {
	defer benchProbes[1].Begin().End()
	return mix(x)
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
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink = plain(sink)
		}
	})
	b.Run("disabled", func(b *testing.B) {
		benchProbes[0].m.Disable(meter.DisabledHotspot)
		defer benchProbes[0].m.Enable()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink = instrumented(sink)
		}
	})
	b.Run("metered", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink = instrumented(sink)
		}
	})
	b.Run("metered-manual-clock", func(b *testing.B) {
		// The engine's own cost: the clock reads are one atomic load each.
		clock.UseManual()
		defer clock.Setup(clockSource())
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink = instrumented(sink)
		}
	})
	b.Run("twin-disabled", func(b *testing.B) {
		benchProbes[1].m.Disable(meter.DisabledHotspot)
		defer benchProbes[1].m.Enable()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink = twin(sink)
		}
	})
	b.Run("twin-metered", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink = twin(sink)
		}
	})
	b.Run("clock-read", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink += uint64(clock.Now())
		}
	})
	b.Run("time.Now", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink += uint64(time.Now().UnixNano())
		}
	})
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
