package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meterio/meter/schema"
)

func oneRun(m *Model) *Runs { return &Runs{Name: m.Name, Models: []*Model{m}} }

func compareModels() (old, cur *Model) {
	old = &Model{Name: "old.csv",
		Rows: []Row{
			{Probe: "a.handle", Count: 100, Total: 100_000_000, InherentTotal: 50_000_000, Label: "hotspot"},
			{Probe: "a.parse", Count: 50, Total: 500_000, InherentTotal: 250_000},
			{Probe: "a.gone", Count: 10, Total: 10_000, InherentTotal: 10_000, Label: "disabled"},
			{Probe: "a.quick", Count: 90_000, Label: "untimed"},
			{Probe: "a.once", Count: 1, Total: 2_000, InherentTotal: 2_000},
			{Probe: "a.zero", Label: "budget"},
		},
		Meta: []Field{{Key: "extensions", Value: "hotspot(threshold=10000ns inherent=2000ns initial=1000)"}},
	}
	cur = &Model{Name: "new.csv",
		Rows: []Row{
			{Probe: "a.handle", Count: 120, Total: 108_000_000, InherentTotal: 60_000_000, Label: "hotspot"},
			{Probe: "a.fresh", Count: 7, Total: 7_000, InherentTotal: 3_500, Label: "hotspot"},
			{Probe: "a.parse", Count: 40, Total: 420_000, InherentTotal: 200_000, Label: "hotspot"},
			{Probe: "a.quick", Count: 99_000, Label: "untimed"},
			{Probe: "a.once", Count: 3, Total: 3_000, InherentTotal: 3_000},
			{Probe: "a.zero", Label: "budget"},
		},
		Meta: []Field{{Key: "extensions", Value: "hotspot(threshold=10000ns inherent=2000ns initial=1000)"}},
	}
	return old, cur
}

// One run a side: the changes, no significance, the old model's order,
// and one line saying so. geomean over handle, parse and once: inclusive
// (1ms·10µs·2µs)^⅓ = 27.1µs → (900µs·10.5µs·1µs)^⅓ = 21.1µs, −22.11%;
// inherent (500µs·5µs·2µs)^⅓ = 17.1µs → 13.6µs, (½)^⅓ − 1 = −20.63%.
const wantCompare = `probe     calls          delta     inclusive/call   delta     inherent/call    delta     label
a.handle  100 → 120      +20.00%   1.00ms → 900µs   -10.00%   500µs → 500µs    ±0.00%    hotspot
a.parse   50 → 40        -20.00%   10.0µs → 10.5µs  +5.00%    5.00µs → 5.00µs  ±0.00%    none → hotspot
a.gone    10 → –         vanished  1.00µs → –       vanished  1.00µs → –       vanished  disabled
a.once    1 → 3          +200.00%  2.00µs → 1.00µs  -50.00%   2.00µs → 1.00µs  -50.00%
a.quick   90000 → 99000  +10.00%   untimed                    untimed                    untimed
a.zero    0 → 0          ±0.00%    – → –            –         – → –            –         budget
a.fresh   – → 7          appeared  – → 1.00µs       appeared  – → 500ns        appeared  hotspot
geomean                            27.1µs → 21.1µs  -22.11%   17.1µs → 13.6µs  -20.63%
one run a side: no significance can be given, only the changes; the order is the old model's. Give each side a directory of models from several runs (5 or more) for p-values across runs
`

func TestCompareOneRun(t *testing.T) {
	old, cur := compareModels()
	var b strings.Builder
	if err := Compare(&b, oneRun(old), oneRun(cur), CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	if b.String() != wantCompare {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), wantCompare)
	}
	if strings.Contains(b.String(), "(p=") || strings.Contains(b.String(), "~") || strings.Contains(b.String(), " 0ns") {
		t.Error("significance marks, or an untimed row's times as 0 ns, with one run a side")
	}

	// Different chains are said to differ.
	cur.Meta = []Field{{Key: "extensions", Value: "hotspot(threshold=10000ns inherent=2000ns initial=1000) budget(percent=10 unit=1000ns)"}}
	b.Reset()
	Compare(&b, oneRun(old), oneRun(cur), CompareOptions{})
	if !strings.Contains(b.String(), `the chains differ: old.csv has "hotspot(`) || !strings.Contains(b.String(), `new.csv has "hotspot(threshold=10000ns inherent=2000ns initial=1000) budget(`) {
		t.Errorf("different chains:\n%s", b.String())
	}
}

