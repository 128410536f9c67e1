//go:build amd64 && !race

package meter

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/meterio/meter/extensions/flowcheck"
	"github.com/meterio/meter/extensions/spotcheck"
	"github.com/meterio/meter/extensions/tracepoint"
)

// The assembly leaf (begin_amd64.s) must decide every firing as beginGo
// does. Each chain below runs the same script of firings twice on fresh
// probes: through Begin, which calls the leaf, and through beginGo
// directly; every Firing returned and everything the firings leave behind
// must be the same.

//go:noinline
func beginByGo(p *Probe) Firing {
	pos, pc := callerFrame()
	return firingOf(beginGo(p, nil, pos, pc))
}

type mirrorRun struct {
	begin   func(p *Probe) Firing
	probes  []*Probe
	firings []int32 // per firing: -2 nil, -1 firstEnd, else the frame's index
}

func (m *mirrorRun) fire(i int, cost int64, body func()) {
	p := m.probes[i]
	f := m.begin(p)
	switch fr := f.frame(); fr {
	case nil:
		m.firings = append(m.firings, -2)
	case firstEnd:
		m.firings = append(m.firings, -1)
	default:
		m.firings = append(m.firings, fr.index)
	}
	clk.Advance(cost)
	if body != nil {
		body()
	}
	p.End(&f)
}

// script fires five probes in nested patterns, with a disabled probe
// among them, and, where the chain has room for them (no trace gate), a
// sampled and an untimed one from round 60 on, across a few goroutines
// one after another.
func (m *mirrorRun) script() {
	m.probes[3].Disable(DisabledHotspot)
	for round := 0; round < 300; round++ {
		if round == 60 && !engine.gated {
			m.probes[1].setState(m.probes[1].State(), Sampled)
			m.probes[4].setState(m.probes[4].State(), Untimed)
		}
		m.fire(0, 1*us, func() {
			m.fire(1, int64(round%7)*us, func() {
				m.fire(2, 100, nil)
				m.fire(3, 100, nil)
				m.fire(4, 100, nil)
			})
			m.fire(2, 300, func() { m.fire(3, 100, nil) })
		})
		if round%50 == 49 {
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := 0; i < 20; i++ {
					m.fire(i%5, 200, nil)
				}
			}()
			<-done
		}
	}
}

// state is what a run leaves: per probe, its state, statistics and count;
// and the engine's counters.
func (m *mirrorRun) state() string {
	s := ""
	for i, p := range m.probes {
		r := p.row()
		var taken int64
		if ls := p.count.leases.Load(); ls != nil {
			taken = ls.taken.Load()
		}
		s += fmt.Sprintf("%d: state %d count %d metered %d total %d inherent %d label %q taken %d counted %d\n",
			i, p.State(), r.Count, r.Metered, r.Total, r.InherentTotal, r.Label, taken, p.count.Counted())
	}
	return s
}

func TestAssemblyMirrorsGo(t *testing.T) {
	// One P: sampled probes count down on the P's slot, which must be the
	// same in both runs.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	h := hot()
	h.Sample = 4
	chains := map[string]func() Chain{
		"ungated":    func() Chain { return Chain{Hotspot: hot()} },
		"sampling":   func() Chain { return Chain{Hotspot: h} },
		"tracepoint": func() Chain { return Chain{Hotspot: hot(), Tracepoint: &tracepoint.Rule{Sample: 7}} },
		"flowcheck":  func() Chain { return Chain{Flowcheck: &flowcheck.Rule{Lower: 3, Upper: 9}} },
		"both+spot": func() Chain {
			return Chain{Tracepoint: &tracepoint.Rule{Sample: 5}, Flowcheck: &flowcheck.Rule{Lower: 2, Upper: 6},
				Spotcheck: &spotcheck.Rule{Interval: 3, Threshold: 10 * us, ThresholdInherent: 2 * us}, TraceMax: 4}
		},
	}
	for name, chain := range chains {
		t.Run(name, func(t *testing.T) {
			var runs [2]*mirrorRun
			var states [2]string
			for k, begin := range []func(*Probe) Firing{(*Probe).Begin, beginByGo} {
				c := chain()
				c.Seed = 7
				draws := uint64(0)
				c.Rand = func() uint64 { draws++; return draws * 2654435761 }
				wire(t, c)
				draws = 0 // wiring readied the earlier runs' sampled probes
				m := &mirrorRun{begin: begin}
				for i := 0; i < 5; i++ {
					m.probes = append(m.probes, newProbe(t, fmt.Sprint(i)))
				}
				m.script()
				runs[k], states[k] = m, m.state() // before the next run's wiring resets the counts
			}
			if !reflect.DeepEqual(runs[0].firings, runs[1].firings) {
				for i := range runs[0].firings {
					if runs[0].firings[i] != runs[1].firings[i] {
						t.Fatalf("firing %d: the assembly returned %d, Go %d (-2 nil, -1 firstEnd, else a frame's index)", i, runs[0].firings[i], runs[1].firings[i])
					}
				}
				t.Fatalf("%d firings through the assembly, %d through Go", len(runs[0].firings), len(runs[1].firings))
			}
			if a, g := states[0], states[1]; a != g {
				t.Fatalf("after the assembly:\n%s\nafter Go:\n%s", a, g)
			}
		})
	}
}

// writeRow (assembly) adds exactly what writeRowGo adds.
func TestWriteRowMirrorsGo(t *testing.T) {
	var a, g row
	a.min, g.min = 1<<62, 1<<62
	for i, v := range []int64{5, 1, 99, 7, 7, 1 << 40, 3} {
		writeRow(&a, v, v-int64(i), int64(i))
		writeRowGo(&g, v, v-int64(i), int64(i))
		if a != g {
			t.Fatalf("after %d: assembly %+v, Go %+v", v, a, g)
		}
	}
	if a.seq != 14 || a.count != 7 || a.min != 1 || a.max != 1<<40 {
		t.Fatalf("row %+v", a)
	}
}
