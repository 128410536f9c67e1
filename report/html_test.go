package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func pageModel(t *testing.T) *Model {
	t.Helper()
	p, err := ReadProfile(bytes.NewReader(testProfile()))
	if err != nil {
		t.Fatal(err)
	}
	return &Model{
		Name: "runs/model.csv",
		Rows: []Row{
			{"a.main", 1, 1_000_000_000, 1_000_000_000, 400_000_000, 400_000_000, 1_000_000_000, 1_000_000_000, ""},
			{"example.com/app.handle", 40, 500_000_000, 12_500_000, 300_000_000, 7_500_000, 1_000_000, 30_000_000, "hotspot"},
			{"a.<script>alert(1)</script>", 3, 3_000, 1_000, 3_000, 1_000, 900, 1_100, "frozen"},
			{"example.com/app.small", 1000, 900_000, 900, 900_000, 900, 100, 5_000, "disabled"},
			{"example.com/app.sampled", 10, 50_000, 5_000, 20_000, 2_000, 4_000, 6_000, "sampled"},
			{"example.com/app.tiny", 0, 0, 0, 0, 0, 0, 0, "budget"},
			{"example.com/app.quick", 250_000, 0, 0, 0, 0, 0, 0, "untimed"},
		},
		Meta: []Field{
			{Key: "taken", Value: "2026-11-23T10:00:02Z"},
			{Key: "extensions", Value: "hotspot(threshold=10000ns inherent=2000ns initial=1000) budget(percent=10 unit=1000ns)"},
			{Key: "probes", Value: "17"},
			{Key: "from_the_future", Value: "<b>42</b>"},
		},
		Spreads: map[string]Spread{"example.com/app.handle": {Inclusive: 2_000_000, Inherent: 500_000, Waited: 29_000_000}, "example.com/app.sampled": {Metered: 3, Waited: 30_000},
			"example.com/app.quick": {TimeIn: []string{"example.com/app.handle"}}},
		Roots:   []string{"a.main"},
		Wall:    2 * time.Second,
		CPU:     time.Second,
		Profile: p,
	}
}

