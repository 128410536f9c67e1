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
		for b.Loop() {
			s += Now()
		}
		sink = s
	})
	b.Run("Now/mono", func(b *testing.B) {
		Setup("mono")
		b.ReportAllocs()
		var s int64
		for b.Loop() {
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
			for b.Loop() {
				s += r.read() // called directly in the loop below when possible
			}
			sink = s
		})
	}
	b.Run("time.Now", func(b *testing.B) {
		b.ReportAllocs()
		var s int64
		for b.Loop() {
			s += time.Now().UnixNano()
		}
		sink = s
	})
	b.Run("time.Since", func(b *testing.B) {
		b.ReportAllocs()
		var s int64
		for b.Loop() {
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
	for b.Loop() {
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
	for b.Loop() {
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
	for b.Loop() {
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
			for b.Loop() {
				start := Now()
				s += Nanos(Elapsed(start, Now()))
			}
			sink = s
		})
	}
}

// BenchmarkInterleaved reads each source in turn, 256 reads at a time,
// so that a neighbour's compile or the host's steal time falls on all of
// them alike. It reports ns per read of each and the ratios that issue 2
// sets targets on (time.Now / tsc ≥ 1.5).
func BenchmarkInterleaved(b *testing.B) {
	restore(b)
	if err := Setup("tsc"); err != nil {
		b.Skip(err)
	}
	const block = 256
	var tsc, fenced, since, now time.Duration
	var s int64
	reads := 0
	for b.Loop() {
		t0 := time.Now()
		for range block {
			s += Now()
		}
		t1 := time.Now()
		for range block {
			s += rdtscFenced()
		}
		t2 := time.Now()
		for range block {
			s += int64(time.Since(base))
		}
		t3 := time.Now()
		for range block {
			s += time.Now().UnixNano()
		}
		t4 := time.Now()
		tsc += t1.Sub(t0)
		fenced += t2.Sub(t1)
		since += t3.Sub(t2)
		now += t4.Sub(t3)
		reads += block
	}
	sink = s
	per := func(d time.Duration) float64 { return float64(d) / float64(reads) }
	b.ReportMetric(per(tsc), "ns/Now-tsc")
	b.ReportMetric(per(fenced), "ns/lfence-rdtsc")
	b.ReportMetric(per(since), "ns/time.Since")
	b.ReportMetric(per(now), "ns/time.Now")
	b.ReportMetric(float64(now)/float64(tsc), "time.Now/tsc")
	b.ReportMetric(float64(since)/float64(tsc), "time.Since/tsc")
	b.ReportMetric(float64(fenced)/float64(tsc), "lfence-rdtsc/rdtscp")
}
