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