func render(t *testing.T, m *Model) string {
	t.Helper()
	var b strings.Builder
	if err := WriteHTML(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var voidElements = map[string]bool{"meta": true, "br": true, "hr": true, "img": true, "input": true, "link": true, "wbr": true}

// checkNesting fails unless every element the page opens is closed, in
// order. Script and style bodies are skipped as the browser skips them.
func checkNesting(t *testing.T, page string) {
	t.Helper()
	tag := regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*>`)
	var stack []string
	for rest := page; ; {
		loc := tag.FindStringSubmatchIndex(rest)
		if loc == nil {
			break
		}
		closing, name := rest[loc[2]:loc[3]] == "/", strings.ToLower(rest[loc[4]:loc[5]])
		rest = rest[loc[1]:]
		switch {
		case voidElements[name]:
		case closing:
			if len(stack) == 0 || stack[len(stack)-1] != name {
				t.Fatalf("</%s> closes %v", name, stack)
			}
			stack = stack[:len(stack)-1]
		case name == "script" || name == "style":
			end := strings.Index(rest, "</"+name+">")
			if end < 0 {
				t.Fatalf("<%s> is never closed", name)
			}
			rest = rest[end+len(name)+3:]
		default:
			stack = append(stack, name)
		}
	}
	if len(stack) != 0 {
		t.Fatalf("left open: %v", stack)
	}
}

func TestPageStructure(t *testing.T) {
	m := pageModel(t)
	page := render(t, m)
	if !strings.HasPrefix(page, "<!DOCTYPE html>\n<html lang=\"en\">") {
		t.Fatalf("page starts %q", page[:40])
	}
	checkNesting(t, page)
	for _, id := range []string{"coverage", "model", "legend", "model-table", "flame", "flame-graph", "flame-data", "chain", "meta", "summary"} {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("no element #%s", id)
		}
	}
	if n := strings.Count(page, "<tr data-label=") + strings.Count(page, `<tr class="partial" data-label=`); n != len(m.Rows) {
		t.Errorf("%d model rows, want %d", n, len(m.Rows))
	}
	// Self-contained: nothing is fetched.
	for _, ref := range []string{"src=", "href=", "http://", "https://", "url(", "@import", "<link"} {
		if strings.Contains(page, ref) {
			t.Errorf("page refers outside itself: %q", ref)
		}
	}
	// Names and values are escaped, not markup.
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<b>42</b>") ||
		!strings.Contains(page, "a.&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(page, "&lt;b&gt;42&lt;/b&gt;") {
		t.Error("a probe name or a .meta value reached the page unescaped")
	}
	// Every column sortable but the bars; the model's own order marked.
	if got := strings.Count(page, "data-sort=\"num\""); got != 7 {
		t.Errorf("%d numeric sortable columns, want 7", got)
	}
	if !strings.Contains(page, `<th data-key="inherent_total" data-sort="num" aria-sort="descending">`) {
		t.Error("the inherent total column is not marked as the model's order")
	}
}

func TestPageLegendAndLabels(t *testing.T) {
	page := render(t, pageModel(t))
	legend := page[strings.Index(page, `<dl id="legend">`):strings.Index(page, "</dl>")]
	for _, want := range []string{
		"<dt>count</dt><dd>calls: every call is counted, exactly, whether or not it was timed",
		"<dt>total, avg</dt><dd>inclusive time",
		"<dt>inherent total, avg</dt><dd>self time: inclusive time minus that of the timed callees nested directly in it",
		"uninstrumented, inlined, untimed or disabled stays in the caller's inherent time",
		"mean inclusive time at or above 10.0 µs and mean inherent time at or above 2.00 µs", // the chain's thresholds
		"hotspot switched it off", "Its count and times cover its calls up to then",
		"can never afford its own measurement",
		"its times, marked ≈, are estimated from a random sample of its calls; its count is exact",
		`<span class="label label-untimed">untimed</span></dt><dd>counted exactly, but its calls are too short for the clock to time: it has no times of its own (shown –)`,
		`<span class="label label-traced">traced</span></dt><dd>timed only inside traces`,
		`<span class="label">frozen</span></dt><dd>a label this page does not know`,
	} {
		if !strings.Contains(legend, want) {
			t.Errorf("legend lacks %q", want)
		}
	}
	row := func(probe string) string {
		i := strings.Index(page, `data-v="`+probe+`"`)
		if i < 0 {
			t.Fatalf("no row %s", probe)
		}
		start := strings.LastIndex(page[:i], "<tr")
		return page[start : start+strings.Index(page[start:], "</tr>")]
	}
	if r := row("example.com/app.small"); !strings.HasPrefix(r, `<tr class="partial" data-label="disabled">`) || !strings.Contains(r, "figures until switched off") {
		t.Errorf("disabled row: %s", r)
	}
	if r := row("example.com/app.sampled"); strings.Count(r, `class="n est"`) != 4 || !strings.Contains(r, "times estimated; count exact") ||
		!strings.Contains(r, `<td class="n" data-v="10">10</td>`) ||
		!strings.Contains(r, `<td class="n est" data-v="50000" title="50000 ns, an estimate from 3 timed calls">50.0 µs</td>`) {
		t.Errorf("sampled row: %s", r)
	}
	// A row whose own time left out stretches in which it waited, worth a
	// tenth of its inherent time or more, says how much.
	if r := row("example.com/app.sampled"); !strings.Contains(r, `<span class="why waited">own time leaves out 30.0 µs of stretches in which it waited`) {
		t.Errorf("sampled row, which waited: %s", r)
	}
	if r := row("example.com/app.handle"); strings.Contains(r, "waited") {
		t.Errorf("handle's row, whose waits are under a tenth of its inherent time: %s", r)
	}
	// An untimed row shows its count, and no time as 0 ns.
	if r := row("example.com/app.quick"); strings.Count(r, ">–</td>") != 6 || strings.Contains(r, "0 ns<") ||
		!strings.Contains(r, `<td class="n" data-v="250000">250,000</td>`) || !strings.Contains(r, "count only; no times of its own") {
		t.Errorf("untimed row: %s", r)
	}
	if r := row("example.com/app.tiny"); strings.Count(r, ">–</td>") != 6 || !strings.Contains(r, `data-label="budget"`) {
		t.Errorf("budget row with no metered firing: %s", r)
	}
	// Figures: human units, exact ns on hover, the spread where known.
	r := row("example.com/app.handle")
	for _, want := range []string{
		`<td class="probe" data-v="example.com/app.handle"><span class="pkg">example.com/</span>app.<wbr>handle</td>`,
		`<td class="n" data-v="40">40</td>`,
		`<td class="n" data-v="500000000" title="500000000 ns">500 ms</td>`,
		`<td class="n" data-v="12500000" title="12500000 ns, standard deviation 2.00 ms">12.5 ms</td>`,
		`<span class="incl" style="width:50.00%"></span><span class="inh" style="width:30.00%"></span>`,
		`<span class="label label-hotspot">hotspot</span>`,
		`<span class="why includes">own time includes untimed app.quick</span>`, // its untimed callee, from the .stats sidecar
	} {
		if !strings.Contains(r, want) {
			t.Errorf("handle's row lacks %q:\n%s", want, r)
		}
	}
	if r := row("example.com/app.small"); !strings.Contains(r, `<td class="n" data-v="1000">1,000</td>`) {
		t.Errorf("count not grouped: %s", r)
	}
}

func TestPageCoverage(t *testing.T) {
	m := pageModel(t)
	page := render(t, m)
	for _, want := range []string{
		`<p id="program">The program ran for <b id="wall">2.00 s</b> of wall time and used <b id="cpu">1.00 s</b> of CPU time (user and system).</p>`,
		`<p id="headline">Its entry probes' firings, each counted once, took <span class="big" id="covered">1.00 s</span>: ` +
			`<span class="big" id="share-wall">50.0%</span> of its wall time; <span class="big" id="share-cpu">100.0%</span> of its CPU time.</p>`,
		"Entry probes counted whole: <code>a.main</code>.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("coverage lacks %q", want)
		}
	}

	// A small share keeps two significant digits.
	m.Wall = 3000 * time.Second
	if page := render(t, m); !strings.Contains(page, `<span class="big" id="share-wall">0.033%</span>`) {
		t.Error("a share under 1% lost its digits")
	}

	// The threads' wait for a core: said, with its share of the CPU time,
	// and marked where it is 5% of it or more; not said where none.
	if strings.Contains(page, `id="corewait"`) {
		t.Error("a wait for a core said where the model has none")
	}
	m.Wall = 2 * time.Second
	for _, c := range []struct {
		wait time.Duration
		want string
	}{
		{20 * time.Millisecond, `<p id="corewait" class="note">Its threads waited <b>20.0 ms</b> for a core (2.0% of its CPU time).`},
		{300 * time.Millisecond, `<p id="corewait" class="warn">Its threads waited <b>300 ms</b> for a core (30.0% of its CPU time).`},
	} {
		m.CoreWait = c.wait
		if page := render(t, m); !strings.Contains(page, c.want) {
			t.Errorf("coverage lacks %q", c.want)
		}
	}
	m.CoreWait = 0

	// No process times: the covered time alone, and why.
	m.Wall, m.CPU = 0, 0
	page = render(t, m)
	if !strings.Contains(page, `took <span class="big" id="covered">1.00 s</span>. The process's wall and CPU times are not known`) ||
		strings.Contains(page, `id="program"`) {
		t.Error("coverage without process times")
	}
}