// scaled returns a copy of m with each row's times multiplied by f(row).
func scaled(m *Model, name string, f func(r Row) (count, times float64)) *Model {
	c := &Model{Name: name, Meta: m.Meta}
	for _, r := range m.Rows {
		n, k := f(r)
		r.Count = int64(math.Round(float64(r.Count) * n))
		r.Total = int64(math.Round(float64(r.Total) * n * k))
		r.InherentTotal = int64(math.Round(float64(r.InherentTotal) * n * k))
		c.Rows = append(c.Rows, r)
	}
	return c
}

// Five runs a side: a.handle's times rise 25% in every run (U = 0, p =
// 2/252 for each of its two times, Holm ×2 → 0.016); its calls are the
// same in every run (p = 1, and no test of the family). a.parse's times
// wander a few percent both ways: not significant. a.quick is untimed:
// its calls alone are tested, and rise 10% every run. The significant
// rows come first, the largest change first.
func TestCompareRuns(t *testing.T) {
	base, _ := compareModels()
	noise := []float64{1.00, 1.01, 0.99, 1.02, 0.98}
	var old, cur Runs
	old.Name, cur.Name = "runs/old", "runs/new"
	for i, e := range noise {
		old.Models = append(old.Models, scaled(base, fmt.Sprintf("old%d.csv", i), func(r Row) (float64, float64) {
			if r.Probe == "a.parse" {
				return 1, noise[(i+2)%5]
			}
			return 1, e
		}))
		cur.Models = append(cur.Models, scaled(base, fmt.Sprintf("new%d.csv", i), func(r Row) (float64, float64) {
			switch r.Probe {
			case "a.handle":
				return 1, 1.25 * e
			case "a.parse":
				return 1, noise[(i+1)%5]
			case "a.quick":
				return 1.1 * e, 1
			}
			return 1, e
		}))
	}
	var b strings.Builder
	if err := Compare(&b, &old, &cur, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	for i, want := range []string{
		"probe     calls          delta              inclusive/call   delta              inherent/call    delta              label",
		"a.handle  100 → 100      ~ (p=1.000)        1.00ms → 1.25ms  +25.00% (p=0.016)  500µs → 625µs    +25.00% (p=0.016)  hotspot",
		"a.quick   90000 → 99000  +10.00% (p=0.008)  untimed                             untimed                             untimed",
		"a.parse   50 → 50        ~ (p=1.000)        10.0µs → 10.0µs  ~ (p=1.000)        5.00µs → 5.00µs  ~ (p=1.000)",
		"a.gone    10 → 10        ±0.00% (partial)   1.00µs → 1.00µs  ~ (p=1.000)        1.00µs → 1.00µs  ~ (p=1.000)        disabled",
	} {
		if lines[i] != want {
			t.Errorf("line %d:\n%q\nwant\n%q", i+1, lines[i], want)
		}
	}
	for _, want := range []string{
		"old: runs/old, 5 runs; new: runs/new, 5 runs\n",
		"p: Mann-Whitney U test on the runs' values, adjusted over each row's tests (Holm); ~: no significant change (α=0.05)\n",
		"(partial): a disabled or budget probe's calls are counted only until it was switched off, so they are not tested\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "smallest p") {
		t.Error("five runs a side are called too few")
	}

	// Welch's test on the same runs: the means, and p-values of its own.
	b.Reset()
	Compare(&b, &old, &cur, CompareOptions{Test: WelchTest})
	if !strings.Contains(b.String(), "p: Welch's t-test on the runs' values") ||
		!strings.Contains(b.String(), "a.handle  100 → 100") || !strings.Contains(b.String(), "+25.00% (p=0.000)") {
		t.Errorf("Welch:\n%s", b.String())
	}

	// Three runs a side cannot show a change in a row of three tests.
	old.Models, cur.Models = old.Models[:3], cur.Models[:3]
	b.Reset()
	Compare(&b, &old, &cur, CompareOptions{})
	if !strings.Contains(b.String(), "with 3 against 3 runs the smallest p the U test can give is 0.100") {
		t.Errorf("three runs a side:\n%s", b.String())
	}
}

// synthProbe is one function of a synthetic program: where it is called
// from, how often, what it costs, and how much its figures wander from
// run to run.
type synthProbe struct {
	name   string
	parent int     // index of its caller; -1: called by the program's loop
	calls  float64 // calls per call of its parent (per run for the loop's)
	self   float64 // ns of its own per call
	noise  float64 // relative standard deviation of its per-call time from run to run
	label  string
}

// synthProgram is a service of 20 probes: a router, its middleware and
// handlers, what they call, a sampled probe whose estimates wander more,
// an untimed leaf, one that hotspot switches off after a varying number
// of calls, and a rarely called handler whose times wander by a third
// (a few slow calls make or break its mean).
var synthProgram = []synthProbe{
	{"net/http.(*ServeMux).ServeHTTP", -1, 20_000, 3_000, 0.01, "hotspot"},
	{"app.routes.func1", 0, 1, 1_500, 0.02, ""},
	{"app.(*api).getItem", 1, 0.5, 8_000, 0.02, "hotspot"},
	{"app.(*api).putItem", 1, 0.3, 12_000, 0.03, "hotspot"},
	{"app.(*api).search", 1, 0.2, 20_000, 0.03, "hotspot"},
	{"app.(*api).export", 1, 0.001, 900_000, 0.33, "hotspot"},
	{"app.(*store).get", 2, 1, 2_500, 0.02, ""},
	{"app.(*store).put", 3, 1, 4_000, 0.03, ""},
	{"app.(*store).search", 4, 1, 60_000, 0.02, "hotspot"},
	{"app.score", 8, 100, 350, 0.04, "sampled"},
	{"app.(*shard).lock", 6, 1, 40, 0, "untimed"},
	{"app.validate", 3, 1, 1_200, 0.03, ""},
	{"app.reply", 1, 1, 6_000, 0.02, "hotspot"},
	{"encoding/json.Marshal", 12, 1, 4_500, 0.05, "sampled"},
	{"app.decode", 3, 1, 5_000, 0.03, ""},
	{"app.(*store).index", 7, 1, 9_000, 0.04, "hotspot"},
	{"app.keys", 8, 2, 700, 0.05, "sampled"},
	{"app.(*api).health", 0, 0.05, 400, 0.03, "disabled"},
	{"app.trim", 14, 3, 90, 0.06, "sampled"},
	{"app.log", 12, 1, 1_800, 0.03, ""},
}

// synthRun is one run of the program as its model would show it. The
// host's speed moves every time of the run together (2%); each probe's
// per-call time wanders by its own noise, one run in ten by twice as
// much; with fixedTime the run serves
// for a set time, so its calls move with the speed and the load (3%),
// else it does a set amount of work. change multiplies one probe's own
// time.
func synthRun(rng *rand.Rand, name string, fixedTime bool, change string, by float64) *Model {
	speed := 1 + 0.02*rng.NormFloat64()
	load := 1.0
	if fixedTime {
		load = (1 + 0.03*rng.NormFloat64()) / speed
	}
	n := len(synthProgram)
	calls, self, incl := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, p := range synthProgram {
		if p.parent < 0 {
			calls[i] = math.Round(p.calls * load)
		} else {
			calls[i] = math.Round(calls[p.parent] * p.calls)
		}
		e := rng.NormFloat64()
		if rng.IntN(10) == 0 {
			e *= 2 // now and then a run further off: a sampled estimate's unlucky draw, a burst of steal
		}
		self[i] = p.self * speed * (1 + p.noise*e)
		if p.name == change {
			self[i] *= by
		}
	}
	for i := n - 1; i >= 0; i-- { // callees come after their callers
		incl[i] += self[i]
		if p := synthProgram[i].parent; p >= 0 {
			incl[p] += incl[i] * calls[i] / calls[p]
		}
	}
	m := &Model{Name: name}
	for i, p := range synthProgram {
		r := Row{Probe: p.name, Count: int64(calls[i]), Label: p.label}
		switch p.label {
		case schema.LabelUntimed:
		case schema.LabelDisabled:
			r.Count = 900 + rng.Int64N(200) // switched off after a varying number of calls
			fallthrough
		default:
			r.Total = int64(float64(r.Count) * incl[i])
			r.InherentTotal = int64(float64(r.Count) * self[i])
		}
		m.Rows = append(m.Rows, r)
	}
	return m
}

func synthSide(rng *rand.Rand, name string, runs int, fixedTime bool, change string, by float64) *Runs {
	r := &Runs{Name: name}
	for i := range runs {
		r.Models = append(r.Models, synthRun(rng, fmt.Sprintf("%s/run%d.csv", name, i), fixedTime, change, by))
	}
	return r
}

// TestCompareAA: five runs against five runs of the same program flag at
// most one row in twenty at p < 0.05, over many such comparisons, for
// both tests; and a real +25% in one function's own time is flagged and
// ranked first in nearly every one of them.
func TestCompareAA(t *testing.T) {
	const experiments = 200
	for _, test := range []string{UTest, WelchTest} {
		rng := rand.New(rand.NewPCG(1, 25))
		flagged, rows, worst, atMostOne := 0, 0, 0, 0
		first, others := 0, 0
		for e := range experiments {
			fixedTime := e%2 == 1
			c := diff(synthSide(rng, "a", 5, fixedTime, "", 1), synthSide(rng, "b", 5, fixedTime, "", 1), CompareOptions{Test: test})
			n := 0
			for _, d := range c.Differences {
				rows++
				if d.Significant() {
					n++
				}
			}
			flagged += n
			worst = max(worst, n)
			if n <= 1 {
				atMostOne++
			}

			changed := []string{"app.(*store).get", "app.score"}[e%4/2] // a timed leaf, or a sampled one
			c = diff(synthSide(rng, "a", 5, fixedTime, "", 1), synthSide(rng, "b", 5, fixedTime, changed, 1.25), CompareOptions{Test: test})
			top := c.Differences[0]
			if top.Probe == changed && top.Significant() && top.Changes[inherentMetric].Significant &&
				math.Abs(top.Changes[inherentMetric].Delta-0.25) < 0.15 {
				first++
			} else if testing.Verbose() {
				var b strings.Builder
				Compare(&b, c.Old, c.New, CompareOptions{Test: test})
				t.Logf("%s, experiment %d:\n%s", test, e, b.String())
			}
			for _, d := range c.Differences[1:] {
				if d.Significant() {
					others++
				}
			}
		}
		rate := float64(flagged) / float64(rows)
		t.Logf("%s: A/A flagged %d of %d rows (%.2f%%); %d of %d comparisons of %d rows flagged at most 1, the worst %d; "+
			"+25%% flagged and first in %d of %d, with %.2f other rows flagged on average (its callers' inclusive times)",
			test, flagged, rows, 100*rate, atMostOne, experiments, len(synthProgram), worst, first, experiments, float64(others)/experiments)
		if rate > 0.05 {
			t.Errorf("%s: A/A flagged %.2f%% of rows, more than 1 in 20", test, 100*rate)
		}
		// Even a perfect test at 5% flags at most one of 20 rows in only
		// 74% of comparisons (the binomial distribution); rows that share
		// the run's speed and load raise their false alarms together (a
		// side that happened to serve more calls in its set time has more
		// calls in every row).
		if atMostOne < experiments*3/4 {
			t.Errorf("%s: only %d of %d A/A comparisons flagged at most one row", test, atMostOne, experiments)
		}
		// Five runs a side cannot always tell: now and then the noisiest
		// row's five new runs all land above its five old ones by chance
		// (2 in 252), and far, or the sampled leaf's noise hides a fifth
		// of its change.
		if first < experiments*96/100 {
			t.Errorf("%s: the +25%% change was flagged and first in %d of %d comparisons", test, first, experiments)
		}
	}
}

// LoadRuns reads a directory of models, one per run, in name order, each
// with its sidecars; a file is one run; a directory without models is an
// error.
func TestLoadRuns(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	header := schema.ModelHeader + "\n"
	write("b.csv", header+"a.f,2,20,10,20,10,9,11,\n")
	write("a.csv", header+"a.f,1,10,10,10,10,10,10,\n")
	write("a.csv.meta", "extensions: hotspot(threshold=10000ns)\n")
	write("notes.txt", "not a model")
	os.Mkdir(filepath.Join(dir, "sub.csv"), 0o755)
	r, err := LoadRuns(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Models) != 2 || r.Models[0].Rows[0].Count != 1 || r.Models[1].Rows[0].Count != 2 || extensions(r.Models[0]) == "" {
		t.Fatalf("runs %+v", r.Models)
	}
	if r, err := LoadRuns(filepath.Join(dir, "b.csv")); err != nil || len(r.Models) != 1 {
		t.Fatalf("one file: %v %v", r, err)
	}
	empty := t.TempDir()
	if _, err := LoadRuns(empty); err == nil || !strings.Contains(err.Error(), empty+": no model CSV") {
		t.Fatalf("empty directory: %v", err)
	}
	write("c.csv", "probe,count\n")
	if _, err := LoadRuns(dir); err == nil || !strings.Contains(err.Error(), "c.csv:1: header") {
		t.Fatalf("a bad model in the directory: %v", err)
	}
}
