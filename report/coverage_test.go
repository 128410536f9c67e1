package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meterio/meter/schema"
)

// simCall is one firing in a simulated program: its probe, its own time
// and the firings nested directly in it.
type simCall struct {
	probe string
	self  int64
	kids  []*simCall
}

func (c *simCall) inclusive() int64 {
	n := c.self
	for _, k := range c.kids {
		n += k.inclusive()
	}
	return n
}

// simulate runs goroutines (each a list of top-level firings) as the
// runtime would see them with a trace gate on: a firing of an entry
// outside any trace starts one with probability 1/every, and the firings
// of a trace become traced call paths. (The tracepoint takes every
// every-th firing instead; a program whose nesting repeats in step with
// that can skew the estimate, which a random start cannot.) It
// returns the model with its profile, and the true covered time: the
// inclusive time of entry firings with no entry open beneath them.
func simulate(rng *rand.Rand, goroutines [][]*simCall, entries []string, every int) (m *Model, truth int64) {
	isEntry := map[string]bool{}
	for _, e := range entries {
		isEntry[e] = true
	}
	rows := map[string]*Row{}
	p := &Profile{SampleTypes: []ValueType{{schema.SampleCount, "count"}, {schema.SampleInclusive, "nanoseconds"}, {schema.SampleInherent, "nanoseconds"}},
		DefaultSampleType: schema.SampleInherent}
	traced := map[string][]string{"source": {"trace"}}
	var fire func(c *simCall, path []string, inTrace, entryOpen bool)
	fire = func(c *simCall, path []string, inTrace, entryOpen bool) {
		incl := c.inclusive()
		r := rows[c.probe]
		if r == nil {
			r = &Row{Probe: c.probe}
			rows[c.probe] = r
		}
		r.Count++
		r.Total += incl
		r.InherentTotal += c.self
		if isEntry[c.probe] && !entryOpen {
			truth += incl
		}
		if !inTrace && isEntry[c.probe] && rng.IntN(every) == 0 {
			inTrace, path = true, nil
		}
		if inTrace {
			path = append(path, c.probe)
			stack := slices.Clone(path)
			slices.Reverse(stack) // leaf first
			p.Samples = append(p.Samples, Sample{Stack: stack, Values: []int64{1, incl, c.self}, Labels: traced})
		}
		for _, k := range c.kids {
			fire(k, path, inTrace, entryOpen || isEntry[c.probe])
		}
	}
	for _, g := range goroutines {
		for _, c := range g {
			fire(c, nil, false, false)
		}
	}
	m = &Model{Name: "sim.csv", Roots: entries, Profile: p}
	for _, r := range rows {
		m.Rows = append(m.Rows, *r)
	}
	slices.SortFunc(m.Rows, func(a, b Row) int { return strings.Compare(a.Probe, b.Probe) })
	return m, truth
}

// request is one HTTP request through a router, a middleware closure and a
// handler, three entries; the handler calls the store, and, when job is
// not nil, runs a job inline.
func request(rng *rand.Rand, job *simCall) *simCall {
	h := &simCall{probe: "app.handle", self: 20_000 + rng.Int64N(60_000), kids: []*simCall{{probe: "app.get", self: 3_000}}}
	if job != nil {
		h.kids = append(h.kids, job)
	}
	mw := &simCall{probe: "app.routes.func1", self: 2_000, kids: []*simCall{h}}
	return &simCall{probe: "net/http.(*ServeMux).ServeHTTP", self: 5_000, kids: []*simCall{mw}}
}

func job(rng *rand.Rand) *simCall {
	return &simCall{probe: "app.job", self: 30_000 + rng.Int64N(40_000), kids: []*simCall{{probe: "app.get", self: 3_000}}}
}

func entry(c Coverage, probe string) Entry {
	for _, e := range c.Entries {
		if e.Probe == probe {
			return e
		}
	}
	return Entry{}
}

