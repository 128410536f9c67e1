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

	"github.com/meterio/meter/schema"
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
	schema.MetaTaken:              "when the model was taken",
	schema.MetaStarted:            "when the process started",
	schema.MetaCPU:                "CPU time the process had used by then, user and system, in ns",
	schema.MetaCoreWait:           "time the process's threads had waited for a core by then, in ns: wall time, and own times, hold it",
	schema.MetaClock:              "the tick source: tsc (the CPU's invariant time-stamp counter) or mono (the monotonic clock)",
	schema.MetaExtensions:         "the chain, in the order it asks, with each extension's settings",
	schema.MetaProbes:             "probes registered in the program; the model lists those metered or labelled",
	schema.MetaTraces:             "traces that ended",
	schema.MetaTruncatedTraces:    "traces cut short: at METER_TRACE_MAX firings, or exported before their root ended",
	schema.MetaDroppedSpans:       "spans of traces the export queue had no room for",
	schema.MetaUnwound:            "metered firings a panic or runtime.Goexit unwound before their end: not counted",
	schema.MetaOpen:               "calls still running when the model was taken: their rows hold their time so far",
	schema.MetaClampedDurations:   "clock differences that came out negative and were counted as zero",
	schema.MetaReenabled:          "times a spot check gave a disabled probe back its balance",
	schema.MetaRoots:              "entry probes: the units of work (handlers, goroutine functions)",
	"sampling_alloc_bytes":        "bytes the program allocated since the first probe was sampled: the clock of work the estimates are scaled by, where windows saw at least 1 MiB of it",
	"sampling_window_alloc_bytes": "of those, allocated in sampling windows",
	"interrupted":                 "selected firings of sampled probes suspect of a pause (own time over the threshold and 64 times the mean): the pause the thread's CPU clock showed, or its share, was taken off",
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
	if t, ok := m.MetaValue(schema.MetaTaken); ok {
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
	rank := map[string]int{schema.LabelHotspot: 0, schema.LabelSampled: 1, schema.LabelTraced: 2, schema.LabelUntimed: 3, schema.LabelDisabled: 4, schema.LabelBudget: 5, "": 7}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, ok := rank[keys[i]]
		if !ok {
			ri = 6
		}
		rj, ok := rank[keys[j]]
		if !ok {
			rj = 6
		}
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
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
	var ran []string
	if c.Wall > 0 {
		ran = append(ran, fmt.Sprintf("ran for <b id=\"wall\">%s</b> of wall time", dur(int64(c.Wall))))
	}
	if c.CPU > 0 {
		ran = append(ran, fmt.Sprintf("used <b id=\"cpu\">%s</b> of CPU time (user and system)", dur(int64(c.CPU))))
	}
	if len(ran) > 0 {
		fmt.Fprintf(b, "<p id=\"program\">The program %s.</p>\n", strings.Join(ran, " and "))
	}
	if c.CoreWait > 0 {
		// Own times are wall times less the goroutines' waits: a thread
		// that waits for a core while its goroutine runs waits inside
		// whichever function ran, most often where a goroutine wakes
		// another (a go statement, an unlock), and a CPU profile gives
		// that function none of it.
		share, class := "", "note"
		if c.CPU > 0 {
			share = " (" + percent(int64(c.CoreWait), c.CPU) + " of its CPU time)"
			if c.CoreWait*20 >= c.CPU {
				class = "warn"
			}
		}
		fmt.Fprintf(b, "<p id=\"corewait\" class=\"%s\">Its threads waited <b>%s</b> for a core%s. Own times are wall times less "+
			"the goroutines' waits, so they hold that time where it fell: in the functions that ran as their thread lost its core, "+
			"most often those that start or wake goroutines. A CPU profile of the same run gives them less.</p>\n",
			class, dur(int64(c.CoreWait)), share)
	}
	// shares sets ns against the program's times; id tells the figures apart.
	shares := func(ns int64, id string) []string {
		var s []string
		if c.Wall > 0 {
			s = append(s, fmt.Sprintf("<span class=\"big\" id=\"share-wall%s\">%s</span> of its wall time", id, percent(ns, c.Wall)))
		}
		if c.CPU > 0 {
			s = append(s, fmt.Sprintf("<span class=\"big\" id=\"share-cpu%s\">%s</span> of its CPU time", id, percent(ns, c.CPU)))
		}
		return s
	}
	unknown := ""
	if len(ran) == 0 {
		unknown = " The process's wall and CPU times are not known (the <code>.meta</code> keys <code>started</code>, " +
			"<code>taken</code> and <code>cpu_ns</code>), so this cannot be set against the run."
	}
	switch {
	case len(c.Entries) > 0 && c.Least < c.Covered:
		fmt.Fprintf(b, "<p id=\"headline\">Its entry probes' firings took between <span class=\"big\" id=\"least\">%s</span> "+
			"and <span class=\"big\" id=\"covered\">%s</span>", dur(c.Least), dur(c.Covered))
		if lo, hi := shares(c.Least, "-least"), shares(c.Covered, ""); len(hi) > 0 {
			fmt.Fprintf(b, ": from %s to %s", strings.Join(lo, " and "), strings.Join(hi, " and "))
		}
		fmt.Fprintf(b, ".%s</p>\n", unknown)
		fmt.Fprintf(b, "<p class=\"note\" id=\"nesting-unknown\">Which entries run inside others is not known: there are no traced call paths. "+
			"At least, the largest entry's firings; at most, all entries' firings summed, which is exact only if no entry runs inside another. "+
			"Run the program with <code>METER_TRACEPOINT_ENABLED=true</code> and <code>METER_EXPORT_PPROF</code> next to the model "+
			"(or <code>meter report -pprof</code>) to count each entry once.</p>\n")
	case len(c.Entries) > 0:
		fmt.Fprintf(b, "<p id=\"headline\">Its entry probes' firings, each counted once, took <span class=\"big\" id=\"covered\">%s</span>", dur(c.Covered))
		if s := shares(c.Covered, ""); len(s) > 0 {
			fmt.Fprintf(b, ": %s", strings.Join(s, "; "))
		}
		fmt.Fprintf(b, ".%s</p>\n", unknown)
	case c.Largest != nil:
		fmt.Fprintf(b, "<p id=\"headline\">At least <span class=\"big\" id=\"covered\">%s</span>, the largest inclusive total (<code>%s</code>)",
			dur(c.Largest.Total), esc(c.Largest.Probe))
		if s := shares(c.Largest.Total, ""); len(s) > 0 {
			fmt.Fprintf(b, ": %s", strings.Join(s, "; "))
		}
		fmt.Fprintf(b, ".%s</p>\n", unknown)
		b.WriteString("<p class=\"note\">Which probes are entries (units of work) is not known: the <code>.meta</code> file has no " +
			"<code>roots</code> key and there are no traced call paths. The largest inclusive total is a lower bound of the time the model covers.</p>\n")
		b.WriteString("</section>\n")
		return
	default:
		b.WriteString("<p id=\"headline\">The model is empty: no probe was metered.</p>\n</section>\n")
		return
	}

	from := "the functions marked as units of work (request handlers, goroutine functions)"
	if c.FromPath {
		from = "the probes that start traced call paths (the model does not say which probes are entries)"
	}
	nesting := "Which firings run inside another entry comes from the traced call paths: a trace shows every entry that runs " +
		"beneath its root, and the traces an entry starts are a sample of its firings, so the calls nested in it are estimated " +
		"from them (exactly, where entries nest the same way every time). "
	if !c.Nesting {
		nesting = ""
	}
	fmt.Fprintf(b, "<p class=\"note\">How this is measured: the entry probes are %s. The inclusive times of their firings are summed, "+
		"each firing only where no other entry is open beneath it on its goroutine, so that a request is counted once "+
		"however many entries (router, middleware, handler) it passes through. %s"+
		"Inclusive time counts waiting as well as running, and entries on several goroutines add up, so the share of wall time "+
		"can pass 100%%: 250%% means two and a half units of work running at once on average. The share of CPU time sets "+
		"the same time against the CPU time, user and system, that the process used.</p>\n", from, nesting)
	writeEntries(b, c)
	b.WriteString("</section>\n")
}