func TestCoverage(t *testing.T) {
	m := pageModel(t)
	m.Rows = append(m.Rows, Row{Probe: "a.worker", Count: 5, Total: 700, Label: "disabled"})
	m.Roots = []string{"a.main", "a.worker", "a.never_metered", "a.main"}
	c := m.Coverage()
	if len(c.Entries) != 2 || c.Entries[0].Probe != "a.main" || c.Entries[1].Probe != "a.worker" || c.Covered != 1_000_000_700 ||
		c.FromPath || c.Largest != nil || !c.Nesting || c.Entries[1].Traced {
		t.Fatalf("marked roots: %+v", c)
	}
	page := render(t, m)
	if !strings.Contains(page, `<p class="note" id="partial-roots">The figure is a lower bound. `+
		`Only the calls before hotspot switched them off (disabled): <code>a.worker</code>.</p>`) {
		t.Error("a disabled root is not called out")
	}
	if !strings.Contains(page, "Counted whole, though in no traced call path (whether they run inside another entry is not known): <code>a.worker</code>.") {
		t.Error("an entry in no traced path is not called out")
	}
	// Long lists are cut, the count of the rest given.
	m.Roots = nil
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("a.entry%d", i)
		m.Rows = append(m.Rows, Row{Probe: name, Count: 1, Total: 10})
		m.Roots = append(m.Roots, name)
	}
	if page := render(t, m); !strings.Contains(page, "<code>a.entry7</code> and 4 more.") || strings.Contains(page, "<code>a.entry8</code>") {
		t.Error("a long list of entries is not cut")
	}

	// No marked roots: the probes that start traced paths (a.main, and
	// a.work, which starts one trace of its own: 50 ns of 500 inside
	// a.main once, of its 1 count in a.main's trace). a.work runs inside
	// a.main in a.main's traces, so it is not counted again. The
	// unsymbolized frame is not in the model.
	m.Roots = nil
	m.Rows = append(m.Rows, Row{Probe: "a.work", Count: 2, Total: 550})
	m.Profile.Samples = append(m.Profile.Samples, Sample{Stack: []string{"a.work"}, Values: []int64{1, 50, 50},
		Labels: map[string][]string{"source": {"trace"}}})
	c = m.Coverage()
	if len(c.Entries) != 2 || !c.FromPath || !c.Nesting || c.Covered != 1_000_000_000 || c.Entries[1].Probe != "a.work" ||
		c.Entries[1].Outer != 0 || fmt.Sprint(c.Entries[1].Inside) != "[a.main]" {
		t.Fatalf("roots from paths: %+v", c)
	}

	// Neither: the largest inclusive total, as a lower bound.
	m.Profile = nil
	c = m.Coverage()
	if len(c.Entries) != 0 || c.Largest == nil || c.Largest.Probe != "a.main" {
		t.Fatalf("no roots: %+v", c)
	}
	if page := render(t, m); !strings.Contains(page, `At least <span class="big" id="covered">1.00 s</span>, the largest inclusive total (<code>a.main</code>): <span class="big" id="share-wall">50.0%</span>`) ||
		!strings.Contains(page, "Which probes are entries (units of work) is not known") {
		t.Error("coverage without roots")
	}
}

