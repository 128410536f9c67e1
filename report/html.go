package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

var esc = html.EscapeString

// column is one column of the model table.
type column struct {
	key, title, sort string // sort: "num", "text" or "" (not sortable)
}

var columns = []column{
	{"probe", "probe", "text"},
	{"count", "count", "num"},
	{"total", "total", "num"},
	{"avg", "avg", "num"},
	{"inherent_total", "inherent total", "num"},
	{"inherent_avg", "inherent avg", "num"},
	{"min", "min", "num"},
	{"max", "max", "num"},
	{"bars", "inclusive / inherent", ""},
	{"label", "label", "text"},
}

// metaMeaning explains the .meta keys the runtime writes; other keys are
// shown as they are.
var metaMeaning = map[string]string{
	"taken":                       "when the model was taken",
	"started":                     "when the process started",
	"cpu_ns":                      "CPU time the process had used by then, user and system, in ns",
	"clock":                       "the tick source: tsc (the CPU's invariant time-stamp counter) or mono (the monotonic clock)",
	"extensions":                  "the chain, in the order it asks, with each extension's settings",
	"probes":                      "probes registered in the program; the model lists those metered or labelled",
	"traces":                      "traces that ended",
	"truncated_traces":            "traces cut short: at METER_TRACE_MAX firings, or exported before their root ended",
	"dropped_spans":               "spans of traces the export queue had no room for",
	"unwound":                     "metered firings a panic or runtime.Goexit unwound before their end: not counted",
	"clamped_durations":           "clock differences that came out negative and were counted as zero",
	"reenabled":                   "times a spot check gave a disabled probe back its balance",
	"roots":                       "entry probes: the units of work (handlers, goroutine functions)",
	"sampling_alloc_bytes":        "bytes the program allocated since the first probe was sampled: the clock of work the estimates are scaled by, where windows saw at least 1 MiB of it",
	"sampling_window_alloc_bytes": "of those, allocated in sampling windows",
	"interrupted":                 "sampled firings in windows whose own time held a pause (preemption, the garbage collector, the host): the pause was taken off",
}