// writeEntries lists the entries by how much of them the coverage counts,
// and those whose figures make it a bound or an estimate.
func writeEntries(b *strings.Builder, c Coverage) {
	code := func(name string) string { return "<code>" + esc(name) + "</code>" }
	inside := func(e Entry) string { return strings.Join(mapNames(e.Inside, code), ", ") }
	var whole, part, nested, untraced []string
	for _, e := range c.Entries {
		switch {
		case e.Outer == 0:
			nested = append(nested, fmt.Sprintf("%s (inside %s)", code(e.Probe), inside(e)))
		case e.Outer < 1:
			part = append(part, fmt.Sprintf("%s (%s; otherwise inside %s)", code(e.Probe), esc(percentOf(e.Outer)), inside(e)))
		case c.Nesting && !e.Traced:
			untraced = append(untraced, code(e.Probe))
		default:
			whole = append(whole, code(e.Probe))
		}
	}
	b.WriteString("<p class=\"note\" id=\"roots\">")
	sep, lead := "", "Entry probes counted whole: "
	if !c.Nesting {
		lead = "Entry probes: "
	}
	for _, group := range []struct {
		lead  string
		items []string
	}{
		{lead, whole},
		{"Counted for the share of their calls that run inside no other entry: ", part},
		{"Not counted, as they run inside other entries: ", nested},
		{"Counted whole, though in no traced call path (whether they run inside another entry is not known): ", untraced},
	} {
		if len(group.items) == 0 {
			continue
		}
		b.WriteString(sep + group.lead)
		listed(b, group.items, func(s string) string { return s })
		b.WriteString(".")
		sep = " "
	}
	b.WriteString("</p>\n")

	// Entries that count, whose figures are partial or estimates.
	bound := map[string]string{
		schema.LabelDisabled: "only the calls before hotspot switched them off",
		schema.LabelBudget:   "only the calls before budget stopped metering them",
		schema.LabelUntimed:  "no times of their own: their calls are too short to time",
	}
	estimate := map[string]string{
		schema.LabelSampled: "times estimated from a sample of their calls",
		schema.LabelTraced:  "times from traced calls only",
	}
	for _, group := range []struct {
		id, lead string
		why      map[string]string
		labels   []string
	}{
		{"partial-roots", "The figure is a lower bound.", bound, []string{schema.LabelDisabled, schema.LabelBudget, schema.LabelUntimed}},
		{"estimated-roots", "The figure holds estimates.", estimate, []string{schema.LabelSampled, schema.LabelTraced}},
	} {
		var text []string
		for _, l := range group.labels {
			var ns []string
			for _, e := range c.Entries {
				if e.Label == l && e.Outer > 0 {
					ns = append(ns, e.Probe)
				}
			}
			if len(ns) == 0 {
				continue
			}
			var s strings.Builder
			fmt.Fprintf(&s, "%s (%s): ", capitalize(group.why[l]), l)
			listed(&s, ns, code)
			text = append(text, s.String()+".")
		}
		if len(text) > 0 {
			fmt.Fprintf(b, "<p class=\"note\" id=\"%s\">%s %s</p>\n", group.id, group.lead, strings.Join(text, " "))
		}
	}
}