// A request through three nested entries is counted once: the covered
// time is the router's, exactly, though each of the three started traces
// of its own (the tracepoint samples every entry's firings outside traces).
func TestCoverageNestedEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var g []*simCall
	for range 2000 {
		g = append(g, request(rng, nil))
	}
	m, truth := simulate(rng, [][]*simCall{g}, []string{"net/http.(*ServeMux).ServeHTTP", "app.routes.func1", "app.handle"}, 100)
	c := m.Coverage()
	if !c.Nesting || c.Covered != truth {
		t.Fatalf("covered %d, want the router's %d exactly; %+v", c.Covered, truth, c.Entries)
	}
	var sum int64
	for _, e := range c.Entries {
		sum += e.Total
	}
	if sum < 2*truth {
		t.Fatalf("the entries' totals sum to %d, not far above the truth %d: the test shows nothing", sum, truth)
	}
	if e := entry(c, "app.handle"); e.Outer != 0 || e.Covered != 0 || fmt.Sprint(e.Inside) != "[app.routes.func1]" {
		t.Errorf("handler: %+v", e)
	}
	if e := entry(c, "app.routes.func1"); e.Outer != 0 || fmt.Sprint(e.Inside) != "[net/http.(*ServeMux).ServeHTTP]" {
		t.Errorf("middleware: %+v", e)
	}
	if e := entry(c, "net/http.(*ServeMux).ServeHTTP"); e.Outer != 1 || len(e.Inside) != 0 {
		t.Errorf("router: %+v", e)
	}
	// On one goroutine the covered time cannot pass the wall time.
	m.Wall = time.Duration(truth)
	page := render(t, m)
	if !strings.Contains(page, `<span class="big" id="share-wall">100.0%</span> of its wall time`) ||
		!strings.Contains(page, "Not counted, as they run inside other entries: <code>app.routes.func1</code> (inside <code>net/http.(*ServeMux).ServeHTTP</code>), "+
			"<code>app.handle</code> (inside <code>app.routes.func1</code>).") {
		t.Errorf("page:\n%s", page[strings.Index(page, `<section id="coverage">`):strings.Index(page, `<section id="model">`)])
	}
}