func TestPageFlame(t *testing.T) {
	page := render(t, pageModel(t))
	i := strings.Index(page, `<script type="application/json" id="flame-data">`)
	if i < 0 {
		t.Fatal("no flame data")
	}
	body := page[i+len(`<script type="application/json" id="flame-data">`):]
	body = body[:strings.Index(body, "</script>")]
	var fj struct {
		Type, Unit string
		Names      []string
		Root       []any
	}
	if err := json.Unmarshal([]byte(body), &fj); err != nil {
		t.Fatal(err)
	}
	if fj.Type != "inherent" || fj.Unit != "nanoseconds" || fj.Names[int(fj.Root[0].(float64))] != "all" || fj.Root[1].(float64) != 301 {
		t.Fatalf("flame data %+v", fj)
	}
	kids := fj.Root[5].([]any)
	main := kids[0].([]any)
	if len(kids) != 2 || fj.Names[int(main[0].(float64))] != "a.main" || main[1].(float64) != 300 {
		t.Fatalf("roots %v", kids)
	}

	// A name cannot end the data block early.
	m := pageModel(t)
	m.Profile.Samples[0].Stack[0] = "</script><script>alert(1)//"
	page = render(t, m)
	if strings.Contains(page, "</script><script>alert") {
		t.Fatal("a frame name closed the script block")
	}

	m.Profile = nil
	if page := render(t, m); !strings.Contains(page, `<p id="flame-none">No profile.`) {
		t.Error("no hint without a profile")
	}
	m = pageModel(t)
	m.Profile.Samples = m.Profile.Samples[2:3] // the model's sample only
	if page := render(t, m); !strings.Contains(page, `<p id="flame-none">The profile holds no traced call paths`) {
		t.Error("no hint without traced paths")
	}
}

func TestPageMeta(t *testing.T) {
	m := pageModel(t)
	page := render(t, m)
	for _, want := range []string{
		`<tr data-key="extensions"><td>extensions</td><td><ul><li><b>hotspot</b> <span class="mono">threshold=10000ns inherent=2000ns initial=1000</span></li><li><b>budget</b>`,
		`<tr data-key="from_the_future"><td>from_the_future</td><td><span class="mono">&lt;b&gt;42&lt;/b&gt;</span></td><td class="what"></td></tr>`,
		`<td class="what">probes registered in the program`,
		`<p class="sub" id="summary">7 probes in the model: 1 hotspot, 1 sampled, 1 untimed, 1 disabled, 1 budget, 1 frozen, 1 unlabelled; 17 registered</p>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	m.Meta = nil
	if page := render(t, m); !strings.Contains(page, `id="meta-none"`) || !strings.Contains(page, "mean inclusive and mean inherent times at or above hotspot's thresholds") {
		t.Error("page without .meta")
	}
}

func TestPageRefresh(t *testing.T) {
	m := pageModel(t)
	if strings.Contains(render(t, m), "http-equiv") {
		t.Fatal("a file page reloads itself")
	}
	m.Refresh = 5
	if !strings.Contains(render(t, m), `<meta http-equiv="refresh" content="5">`) {
		t.Fatal("no reload on a live page asked to")
	}
}

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{
		{0, "0 ns"}, {850, "850 ns"}, {999.4, "999 ns"}, {999.6, "1.00 µs"}, {12_345, "12.3 µs"}, {374_025_181, "374 ms"},
		{1_476_154_189, "1.48 s"}, {3_600e9, "3600 s"}, {2.5, "2.50 ns"}, {-1500, "-1.50 µs"},
	} {
		if got := Duration(c.ns, " "); got != c.want {
			t.Errorf("Duration(%g) = %q, want %q", c.ns, got, c.want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := formatCount(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