func mapNames(names []string, f func(string) string) []string {
	var s []string
	for _, n := range names {
		s = append(s, f(n))
	}
	return s
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// percentOf prints a share in [0, 1] as a percentage, at least "<1%" and
// at most ">99%" short of the ends, so that a share near one end does not
// read as the end itself.
func percentOf(share float64) string {
	p := 100 * share
	switch {
	case p > 0 && p < 1:
		return "<1%"
	case p > 99 && p < 100:
		return ">99%"
	}
	return strconv.FormatFloat(math.Round(p), 'f', 0, 64) + "%"
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
	partial := r.Label == schema.LabelDisabled || r.Label == schema.LabelBudget
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
	est := r.Label == schema.LabelSampled
	spread, hasSpread := m.Spreads[r.Probe]
	fmt.Fprintf(b, "<td class=\"n\" data-v=\"%d\">%s</td>", r.Count, formatCount(r.Count))
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
		if est && i < 4 {
			cls += " est"
			title += ", an estimate"
			if hasSpread && spread.Metered > 0 {
				title += fmt.Sprintf(" from %s timed calls", formatCount(spread.Metered))
			}
		}
		text := Duration(float64(v), " ")
		switch {
		case r.Label == schema.LabelUntimed:
			cls, text, title = "n", "–", "untimed: counted, too short to time; its time is in its callers' inherent time"
		case r.Count == 0:
			cls, text, title = "n", "–", "no call"
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
	if in := untimedIn(m, r.Probe); len(in) > 0 {
		fmt.Fprintf(b, "<span class=\"why includes\">own time includes untimed %s</span>", esc(strings.Join(in, ", ")))
	}
	if w := m.Spreads[r.Probe].Waited; w > 0 && w >= r.InherentTotal/10 {
		// The CPU time of such stretches, around the wait, is not in
		// its inherent time: a CPU profile gives it more.
		fmt.Fprintf(b, "<span class=\"why waited\">own time leaves out %s of stretches in which it waited, with the CPU time around the waits</span>",
			Duration(float64(w), " "))
	}
	b.WriteString("</td></tr>\n")
}

// untimedIn returns the untimed probes whose calls' time is in probe's own
// time, by their short names, as the .stats sidecar says.
func untimedIn(m *Model, probe string) []string {
	var in []string
	for _, r := range m.Rows {
		if r.Label != schema.LabelUntimed {
			continue
		}
		for _, p := range m.Spreads[r.Probe].TimeIn {
			if p == probe {
				name := r.Probe
				if i := strings.LastIndexByte(name, '/'); i >= 0 {
					name = name[i+1:]
				}
				in = append(in, name)
				break
			}
		}
	}
	sort.Strings(in)
	return in
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
	case schema.LabelDisabled:
		return "figures until switched off"
	case schema.LabelBudget:
		return "figures until budget stopped it"
	case schema.LabelSampled:
		return "times estimated; count exact"
	case schema.LabelUntimed:
		return "count only; no times of its own"
	case schema.LabelTraced:
		return "times from traces; count exact"
	}
	return ""
}

// thresholds reads hotspot's thresholds from the chain's settings, as
// "10 µs" and "2 µs"; "" when the chain does not say.
func thresholds(m *Model) (incl, inh string) {
	v, ok := m.MetaValue(schema.MetaExtensions)
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
		{"count", "calls: every call is counted, exactly, whether or not it was timed. A disabled or budget row's count " +
			"stops where it was switched off"},
		{"total, avg", "inclusive time, from entry to return, summed over the calls and per call"},
		{"inherent total, avg", "self time: inclusive time minus that of the timed callees nested directly in it. " +
			"Time in callees that are uninstrumented, inlined, untimed or disabled stays in the caller's inherent time, " +
			"as a CPU profile charges the innermost timed frame"},
		{"min, max", "the shortest and the longest inclusive time of one timed call"},
		{"bars", "<span class=\"key incl\"></span> inclusive total and <span class=\"key inh\"></span> inherent total, " +
			"to the scale of the largest total in the model"},
		{"no label", "timed at every call"},
		{"<span class=\"label label-hotspot\">hotspot</span>", hot + "; timed at every call"},
		{"<span class=\"label label-sampled\">sampled</span>", "its times, marked ≈, are estimated from a random sample of its calls; " +
			"its count is exact, and its min and max are those of the sampled calls"},
		{"<span class=\"label label-untimed\">untimed</span>", "counted exactly, but its calls are too short for the clock to time: " +
			"it has no times of its own (shown –), and its time is in its callers' inherent time"},
		{"<span class=\"label label-traced\">traced</span>", "timed only inside traces (tracepoint on): its times come from " +
			"its traced calls, and its count is exact"},
		{"<span class=\"label label-disabled\">disabled</span>", "hotspot switched it off: its calls were too short to matter. " +
			"Its count and times cover its calls up to then; later calls are in neither"},
		{"<span class=\"label label-budget\">budget</span>", "it can never afford its own measurement (its typical time, at the budget's " +
			"percentage, buys less than one unit), so budget stopped metering it; its count and times cover its calls up to then"},
	}
	known := map[string]bool{"": true, schema.LabelHotspot: true, schema.LabelDisabled: true, schema.LabelBudget: true, schema.LabelSampled: true,
		schema.LabelUntimed: true, schema.LabelTraced: true}
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
	root, typ := m.Profile.flame()
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
	var enc func(n *flameNode) []any
	enc = func(n *flameNode) []any {
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
	if typ != schema.SampleInherent {
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
		case f.Key == schema.MetaExtensions && f.Value != "":
			b.WriteString("<ul>")
			for _, e := range ParseExtensions(f.Value) {
				fmt.Fprintf(b, "<li><b>%s</b> <span class=\"mono\">%s</span></li>", esc(e.Name), esc(e.Settings))
			}
			b.WriteString("</ul>")
		case f.Key == schema.MetaExtensions:
			b.WriteString("none")
		case f.Key == schema.MetaRoots:
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
