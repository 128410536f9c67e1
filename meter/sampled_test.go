package meter

import (
	"testing"

	"github.com/meterio/meter/extensions/tracepoint"
)

// A probe whose firings are each cold but whose time adds up is sampled,
// not disabled: every firing is counted, 1 in Sample is metered, and the
// model estimates its totals.
func TestCheapButLargeProbeIsSampled(t *testing.T) {
	h := hot()
	h.Sample, h.SampleShare = 8, 0.5
	wire(t, Chain{Hotspot: h})
	big, small := newProbe(t, "big"), newProbe(t, "small")
	// big takes all the time (1 µs a firing, back to back: share 1); small
	// is fired once per 1 µs of other work (share 0.1).
	for i := int64(0); i < h.Initial; i++ {
		fire(big, 1*us, nil)
		fire(small, 100, nil)
		clk.Advance(900)
	}
	if s := big.State(); s != Sampled {
		t.Fatalf("big: state %d, want sampled", s)
	}
	if s := small.State(); s != DisabledHotspot {
		t.Fatalf("small: state %d, want disabled", s)
	}
	// 800 more firings of 2 µs: 100 metered, 800 counted.
	for i := 0; i < 800; i++ {
		fire(big, 2*us, nil)
	}
	r := big.row()
	if r.Label != LabelSampled || r.Metered != h.Initial+100 {
		t.Fatalf("big: label %q metered %d, want sampled and %d", r.Label, r.Metered, h.Initial+100)
	}
	want := h.Initial*us + 800*2*us
	if r.Count != h.Initial+800 || r.Total != want || r.InherentTotal != want {
		t.Fatalf("big: count %d total %d inherent %d; want %d, %d, %d", r.Count, r.Total, r.InherentTotal, h.Initial+800, want, want)
	}
	// A hot sampled firing puts it back to metering every firing.
	for i := 0; i < 8; i++ {
		fire(big, 20*us, nil)
	}
	if s := big.State(); s != Enabled || balance(big) != h.Initial {
		t.Fatalf("after a hot sampled firing: state %d balance %d", s, balance(big))
	}
	fire(big, 20*us, nil)
	r = big.row()
	if r.Label != LabelSampled || r.Count != h.Initial+809 || r.Metered != h.Initial+102 {
		t.Fatalf("after the stretch: label %q count %d metered %d", r.Label, r.Count, r.Metered)
	}
}

func TestSamplingNeedsNoTraceGate(t *testing.T) {
	h := hot()
	h.Sample, h.SampleShare = 8, 0
	wire(t, Chain{Hotspot: h, Tracepoint: &tracepoint.Rule{Sample: 1}})
	p := newProbe(t, "p")
	fire(p, 0, nil) // the first firing outside a trace: noted, not metered
	for i := int64(0); i < h.Initial; i++ {
		fire(p, 1*us, nil) // each starts a trace of its own
	}
	if p.State() != DisabledHotspot {
		t.Fatalf("state %d with a trace gate on, want disabled (sampling needs a chain with no gate)", p.State())
	}
}

func TestSampledFiringsAllocateNothing(t *testing.T) {
	h := hot()
	h.Sample, h.SampleShare = 4, 0
	wire(t, Chain{Hotspot: h})
	p := newProbe(t, "p")
	for i := int64(0); i < h.Initial; i++ {
		fire(p, 1, nil)
	}
	if p.State() != Sampled {
		t.Fatalf("state %d", p.State())
	}
	if n := testing.AllocsPerRun(1000, func() { fire(p, 1, nil) }); n != 0 {
		t.Fatalf("%v allocations per sampled firing", n)
	}
}
