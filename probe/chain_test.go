package probe

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/export"
	"github.com/meterio/meter/extensions/budget"
	"github.com/meterio/meter/extensions/flowcheck"
	"github.com/meterio/meter/extensions/spotcheck"
	"github.com/meterio/meter/extensions/tracepoint"
	"github.com/meterio/meter/internal/env"
	"github.com/meterio/meter/meter"
)

// Tests here wire the engine, which is global: they run one at a time.
// The chain with every extension is built once and shared.

const us = 1000

var (
	fullOnce  sync.Once
	fullChain meter.Chain
)

// full is every extension at once, built by chain() from properties.
func full(t *testing.T) meter.Chain {
	fullOnce.Do(func() {
		props := map[string]string{
			"METER_HOTSPOT_INITIAL":    "5",
			"METER_TRACEPOINT_ENABLED": "true",
			"METER_TRACEPOINT_SAMPLE":  "1",
			"METER_TRACEPOINT_INCLUDE": `^chain_test\.`,
			"METER_FLOWCHECK_ENABLED":  "true",
			"METER_FLOWCHECK_LOWER":    "0",
			"METER_FLOWCHECK_UPPER":    "0",
			"METER_BUDGET_ENABLED":     "true",
			"METER_BUDGET_PERCENT":     "100",
			"METER_SPOTCHECK_ENABLED":  "true",
			"METER_SPOTCHECK_INTERVAL": "10",
			"METER_TRACE_MAX":          "50",
		}
		var errs strings.Builder
		c := env.Load(func(k string) (string, bool) { v, ok := props[k]; return v, ok }, &errs)
		if errs.Len() > 0 {
			panic(errs.String())
		}
		fullChain = chain(c)
	})
	return fullChain
}

// configure wires c for one test, then wires what setup wired (nothing,
// if no probe was registered).
func configure(t *testing.T, c meter.Chain) {
	meter.Configure(c)
	t.Cleanup(func() { meter.Configure(chain(config)) })
}

var nprobes atomic.Int64

// newProbe makes a probe as generated code has one: a gate word and a
// registered meter.Probe.
func newProbe(name string) *Probe {
	p := new(Probe)
	p.m = meter.NewProbe(fmt.Sprintf("chain_test.%s#%d", name, nprobes.Add(1)), &p.on)
	return p
}

var clk clock.Manual

// fire runs a firing of p, as generated code does, that costs cost ns of
// its own with body nested in it.
func fire(p *Probe, cost int64, body func()) {
	if p.On() {
		defer p.Begin().End()
	}
	clk.Advance(cost)
	if body != nil {
		body()
	}
}

func TestChainOrder(t *testing.T) {
	c := full(t)
	configure(t, c)
	var names []string
	for _, e := range meter.Take().Extensions {
		names = append(names, e[:strings.IndexByte(e, '(')])
	}
	if s := strings.Join(names, ","); s != "hotspot,tracepoint,flowcheck,budget,spotcheck" {
		t.Fatalf("extensions %s", s)
	}
	if len(c.Gates) != 2 || c.Allowance == nil || c.Spotter == nil || !c.KeepGates || c.TraceMax != 50 {
		t.Fatalf("chain %+v", c)
	}
	if _, ok := c.Judges[0].(meter.Spotter); !ok {
		t.Fatalf("spotcheck is not the first judge: %T", c.Judges[0])
	}
	want := []string{
		"hotspot(threshold=10000ns inherent=2000ns initial=5)",
		`tracepoint(sample=1 include="^chain_test\\.")`,
		"flowcheck(lower=0 upper=0)",
		"budget(percent=100 unit=1000ns)",
		"spotcheck(interval=10 threshold=10000ns inherent=2000ns)",
	}
	if got := meter.Take().Extensions; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("model header %q, want %q", got, want)
	}
	if c := chain(env.Defaults()); len(c.Extensions) != 1 || len(c.Gates) != 0 || c.Allowance != nil || c.KeepGates || len(c.Judges) != 1 {
		t.Fatalf("default chain %+v", c)
	}
}

// Hotspot disables a probe that turns cheap; spot checks meter it while it
// is disabled, and the first hot one gives it back to hotspot with a full
// balance.
func TestSpotcheckFollowsCost(t *testing.T) {
	configure(t, full(t))
	clk = clock.UseManual()
	p := newProbe("changes")
	for range 6 { // the first firing only teaches that p returns
		fire(p, 1*us, nil)
	}
	if r := p.m.Disabled(); r != meter.DisabledHotspot {
		t.Fatalf("after 5 cold firings: disabled = %d", r)
	}
	if !p.On() {
		t.Fatalf("spotcheck on: gate word cleared")
	}
	for range 20 {
		fire(p, 1*us, nil)
	}
	if p.m.Count() != 5+2 || p.m.Disabled() != meter.DisabledHotspot {
		t.Fatalf("count %d, disabled %d; want 7 and still disabled", p.m.Count(), p.m.Disabled())
	}
	for range 10 {
		fire(p, 40*us, nil) // the cost changes
	}
	if p.m.Disabled() != meter.Enabled || p.m.Count() != 8 {
		t.Fatalf("after a hot spot check: disabled %d, count %d", p.m.Disabled(), p.m.Count())
	}
	// Back with a full balance: 4 cold firings do not disable it again.
	for range 4 {
		fire(p, 1*us, nil)
	}
	if p.m.Disabled() != meter.Enabled || p.m.Count() != 12 {
		t.Fatalf("after 4 cold firings: disabled %d, count %d", p.m.Disabled(), p.m.Count())
	}
}

