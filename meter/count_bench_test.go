package meter

import (
	"testing"

	"github.com/meterio/meter/extensions/hotspot"
)

// BenchmarkCountedFiring is what a sampled probe's firing costs outside
// windows and in a counting window (counting.go), its Begin called
// directly (generated code tests the on-word first).
func BenchmarkCountedFiring(b *testing.B) {
	defer Configure(Chain{Enabled: true})
	for _, counting := range []bool{false, true} {
		name := "outside"
		if counting {
			name = "counting"
		}
		b.Run(name, func(b *testing.B) {
			Configure(Chain{Enabled: true, Hotspot: &hotspot.Rule{Threshold: 1 << 40, Initial: 1, Sample: 1 << 30}})
			sampler.mu.Lock()
			sampler.manual = true // no timers: the window is the benchmark's
			sampler.mu.Unlock()
			p := NewProbe("bench.counted."+name, nil)
			p.End(p.Begin())
			p.End(p.Begin())
			if p.State() != Sampled {
				b.Fatalf("state %d, want sampled", p.State())
			}
			if counting {
				openCountingWindow()
				defer closeWindow()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.End(p.Begin())
			}
			b.StopTimer()
			if counting && p.counted() < int64(b.N) {
				b.Fatalf("counted %d of %d", p.counted(), b.N)
			}
		})
	}
}
