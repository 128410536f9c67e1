// Command fidelity measures how far metering moves the time it reports,
// on a synthetic call tree with known costs: a root that runs 1 ms, made of
// 500 calls of a 1 µs callee, each followed by 1 µs of the root's own work.
//
// For each configuration it alternates, call by call, an unmetered root
// call and a metered one (the engine is re-wired between them), so that
// both see the same machine; and it prints medians: the root's wall time
// unmetered, the inclusive time the model gives it, their difference, and
// how many callee firings were metered per root call.
//
//	go run ./bench/fidelity [-calls 400]
//
// Work is a loop of fixed cost, not a loop on the clock, calibrated so that
// an unmetered root call takes 1 ms; so the costs are known and metering
// adds only its own time. The clock is the
// engine's (the runtime's monotonic clock).
package main

import (
	"flag"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/extensions/budget"
	"github.com/meterio/meter/extensions/hotspot"
	"github.com/meterio/meter/meter"
)

// perMicro is how many rounds of work take 1 µs.
var perMicro int

var sum uint64

//go:noinline
func work(rounds int) {
	x := sum
	for i := range rounds {
		x = x*6364136223846793005 + uint64(i)
	}
	sum = x
}

// calibrate sets perMicro so that an unmetered root call takes 1 ms (the
// median of a few).
func calibrate(t *tree) {
	perMicro = 100
	for range 4 {
		var d []float64
		for range 15 {
			s := time.Now()
			t.rootFn()
			d = append(d, float64(time.Since(s)))
		}
		perMicro = max(1, int(float64(perMicro)*float64(time.Millisecond)/median(d)))
	}
}

// tree is one configuration's pair of probes, as generated code has them.
type tree struct {
	rootOn, calleeOn atomic.Uint32
	root, callee     *meter.Probe
}

//go:noinline
func (t *tree) calleeFn() {
	var f meter.Firing
	if t.calleeOn.Load() != 0 {
		f = t.callee.Begin()
	}
	work(perMicro)
	t.callee.End(&f)
}

//go:noinline
func (t *tree) rootFn() {
	var f meter.Firing
	if t.rootOn.Load() != 0 {
		f = t.root.Begin()
	}
	for range 500 {
		t.calleeFn()
		work(perMicro)
	}
	t.root.End(&f)
}

func main() {
	calls := flag.Int("calls", 400, "pairs of root calls per configuration, after 20 warm-up calls")
	flag.Parse()
	meter.Configure(meter.Chain{})
	calibrate(&tree{})
	h := hotspot.Default()
	h.Sample = 0 // the callee would be sampled: the comparison is of every-firing metering
	configs := []struct {
		name  string
		chain meter.Chain
	}{
		{"every firing metered", meter.Chain{Enabled: true}},
		{"budget 10%", meter.Chain{Enabled: true, Budget: &budget.Rule{Percent: 10, Unit: 1000}}},
		{"budget 50%", meter.Chain{Enabled: true, Budget: &budget.Rule{Percent: 50, Unit: 1000}}},
		{"hotspot (defaults, no sampling)", meter.Chain{Enabled: true, Hotspot: &h}},
	}
	fmt.Printf("root: 500 × (1 µs callee + 1 µs own work) = 1 ms of work; %d pairs of calls per configuration, medians\n\n", *calls)
	fmt.Println("| configuration | root unmetered (µs) | root metered, wall (µs) | root inclusive in the model (µs) | model − unmetered (µs) | callee firings metered per root call |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: |")
	off := meter.Chain{Enabled: false}
	for i, c := range configs {
		t := &tree{}
		t.root = meter.NewProbe(fmt.Sprintf("fidelity.root#%d", i), &t.rootOn)
		t.callee = meter.NewProbe(fmt.Sprintf("fidelity.callee#%d", i), &t.calleeOn)
		meter.Configure(c.chain)
		for range 20 {
			t.rootFn()
		}
		var unmetered, wall, model, diff, callees []float64
		for range *calls {
			meter.Configure(off)
			s := time.Now()
			t.rootFn()
			u := float64(time.Since(s).Nanoseconds()) / 1e3

			meter.Configure(c.chain)
			r0, r0n, c0 := t.root.Metered(), total(t.root), t.callee.Metered()
			s = time.Now()
			t.rootFn()
			w := float64(time.Since(s).Nanoseconds()) / 1e3
			m := float64(total(t.root)-r0n) / 1e3
			if t.root.Metered() != r0+1 {
				m = 0
			}
			unmetered, wall, model = append(unmetered, u), append(wall, w), append(model, m)
			diff = append(diff, m-u)
			callees = append(callees, float64(t.callee.Metered()-c0))
		}
		u, d := median(unmetered), median(diff)
		fmt.Printf("| %s | %.1f | %.1f | %.1f | %+.1f (%+.1f%%) | %.0f |\n", c.name, u, median(wall), median(model), d, 100*d/u, median(callees))
	}
}

// total is the probe's total inclusive ns.
func total(p *meter.Probe) int64 {
	for _, r := range meter.Take().Rows {
		if r.Probe == p.Name() {
			return r.Total
		}
	}
	return 0
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