// Inside a trace firings are metered subject to budget; outside one,
// nothing is.
func TestTraceWithBudget(t *testing.T) {
	clk = clock.UseManual()
	tp := tracepoint.New(1, regexp.MustCompile(`\.root#`))
	b := budget.New(10, us)
	configure(t, meter.Chain{Enabled: true, Gates: []meter.Gate{tp}, Allowance: b, Judges: []meter.Judge{b}})
	root, leaf := newProbe("root"), newProbe("leaf")
	calls := func() {
		for range 500 {
			fire(leaf, 20*us, nil)
		}
	}
	fire(root, 1000*us, calls) // not metered: root has never ended
	calls()                    // leaf may not start traces
	if root.m.Count() != 0 || leaf.m.Count() != 0 {
		t.Fatalf("outside a trace: metered")
	}
	fire(root, 1000*us, nil) // a trace of root alone: T = 1,000 µs, A = 100
	if root.m.Count() != 1 || b.Allowance(root.m) != 100 {
		t.Fatalf("root: count %d, allowance %d", root.m.Count(), b.Allowance(root.m))
	}
	fire(root, 0, calls) // a trace: root and 99 leaves
	if r, l := root.m.Count(), leaf.m.Count(); r != 2 || l != 99 {
		t.Fatalf("budgeted trace: root %d, leaf %d; want 2, 99", r, l)
	}
}

// Flowcheck and tracepoint together: either may start a trace, and a trace
// ending redraws flowcheck's countdown.
func TestGatesCombine(t *testing.T) {
	tp := tracepoint.New(4, regexp.MustCompile(`\.tp#`))
	fc := flowcheck.New(2, 2)
	configure(t, meter.Chain{Enabled: true, Gates: []meter.Gate{tp, fc}})
	a, b := newProbe("tp"), newProbe("other")
	fire(a, 0, nil)
	fire(b, 0, nil)
	var got []string
	for i := 1; i <= 8; i++ {
		ca, cb := a.m.Count(), b.m.Count()
		fire(a, 0, nil)
		fire(b, 0, nil)
		got = append(got, fmt.Sprintf("%d%d", a.m.Count()-ca, b.m.Count()-cb))
	}
	// flowcheck skips 2 offered firings, starts on the 3rd, and redraws
	// when any trace ends; tracepoint starts on a's 4th and 8th.
	if s, want := fmt.Sprint(got), "[00 10 01 10 01 00 10 10]"; s != want {
		t.Fatalf("a and b metered per round %s, want %s", s, want)
	}
}

func TestChainAllocs(t *testing.T) {
	clk = clock.UseManual()
	configure(t, full(t))
	root, leaf := newProbe("root"), newProbe("leaf")
	fire(root, 100*us, nil)
	fire(leaf, 20*us, nil)
	call := func() {
		fire(root, 100*us, func() {
			for range 30 {
				fire(leaf, 20*us, nil)
			}
		})
	}
	call()
	if n := testing.AllocsPerRun(200, call); n != 0 {
		t.Fatalf("%v allocations per traced call", n)
	}
}

func TestMeta(t *testing.T) {
	configure(t, full(t))
	path := t.TempDir() + "/model.csv.meta"
	if err := export.WriteMetaFile(path, meter.Take()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nextensions: hotspot(threshold=10000ns inherent=2000ns initial=5) tracepoint(", " budget(percent=100 unit=1000ns) spotcheck(", "\ntruncated_traces: "} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("meta lacks %q:\n%s", want, b)
		}
	}
}

// spanCounter records the largest and the total number of spans per trace.
type spanCounter struct {
	sync.Mutex
	traces, spans, most, least int
}

func (s *spanCounter) TraceStarted(g *meter.Goroutine, root *meter.Probe) {}

func (s *spanCounter) TraceSpans(_ uint64, spans []meter.Span, _, _ bool) {
	s.Lock()
	s.traces++
	s.spans += len(spans)
	s.most = max(s.most, len(spans))
	s.least = min(s.least, len(spans))
	s.Unlock()
}

// fixedAllowance gives root 100 units and anything else 2, whatever
// their times.
type fixedAllowance struct{ root *meter.Probe }

func (f fixedAllowance) Allowance(p *meter.Probe) int64 {
	if p == f.root {
		return 100
	}
	return 2
}

// Many goroutines, each tracing root calls under a budget of 100: every
// trace holds exactly 100 measurements (the root and 99 of its 300 leaves),
// and the race detector watches the engine's pools and the shared words.
func TestBudgetManyGoroutines(t *testing.T) {
	root, leaf := newProbe("root"), newProbe("leaf")
	tp := tracepoint.New(1, regexp.MustCompile(`\.root#`))
	spans := &spanCounter{least: 1 << 30}
	configure(t, meter.Chain{Enabled: true, Gates: []meter.Gate{tp}, Allowance: fixedAllowance{root.m}, Sink: spans})
	fire(root, 0, nil) // ended once: may start traces
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				fire(root, 0, func() {
					for range 300 {
						fire(leaf, 0, nil)
					}
				})
			}
		}()
	}
	wg.Wait()
	if spans.traces != 16*20 || spans.most != 100 || spans.least != 100 {
		t.Fatalf("%d traces of %d to %d spans; want %d of exactly 100", spans.traces, spans.least, spans.most, 16*20)
	}
	if r, l := root.m.Count(), leaf.m.Count(); r != 16*20 || l != 16*20*99 {
		t.Fatalf("root %d, leaf %d metered; want %d, %d", r, l, 16*20, 16*20*99)
	}
}

