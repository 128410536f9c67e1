package clock

import (
	"runtime"
	"testing"
	"time"
)

var sink int64

// BenchmarkRead compares the tick sources and the standard library in one
// run: on a shared VM only ratios within a run mean much.
func BenchmarkRead(b *testing.B) {
	restore(b)
	b.Run("Now/tsc", func(b *testing.B) {
		if err := Setup("tsc"); err != nil {
			b.Skip(err)
		}
		b.ReportAllocs()
		var s int64
		for i := 0; i < b.N; i++ {
			s += Now()
		}
		sink = s
	})
	b.Run("Now/mono", func(b *testing.B) {
		Setup("mono")
		b.ReportAllocs()
		var s int64
		for i := 0; i < b.N; i++ {
			s += Now()
		}
		sink = s
	})
	raw := []struct {
		name string
		read func() int64
	}{
		{"rdtscp", rdtscp},
		{"lfence-rdtsc", rdtscFenced},
		{"rdtsc-unordered", rdtsc},
	}
	for _, r := range raw {
		b.Run(r.name, func(b *testing.B) {
			if runtime.GOARCH != "amd64" {
				b.Skip("no TSC")
			}
			b.ReportAllocs()
			var s int64
			for i := 0; i < b.N; i++ {
				s += r.read() // through a function value; BenchmarkRaw* call directly
			}
			sink = s
		})
	}
	b.Run("time.Now", func(b *testing.B) {
		b.ReportAllocs()
		var s int64
		for i := 0; i < b.N; i++ {
			s += time.Now().UnixNano()
		}
		sink = s
	})
	b.Run("time.Since", func(b *testing.B) {
		b.ReportAllocs()
		var s int64
		for i := 0; i < b.N; i++ {
			s += int64(time.Since(base))
		}
		sink = s
	})
}

// BenchmarkRawRDTSCP reads the counter without a function value in the
// way, for comparison with BenchmarkRead/rdtscp.
func BenchmarkRawRDTSCP(b *testing.B) {
	if runtime.GOARCH != "amd64" {
		b.Skip("no TSC")
	}
	b.ReportAllocs()
	var s int64
	for i := 0; i < b.N; i++ {
		s += rdtscp()
	}
	sink = s
}

// BenchmarkRawLFENCERDTSC is the alternative the package doc weighs.
func BenchmarkRawLFENCERDTSC(b *testing.B) {
	if runtime.GOARCH != "amd64" {
		b.Skip("no TSC")
	}
	b.ReportAllocs()
	var s int64
	for i := 0; i < b.N; i++ {
		s += rdtscFenced()
	}
	sink = s
}

func BenchmarkNanos(b *testing.B) {
	restore(b)
	useTSC(2.445430)
	b.ReportAllocs()
	var s int64
	d := int64(12345)
	for i := 0; i < b.N; i++ {
		s += Nanos(d)
		d++
	}
	sink = s
}

// BenchmarkInterval is what a metered firing pays the clock: two reads,
// Elapsed and Nanos.
func BenchmarkInterval(b *testing.B) {
	restore(b)
	for _, kind := range []string{"tsc", "mono"} {
		b.Run(kind, func(b *testing.B) {
			if err := Setup(kind); err != nil {
				b.Skip(err)
			}
			b.ReportAllocs()
			var s int64
			for i := 0; i < b.N; i++ {
				start := Now()
				s += Nanos(Elapsed(start, Now()))
			}
			sink = s
		})
	}
}

// The blocks of BenchmarkInterleaved: 256 direct reads each.
const block = 256

func blockNow() (s int64) {
	for range block {
		s += Now()
	}
	return s
}

func blockFenced() (s int64) {
	for range block {
		s += rdtscFenced()
	}
	return s
}

func blockSince() (s int64) {
	for range block {
		s += int64(time.Since(base))
	}
	return s
}

func blockTimeNow() (s int64) {
	for range block {
		s += time.Now().UnixNano()
	}
	return s
}

// BenchmarkInterleaved reads each source in turn, 256 reads at a time and
// in a rotating order, so that a neighbour's compile or the host's steal
// time falls on all of them alike. It reports ns per read of each and the
// ratios the clock is held to (time.Now / tsc ≥ 1.5).
func BenchmarkInterleaved(b *testing.B) {
	restore(b)
	if err := Setup("tsc"); err != nil {
		b.Skip(err)
	}
	blocks := [...]func() int64{blockNow, blockFenced, blockSince, blockTimeNow}
	var took [len(blocks)]time.Duration
	var s int64
	rounds := 0
	for i := 0; i < b.N; i++ {
		for k := range blocks {
			i := (k + rounds) % len(blocks)
			t0 := time.Now()
			s += blocks[i]()
			took[i] += time.Since(t0)
		}
		rounds++
	}
	sink = s
	per := func(d time.Duration) float64 { return float64(d) / float64(rounds*block) }
	b.ReportMetric(per(took[0]), "ns/Now-tsc")
	b.ReportMetric(per(took[1]), "ns/lfence-rdtsc")
	b.ReportMetric(per(took[2]), "ns/time.Since")
	b.ReportMetric(per(took[3]), "ns/time.Now")
	b.ReportMetric(float64(took[3])/float64(took[0]), "time.Now/tsc")
	b.ReportMetric(float64(took[2])/float64(took[0]), "time.Since/tsc")
	b.ReportMetric(float64(took[1])/float64(took[0]), "lfence-rdtsc/rdtscp")
}