// An entry that runs both on its own goroutine and inside a handler is
// counted for its outermost calls only, as estimated from the traces, to
// within a few percent of the truth over many programs.
func TestCoverageEntryInPart(t *testing.T) {
	worst := 0.0
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var requests, worker []*simCall
		for range 10000 {
			var j *simCall
			if rng.Float64() < 0.3 {
				j = job(rng)
			}
			requests = append(requests, request(rng, j))
		}
		for range 1500 + rng.IntN(3000) {
			worker = append(worker, job(rng))
		}
		m, truth := simulate(rng, [][]*simCall{requests, worker}, []string{"net/http.(*ServeMux).ServeHTTP", "app.routes.func1", "app.handle", "app.job"}, 10)
		c := m.Coverage()
		e := entry(c, "app.job")
		if e.Outer <= 0 || e.Outer >= 1 || fmt.Sprint(e.Inside) != "[app.handle]" {
			t.Fatalf("seed %d: job %+v", seed, e)
		}
		if seed == 0 {
			page := render(t, m)
			checkNesting(t, page)
			if want := fmt.Sprintf("Counted for the share of their calls that run inside no other entry: <code>app.job</code> (%s; otherwise inside <code>app.handle</code>).",
				percentOf(e.Outer)); !strings.Contains(page, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		worst = max(worst, math.Abs(float64(c.Covered)/float64(truth)-1))
	}
	if worst > 0.03 {
		t.Fatalf("covered time off the truth by up to %.1f%%", 100*worst)
	}
	t.Logf("covered time within %.2f%% of the truth in 10 programs", 100*worst)
}

// A handler that calls another entry's ServeHTTP (an internal redirect)
// runs inside itself: the inner firing is not counted again.
func TestCoverageRecursiveEntry(t *testing.T) {
	var g []*simCall
	for i := range 10000 {
		c := &simCall{probe: "app.serve", self: 10_000}
		if i%2 == 0 {
			c.kids = []*simCall{{probe: "app.serve", self: 10_000}}
		}
		g = append(g, c)
	}
	m, truth := simulate(rand.New(rand.NewPCG(3, 4)), [][]*simCall{g}, []string{"app.serve"}, 10)
	c := m.Coverage()
	if d := math.Abs(float64(c.Covered)/float64(truth) - 1); d > 0.03 {
		t.Fatalf("covered %d, truth %d (total %d)", c.Covered, truth, c.Entries[0].Total)
	}
	if e := c.Entries[0]; e.Outer <= 0.6 || e.Outer >= 0.7 || fmt.Sprint(e.Inside) != "[app.serve]" {
		t.Fatalf("entry %+v: want two calls in three outermost", e)
	}
}

// Entries that contain each other through different paths settle on
// shares between 0 and 1, and the covered time on the truth.
func TestCoverageEntriesInsideEachOther(t *testing.T) {
	var g []*simCall
	for i := range 3000 {
		a := &simCall{probe: "app.a", self: 10_000}
		b := &simCall{probe: "app.b", self: 20_000}
		switch i % 3 {
		case 0:
			a.kids = []*simCall{b}
			g = append(g, a)
		case 1:
			b.kids = []*simCall{a}
			g = append(g, b)
		default:
			g = append(g, a, b)
		}
	}
	m, truth := simulate(rand.New(rand.NewPCG(5, 6)), [][]*simCall{g}, []string{"app.a", "app.b"}, 10)
	c := m.Coverage()
	for _, e := range c.Entries {
		if e.Outer <= 0 || e.Outer >= 1 {
			t.Errorf("%s: outer share %g", e.Probe, e.Outer)
		}
	}
	if d := math.Abs(float64(c.Covered)/float64(truth) - 1); d > 0.05 {
		t.Fatalf("covered %d, truth %d", c.Covered, truth)
	}
}

// Without traced call paths, several entries give a range: at least the
// largest, at most their sum.
func TestCoverageWithoutPaths(t *testing.T) {
	m := &Model{Name: "m.csv", Roots: []string{"app.serve", "app.handle"}, Wall: 2 * time.Second, CPU: time.Second,
		Rows: []Row{{Probe: "app.serve", Count: 10, Total: 1_000_000_000}, {Probe: "app.handle", Count: 10, Total: 900_000_000}}}
	c := m.Coverage()
	if c.Nesting || c.Least != 1_000_000_000 || c.Covered != 1_900_000_000 {
		t.Fatalf("%+v", c)
	}
	page := render(t, m)
	for _, want := range []string{
		`took between <span class="big" id="least">1.00 s</span> and <span class="big" id="covered">1.90 s</span>: ` +
			`from <span class="big" id="share-wall-least">50.0%</span> of its wall time and <span class="big" id="share-cpu-least">100.0%</span> of its CPU time ` +
			`to <span class="big" id="share-wall">95.0%</span> of its wall time and <span class="big" id="share-cpu">190.0%</span> of its CPU time.`,
		`id="nesting-unknown">Which entries run inside others is not known`,
		`<p class="note" id="roots">Entry probes: <code>app.serve</code>, <code>app.handle</code>.</p>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "comes from the traced call paths") {
		t.Error("the page says nesting comes from traced call paths it does not have")
	}
	// One entry needs no nesting.
	m.Roots = m.Roots[:1]
	if c := m.Coverage(); c.Least != c.Covered || c.Covered != 1_000_000_000 {
		t.Fatalf("one entry: %+v", c)
	}
}

// An entry that is untimed or sampled makes the figure a bound or an
// estimate, and the page says which.
func TestCoveragePartialEntries(t *testing.T) {
	m := &Model{Name: "m.csv", Roots: []string{"app.serve", "app.tick", "app.poll"}, Wall: time.Second,
		Rows: []Row{{Probe: "app.serve", Count: 10, Total: 500_000_000, Label: schema.LabelSampled},
			{Probe: "app.tick", Count: 1_000_000, Label: schema.LabelUntimed}, {Probe: "app.poll", Count: 3, Total: 3_000, Label: schema.LabelTraced}}}
	page := render(t, m)
	for _, want := range []string{
		`<p class="note" id="partial-roots">The figure is a lower bound. No times of their own: their calls are too short to time (untimed): <code>app.tick</code>.</p>`,
		`<p class="note" id="estimated-roots">The figure holds estimates. Times estimated from a sample of their calls (sampled): <code>app.serve</code>. ` +
			`Times from traced calls only (traced): <code>app.poll</code>.</p>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestPercentOf(t *testing.T) {
	for share, want := range map[float64]string{0: "0%", 0.004: "<1%", 0.38: "38%", 0.995: ">99%", 1: "100%"} {
		if got := percentOf(share); got != want {
			t.Errorf("percentOf(%g) = %q, want %q", share, got, want)
		}
	}
}

// A share near an end is said to be near it, escaped on the page.
func TestCoverageShareNearAnEnd(t *testing.T) {
	traced := map[string][]string{"source": {"trace"}}
	m := &Model{Name: "m.csv", Roots: []string{"app.a", "app.b"},
		Rows: []Row{{Probe: "app.a", Count: 996, Total: 996_000}, {Probe: "app.b", Count: 1000, Total: 500_000}},
		Profile: &Profile{SampleTypes: []ValueType{{schema.SampleCount, "count"}, {schema.SampleInclusive, "nanoseconds"}, {schema.SampleInherent, "nanoseconds"}},
			Samples: []Sample{{Stack: []string{"app.a"}, Values: []int64{1, 1000, 500}, Labels: traced},
				{Stack: []string{"app.b", "app.a"}, Values: []int64{1, 500, 500}, Labels: traced}}}}
	c := m.Coverage()
	if b := entry(c, "app.b"); math.Abs(b.Outer-0.004) > 1e-9 || b.Covered != 2_000 {
		t.Fatalf("app.b: %+v", b)
	}
	page := render(t, m)
	checkNesting(t, page)
	if !strings.Contains(page, "<code>app.b</code> (&lt;1%; otherwise inside <code>app.a</code>)") {
		t.Errorf("page:\n%s", page[strings.Index(page, `id="roots"`):])
	}
}