// A spot check is a nested firing like any other: it draws on its metered
// ancestors' pool (not on its own allowance, which may be why it is
// disabled), so spotcheck does not let a budgeted call measure more than
// its allowance; and it counts towards the trace maximum.
func TestSpotcheckWithinBudget(t *testing.T) {
	clk = clock.UseManual()
	b := budget.New(10, us)
	s := spotcheck.New(1, 10*us, 2*us) // every disabled firing
	configure(t, meter.Chain{Enabled: true, Allowance: b, Spotter: s, KeepGates: true,
		Judges: []meter.Judge{s, b}})
	root, wrapper, leaf := newProbe("root"), newProbe("wrapper"), newProbe("leaf")
	fire(root, 1000*us, nil) // A = 100
	fire(leaf, 20*us, nil)   // A = 2
	wrapper.m.Disable(meter.DisabledHotspot)
	calls := func() {
		for range 300 {
			fire(leaf, 20*us, nil)
		}
	}
	r0, w0, l0 := root.m.Count(), wrapper.m.Count(), leaf.m.Count()
	fire(root, 0, func() {
		for range 3 {
			fire(wrapper, 0, calls)
		}
	})
	// root 1, the first wrapper 1 and 98 of its leaves: then the pool is
	// empty, and the other two spot checks are not metered.
	if r, w, l := root.m.Count()-r0, wrapper.m.Count()-w0, leaf.m.Count()-l0; r != 1 || w != 1 || l != 98 {
		t.Fatalf("root %d, wrapper %d, leaf %d metered; want 1, 1, 98", r, w, l)
	}
	// At the top of a goroutine a spot check is unlimited, as before.
	w0 = wrapper.m.Count()
	fire(wrapper, 0, nil)
	if wrapper.m.Count() != w0+1 {
		t.Fatalf("a top-level spot check was not metered")
	}
}

// A spot check that the engine does not meter (its ancestor's pool is
// empty) is not waited for: a firing that began before its probe was
// disabled, and ends hot, is not judged in its place.
func TestSkippedSpotCheckIsNotJudged(t *testing.T) {
	clk = clock.UseManual()
	b := budget.New(10, us)
	s := spotcheck.New(1, 10*us, 2*us)
	configure(t, meter.Chain{Enabled: true, Allowance: b, Spotter: s, KeepGates: true,
		Judges: []meter.Judge{s, b}})
	root, p := newProbe("root"), newProbe("p")
	fire(root, 10*us, nil) // A = 1: its pool is empty once it is metered
	fire(p, 20*us, nil)    // A = 2
	long := p.Begin()      // metered while p is enabled
	p.m.Disable(meter.DisabledHotspot)
	fire(root, 0, func() { fire(p, 0, nil) }) // due a spot check, not metered: the pool is empty
	if p.m.Count() != 1 {
		t.Fatalf("%d firings of p metered, want 1", p.m.Count())
	}
	clk.Advance(50 * us)
	long.End() // hot, but not a spot check
	if p.m.Disabled() != meter.DisabledHotspot {
		t.Fatalf("the skipped spot check's place was taken: p re-enabled")
	}
}

func TestSpotcheckTraceMax(t *testing.T) {
	tp := tracepoint.New(1, regexp.MustCompile(`\.root#`))
	s := spotcheck.New(1, 10*us, 2*us)
	configure(t, meter.Chain{Enabled: true, Gates: []meter.Gate{tp}, Spotter: s, KeepGates: true,
		Judges: []meter.Judge{s}, TraceMax: 5})
	root, off := newProbe("root"), newProbe("off")
	off.m.Disable(meter.DisabledHotspot)
	fire(root, 0, nil)
	fire(root, 0, func() {
		for range 20 {
			fire(off, 0, nil)
		}
	})
	if r, o := root.m.Count(), off.m.Count(); r != 1 || o != 4 {
		t.Fatalf("root %d, spot-checked %d metered in a trace of at most 5", r, o)
	}
}