// WriteHTML writes the model as one self-contained HTML page: no network,
// no external scripts, styles or fonts. The page holds the model table
// (sortable by any column), its legend, inclusive and inherent bars per
// row, the share of the run the model covers, the flame graph of the
// traced call paths when m.Profile has them, and the chain's settings.
func WriteHTML(w io.Writer, m *Model) error {
	var b strings.Builder
	b.Grow(4096 + 600*len(m.Rows))
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	if m.Refresh > 0 {
		fmt.Fprintf(&b, "<meta http-equiv=\"refresh\" content=\"%d\">\n", m.Refresh)
	}
	fmt.Fprintf(&b, "<title>meter: %s</title>\n<style>\n%s</style>\n</head>\n<body>\n", esc(m.Name), pageCSS)
	writeHeader(&b, m)
	writeCoverage(&b, m)
	writeTable(&b, m)
	if err := writeFlame(&b, m); err != nil {
		return err
	}
	writeMeta(&b, m)
	fmt.Fprintf(&b, "<script>\n%s</script>\n</body>\n</html>\n", pageJS)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeHeader(b *strings.Builder, m *Model) {
	b.WriteString("<header>\n<h1>Performance model</h1>\n")
	fmt.Fprintf(b, "<p class=\"sub\"><span class=\"mono\" id=\"source\">%s</span>", esc(m.Name))
	if t, ok := m.MetaValue(MetaTaken); ok {
		fmt.Fprintf(b, " · taken %s", esc(t))
	}
	b.WriteString("</p>\n")
	labels := map[string]int{}
	for _, r := range m.Rows {
		labels[r.Label]++
	}
	fmt.Fprintf(b, "<p class=\"sub\" id=\"summary\">%d probes in the model", len(m.Rows))
	if len(m.Rows) > 0 {
		var parts []string
		for _, l := range sortedKeys(labels) {
			name := l
			if l == "" {
				name = "unlabelled"
			}
			parts = append(parts, fmt.Sprintf("%d %s", labels[l], esc(name)))
		}
		b.WriteString(": " + strings.Join(parts, ", "))
	}
	if p, ok := m.MetaValue("probes"); ok {
		fmt.Fprintf(b, "; %s registered", esc(p))
	}
	b.WriteString("</p>\n</header>\n")
}

// sortedKeys orders the labels as the legend does, unknown ones after
// the known ones, and no label last.
func sortedKeys(m map[string]int) []string {
	rank := map[string]int{LabelHotspot: 0, LabelDisabled: 1, LabelBudget: 2, LabelSampled: 3, "": 5}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, ok := rank[keys[i]]
		if !ok {
			ri = 4
		}
		rj, ok := rank[keys[j]]
		if !ok {
			rj = 4
		}
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// Coverage is the share of the program's time the model covers: the
// inclusive times of the entry probes' metered firings, summed, against
// the process's wall and CPU time.
type Coverage struct {
	Roots    []string // entry probes that are in the model
	FromPath bool     // the roots are those of the traced call paths, not marked entries
	Covered  int64    // ns: their inclusive totals, summed
	Partial  []Row    // roots whose figures are partial (disabled, budget) or estimates (sampled)
	Largest  *Row     // with no roots known: the row with the largest inclusive total, a lower bound
	Wall     time.Duration
	CPU      time.Duration
}

// Coverage works out how much of the program's time the model covers.
// Entry probes are those in m.Roots (probe.Roots marks them; the .meta
// key roots names them), else the roots of the traced call paths in the
// profile. With neither, Largest is the best the model can say.
func (m *Model) Coverage() Coverage {
	c := Coverage{Wall: m.Wall, CPU: m.CPU}
	byName := make(map[string]*Row, len(m.Rows))
	for i := range m.Rows {
		byName[m.Rows[i].Probe] = &m.Rows[i]
	}
	roots := m.Roots
	if len(roots) == 0 && m.Profile != nil {
		roots = outermost(m.Profile)
		c.FromPath = len(roots) > 0
	}
	seen := map[string]bool{}
	for _, name := range roots {
		r := byName[name]
		if r == nil || seen[name] {
			continue
		}
		seen[name] = true
		c.Roots = append(c.Roots, name)
		c.Covered += r.Total
		if r.Label == LabelDisabled || r.Label == LabelBudget || r.Label == LabelSampled {
			c.Partial = append(c.Partial, *r)
		}
	}
	if len(c.Roots) == 0 {
		for i := range m.Rows {
			if c.Largest == nil || m.Rows[i].Total > c.Largest.Total {
				c.Largest = &m.Rows[i]
			}
		}
	}
	return c
}

// percent prints part/whole with one decimal, or two significant digits
// below 1%, so that a small share does not read as none.
func percent(part int64, whole time.Duration) string {
	p := 100 * float64(part) / float64(whole)
	digits := 1
	if p > 0 && p < 1 {
		digits = 1 - int(math.Floor(math.Log10(p)))
	}
	return strconv.FormatFloat(p, 'f', digits, 64) + "%"
}

func writeCoverage(b *strings.Builder, m *Model) {
	c := m.Coverage()
	b.WriteString("<section id=\"coverage\">\n<h2>What the model covers</h2>\n")
	dur := func(ns int64) string { return Duration(float64(ns), " ") }
	against := func(covered int64, lead string) {
		var parts []string
		if c.Wall > 0 {
			parts = append(parts, fmt.Sprintf("<span class=\"big\" id=\"share-wall\">%s</span> of the process's wall time (%s of %s)",
				percent(covered, c.Wall), dur(covered), dur(int64(c.Wall))))
		}
		if c.CPU > 0 {
			parts = append(parts, fmt.Sprintf("<span class=\"big\" id=\"share-cpu\">%s</span> of its CPU time (%s)",
				percent(covered, c.CPU), dur(int64(c.CPU))))
		}
		if len(parts) == 0 {
			fmt.Fprintf(b, "<p>%s <span class=\"big\" id=\"covered\">%s</span>. The process's wall and CPU times are not known "+
				"(the <code>.meta</code> keys <code>started</code> and <code>cpu_ns</code>), so this cannot be set against the run.</p>\n", lead, dur(covered))
			return
		}
		fmt.Fprintf(b, "<p>%s: %s.</p>\n", lead, strings.Join(parts, "; "))
	}
	if len(c.Roots) > 0 {
		against(c.Covered, "Metered firings of the entry probes took")
		from := "the functions marked as units of work (request handlers, goroutine functions)"
		if c.FromPath {
			from = "the outermost probes of the traced call paths, which start traces and never run inside another traced probe " +
				"(the model does not say which probes are entries)"
		}
		entries := fmt.Sprintf("%d entry probes", len(c.Roots))
		if len(c.Roots) == 1 {
			entries = "entry probe"
		}
		fmt.Fprintf(b, "<p class=\"note\">How this is measured: the inclusive times of the metered firings of the %s, %s, are summed "+
			"and set against the process's wall time from its start to when the model was taken, and against its CPU time (user and system). "+
			"Inclusive time counts waiting as well as running, and entries running on several goroutines add up, so the share can pass 100%%: "+
			"250%% of wall time means two and a half entries running at once on average. Entries are taken not to run inside one another.</p>\n",
			entries, from)
		b.WriteString("<p class=\"note\" id=\"roots\">Entry probes: ")
		listed(b, c.Roots, func(r string) string { return "<code>" + esc(r) + "</code>" })
		b.WriteString(".</p>\n")
		if len(c.Partial) > 0 {
			b.WriteString("<p class=\"note\" id=\"partial-roots\">The share is a lower bound. ")
			for _, l := range []string{LabelDisabled, LabelBudget, LabelSampled} {
				var names []string
				for _, r := range c.Partial {
					if r.Label == l {
						names = append(names, r.Probe)
					}
				}
				if len(names) == 0 {
					continue
				}
				fmt.Fprintf(b, "%s (%s): ", strings.ToUpper(labelShort(l)[:1])+labelShort(l)[1:], l)
				listed(b, names, func(r string) string { return "<code>" + esc(r) + "</code>" })
				b.WriteString(". ")
			}
			b.WriteString("</p>\n")
		}
	} else if c.Largest != nil {
		against(c.Largest.Total, fmt.Sprintf("At least, from the largest inclusive total (<code>%s</code>)", esc(c.Largest.Probe)))
		b.WriteString("<p class=\"note\">Which probes are entries (units of work) is not known: the <code>.meta</code> file has no " +
			"<code>roots</code> key and there are no traced call paths. The largest inclusive total is a lower bound of the time the model covers.</p>\n")
	} else {
		b.WriteString("<p>The model is empty: no probe was metered.</p>\n")
	}
	b.WriteString("</section>\n")
}

// outermost returns the probes that start traced call paths and never
// run inside another traced probe. A trace may start at any probe (the
// tracepoint samples each one), so the roots of the paths alone would
// count nested time again and again.
func outermost(p *Profile) []string {
	f, _ := p.Flame()
	nested := map[string]bool{}
	var walk func(n *FlameNode)
	walk = func(n *FlameNode) {
		for _, c := range n.Children {
			nested[c.Name] = true
			walk(c)
		}
	}
	for _, c := range f.Children {
		walk(c)
	}
	var roots []string
	for _, c := range f.Children {
		if !nested[c.Name] {
			roots = append(roots, c.Name)
		}
	}
	return roots
}

// listed writes up to listMax names as code, and how many more there are.
func listed(b *strings.Builder, names []string, each func(name string) string) {
	for i, n := range names {
		if i == listMax {
			fmt.Fprintf(b, " and %d more", len(names)-listMax)
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(each(n))
	}
}

// listMax bounds the names a paragraph lists: a program may have hundreds
// of entries; the table has them all.
const listMax = 8

// labelShort says what a partial root's total holds.
func labelShort(label string) string {
	switch label {
	case LabelSampled:
		return "estimates, from 1 in N firings"
	case LabelBudget:
		return "only the firings metered before budget stopped them"
	}
	return "only the firings metered before hotspot switched them off"
}

func writeTable(b *strings.Builder, m *Model) {
	b.WriteString("<section id=\"model\">\n<h2>Model</h2>\n")
	writeLegend(b, m)
	b.WriteString("<table id=\"model-table\">\n<thead><tr>")
	for _, c := range columns {
		fmt.Fprintf(b, "<th data-key=\"%s\"", c.key)
		if c.sort != "" {
			fmt.Fprintf(b, " data-sort=\"%s\"", c.sort)
		}
		if c.key == "inherent_total" {
			b.WriteString(" aria-sort=\"descending\"") // the model's own order
		}
		fmt.Fprintf(b, ">%s</th>", c.title)
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	var scale int64
	for _, r := range m.Rows {
		scale = max(scale, r.Total, r.InherentTotal)
	}
	for _, r := range m.Rows {
		writeRow(b, m, r, scale)
	}
	b.WriteString("</tbody>\n</table>\n</section>\n")
}

func writeRow(b *strings.Builder, m *Model, r Row, scale int64) {
	partial := r.Label == LabelDisabled || r.Label == LabelBudget
	if partial {
		fmt.Fprintf(b, "<tr class=\"partial\" data-label=\"%s\">", esc(r.Label))
	} else {
		fmt.Fprintf(b, "<tr data-label=\"%s\">", esc(r.Label))
	}
	name := breakable(r.Probe, ".)")
	if i := strings.LastIndexByte(r.Probe, '/'); i >= 0 {
		name = "<span class=\"pkg\">" + breakable(r.Probe[:i+1], "/") + "</span>" + breakable(r.Probe[i+1:], ".)")
	}
	fmt.Fprintf(b, "<td class=\"probe\" data-v=\"%s\">%s</td>", esc(r.Probe), name)
	est := r.Label == LabelSampled
	spread, hasSpread := m.Spreads[r.Probe]
	if est {
		title := "an estimate"
		if hasSpread && spread.Metered > 0 {
			title += fmt.Sprintf(", from %s metered", Count(spread.Metered))
		}
		fmt.Fprintf(b, "<td class=\"n est\" data-v=\"%d\" title=\"%s\">%s</td>", r.Count, title, Count(r.Count))
	} else {
		fmt.Fprintf(b, "<td class=\"n\" data-v=\"%d\">%s</td>", r.Count, Count(r.Count))
	}
	for i, v := range []int64{r.Total, r.Avg, r.InherentTotal, r.InherentAvg, r.Min, r.Max} {
		title := strconv.FormatInt(v, 10) + " ns"
		if hasSpread && (i == 1 || i == 3) {
			sd := spread.Inclusive
			if i == 3 {
				sd = spread.Inherent
			}
			title += ", standard deviation " + Duration(sd, " ")
		}
		cls := "n"
		if est && (i == 0 || i == 2) {
			cls += " est"
			title += ", an estimate"
		}
		text := Duration(float64(v), " ")
		if r.Count == 0 {
			text, title = "–", "no metered firing"
		}
		fmt.Fprintf(b, "<td class=\"%s\" data-v=\"%d\" title=\"%s\">%s</td>", cls, v, title, text)
	}
	incl, inh := 0.0, 0.0
	if scale > 0 {
		incl, inh = 100*float64(r.Total)/float64(scale), 100*float64(r.InherentTotal)/float64(scale)
	}
	fmt.Fprintf(b, "<td class=\"bars\" title=\"inclusive %s, inherent %s\"><div class=\"bar\"><span class=\"incl\" style=\"width:%.2f%%\"></span>"+
		"<span class=\"inh\" style=\"width:%.2f%%\"></span></div></td>",
		Duration(float64(r.Total), " "), Duration(float64(r.InherentTotal), " "), incl, inh)
	fmt.Fprintf(b, "<td data-v=\"%s\">", esc(r.Label))
	if r.Label != "" {
		fmt.Fprintf(b, "<span class=\"label label-%s\">%s</span>", esc(r.Label), esc(r.Label))
		if why := labelWhy(r.Label); why != "" {
			fmt.Fprintf(b, "<span class=\"why\">%s</span>", why)
		}
	}
	b.WriteString("</td></tr>\n")
}

// breakable escapes part of a probe name and lets it wrap after the
// separators given (the package path's slashes, the name's dots and
// parentheses) rather than inside an identifier.
func breakable(s, after string) string {
	var b strings.Builder
	for s != "" {
		i := strings.IndexAny(s, after)
		if i < 0 || i == len(s)-1 {
			b.WriteString(esc(s))
			break
		}
		b.WriteString(esc(s[:i+1]) + "<wbr>")
		s = s[i+1:]
	}
	return b.String()
}

// labelWhy is the few words under a label that keep its row from being
// read as the whole story.
func labelWhy(label string) string {
	switch label {
	case LabelDisabled:
		return "figures until switched off"
	case LabelBudget:
		return "never affordable; not metered"
	case LabelSampled:
		return "count and totals estimated"
	}
	return ""
}

// thresholds reads hotspot's thresholds from the chain's settings, as
// "10 µs" and "2 µs"; "" when the chain does not say.
func thresholds(m *Model) (incl, inh string) {
	v, ok := m.MetaValue(MetaExtensions)
	if !ok {
		return "", ""
	}
	for _, e := range ParseExtensions(v) {
		if e.Name != "hotspot" {
			continue
		}
		for _, s := range []struct {
			key string
			dst *string
		}{{"threshold", &incl}, {"inherent", &inh}} {
			if t, ok := e.Setting(s.key); ok {
				if ns, err := strconv.ParseInt(strings.TrimSuffix(t, "ns"), 10, 64); err == nil {
					*s.dst = Duration(float64(ns), " ")
				}
			}
		}
	}
	return incl, inh
}

func writeLegend(b *strings.Builder, m *Model) {
	incl, inh := thresholds(m)
	hot := "mean inclusive and mean inherent times at or above hotspot's thresholds"
	if incl != "" && inh != "" {
		hot = fmt.Sprintf("mean inclusive time at or above %s and mean inherent time at or above %s (hotspot's thresholds)", incl, inh)
	}
	b.WriteString("<dl id=\"legend\">\n")
	items := [][2]string{
		{"probe", "the function, named as the Go toolchain names it in stack traces"},
		{"count", "metered firings: calls that were measured. The chain leaves most calls unmeasured, so this is not the number of calls"},
		{"total, avg", "inclusive time of the metered firings, from entry to return, summed and per firing"},
		{"inherent total, avg", "self time: inclusive time minus the inclusive time of the metered firings nested directly in it. " +
			"Time in callees that were not metered stays in the caller's inherent time"},
		{"min, max", "the shortest and the longest inclusive time of one metered firing"},
		{"bars", "<span class=\"key incl\"></span> inclusive total and <span class=\"key inh\"></span> inherent total, " +
			"to the scale of the largest total in the model"},
		{"<span class=\"label label-hotspot\">hotspot</span>", hot + "; it is still metered"},
		{"<span class=\"label label-disabled\">disabled</span>", "hotspot switched it off: its calls were too short to matter. " +
			"Its figures cover only its metered firings, before it was switched off; later calls are not in them"},
		{"<span class=\"label label-budget\">budget</span>", "it can never afford its own measurement (its typical time, at the budget's " +
			"percentage, buys less than one unit), so budget stopped metering it; its figures cover the firings before that"},
		{"<span class=\"label label-sampled\">sampled</span>", "1 in N of its firings is metered; its count and totals, marked ≈, are estimates " +
			"from the counted firings, and its averages, min and max those of the metered ones"},
		{"no label", "metered, without a finding"},
	}
	known := map[string]bool{"": true, LabelHotspot: true, LabelDisabled: true, LabelBudget: true, LabelSampled: true}
	for _, r := range m.Rows {
		if !known[r.Label] {
			known[r.Label] = true
			items = append(items, [2]string{"<span class=\"label\">" + esc(r.Label) + "</span>",
				"a label this page does not know (from a newer runtime), shown as it is"})
		}
	}
	for _, it := range items {
		fmt.Fprintf(b, "<dt>%s</dt><dd>%s.</dd>\n", it[0], it[1])
	}
	b.WriteString("</dl>\n<p class=\"note\">Click a column's header to sort by it; click again to turn the order round. " +
		"Hover a figure for its exact value in ns.</p>\n")
}

// flameJSON is the flame graph as the page's script reads it: names once
// in a table, nodes as [name, value, own count, own inclusive, own
// inherent, children].
type flameJSON struct {
	Type  string   `json:"type"`
	Unit  string   `json:"unit"`
	Names []string `json:"names"`
	Root  []any    `json:"root"`
}

func writeFlame(b *strings.Builder, m *Model) error {
	b.WriteString("<section id=\"flame\">\n<h2>Flame graph of the traced call paths</h2>\n")
	if m.Profile == nil {
		b.WriteString("<p id=\"flame-none\">No profile. Run the program with <code>METER_EXPORT_PPROF=model.pprof</code> next to the model " +
			"and tracing on (<code>METER_TRACEPOINT_ENABLED=true</code> or <code>METER_FLOWCHECK_ENABLED=true</code>), " +
			"or name a profile with <code>meter report -pprof</code>.</p>\n</section>\n")
		return nil
	}
	root, typ := m.Profile.Flame()
	if len(root.Children) == 0 {
		b.WriteString("<p id=\"flame-none\">The profile holds no traced call paths: tracing was off, or no trace had ended. " +
			"Turn it on with <code>METER_TRACEPOINT_ENABLED=true</code> or <code>METER_FLOWCHECK_ENABLED=true</code>.</p>\n</section>\n")
		return nil
	}
	unit := ""
	if i := m.Profile.Index(typ); i >= 0 {
		unit = m.Profile.SampleTypes[i].Unit
	}
	fj := flameJSON{Type: typ, Unit: unit}
	ids := map[string]int{}
	var enc func(n *FlameNode) []any
	enc = func(n *FlameNode) []any {
		id, ok := ids[n.Name]
		if !ok {
			id = len(fj.Names)
			ids[n.Name] = id
			fj.Names = append(fj.Names, n.Name)
		}
		kids := make([]any, 0, len(n.Children))
		for _, c := range n.Children {
			kids = append(kids, enc(c))
		}
		return []any{id, n.Value, n.OwnCount, n.OwnInclusive, n.OwnInherent, kids}
	}
	fj.Root = enc(root)
	data, err := json.Marshal(fj) // escapes <, > and &, so no "</script>" can end the block early
	if err != nil {
		return err
	}
	width := "inherent time summed over everything beneath it, which is the inclusive time of the firings on that path"
	if typ != SampleInherent {
		width = "the profile's " + esc(typ) + " summed over everything beneath it"
	}
	fmt.Fprintf(b, "<p class=\"note\">Each box is a call path from the root of a trace (top) down. Its width is %s, "+
		"as a share of all traced firings. Click a box to zoom in, its top bar to zoom out. Only traced firings are drawn: "+
		"the model's other firings have no known caller.</p>\n", width)
	fmt.Fprintf(b, "<div id=\"flame-graph\" data-type=\"%s\"></div>\n", esc(typ))
	fmt.Fprintf(b, "<script type=\"application/json\" id=\"flame-data\">%s</script>\n</section>\n", data)
	return nil
}

func writeMeta(b *strings.Builder, m *Model) {
	b.WriteString("<section id=\"chain\">\n<h2>The chain that produced it</h2>\n")
	if len(m.Meta) == 0 {
		b.WriteString("<p id=\"meta-none\">No <code>.meta</code> file beside the model: the chain's settings are not known.</p>\n</section>\n")
		return
	}
	b.WriteString("<table id=\"meta\">\n<thead><tr><th>key</th><th>value</th><th>meaning</th></tr></thead>\n<tbody>\n")
	for _, f := range m.Meta {
		fmt.Fprintf(b, "<tr data-key=\"%s\"><td>%s</td><td>", esc(f.Key), esc(f.Key))
		switch {
		case f.Key == MetaExtensions && f.Value != "":
			b.WriteString("<ul>")
			for _, e := range ParseExtensions(f.Value) {
				fmt.Fprintf(b, "<li><b>%s</b> <span class=\"mono\">%s</span></li>", esc(e.Name), esc(e.Settings))
			}
			b.WriteString("</ul>")
		case f.Key == MetaExtensions:
			b.WriteString("none")
		case f.Key == MetaRoots:
			b.WriteString("<ul>")
			for _, r := range strings.Fields(f.Value) {
				fmt.Fprintf(b, "<li class=\"mono\">%s</li>", esc(r))
			}
			b.WriteString("</ul>")
		default:
			fmt.Fprintf(b, "<span class=\"mono\">%s</span>", esc(f.Value))
		}
		fmt.Fprintf(b, "</td><td class=\"what\">%s</td></tr>\n", esc(metaMeaning[f.Key]))
	}
	b.WriteString("</tbody>\n</table>\n</section>\n")
}
