// Package env parses the METER_* environment properties, all of them, in
// one place. A bad value never stops the program: it gets one line on
// standard error naming the property, the value and what is accepted, and
// the default is used.
package env

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/meterio/meter/extensions/budget"
	"github.com/meterio/meter/extensions/flowcheck"
	"github.com/meterio/meter/extensions/hotspot"
	"github.com/meterio/meter/extensions/spotcheck"
	"github.com/meterio/meter/extensions/tracepoint"
)

// Config is every METER_* property, parsed. Times are nanoseconds.
type Config struct {
	Enabled bool
	Clock   string // auto, tsc or mono

	HotspotEnabled           bool
	HotspotThreshold         int64 // ns, inclusive
	HotspotThresholdInherent int64 // ns, inherent
	HotspotInitial           int64
	HotspotSample            int64   // 1 in N calls of a sampled probe metered; 0: no sampling
	HotspotSampleShare       float64 // fraction of the time it ran under which a cold probe is disabled
	HotspotCost              float64 // fraction of its own time metering may cost a probe metered at every call; 0: no limit
	HotspotUntimed           int64   // times what timing a call costs: own time per call under which a cold probe is untimed; 0: none

	BudgetEnabled bool
	BudgetPercent int64
	BudgetUnit    int64 // ns

	TracepointEnabled bool
	TracepointSample  int64
	TracepointInclude *regexp.Regexp // nil: every probe

	FlowcheckEnabled bool
	FlowcheckLower   int64
	FlowcheckUpper   int64

	SpotcheckEnabled  bool
	SpotcheckInterval int64

	TraceMax int64

	SamplerInterval int64 // ns, mean interval of the sampler's looks; 0: off

	PprofLabels bool

	ExportCSV      string
	ExportPprof    string
	ExportOTLP     bool
	ExportInterval time.Duration

	HTTP string // host:port of the live page; "" when off
}

// Defaults returns the configuration with every property at its default:
// each extension's own, from its package.
func Defaults() Config {
	return Config{
		Enabled:                  true,
		Clock:                    "auto",
		HotspotEnabled:           true,
		HotspotThreshold:         hotspot.DefaultThreshold,
		HotspotThresholdInherent: hotspot.DefaultThresholdInherent,
		HotspotInitial:           hotspot.DefaultInitial,
		HotspotSample:            hotspot.DefaultSample,
		HotspotSampleShare:       hotspot.DefaultSampleShare,
		HotspotUntimed:           hotspot.DefaultUntimed,
		HotspotCost:              hotspot.DefaultCost,
		BudgetPercent:            budget.DefaultPercent,
		BudgetUnit:               budget.DefaultUnit,
		TracepointSample:         tracepoint.DefaultSample,
		FlowcheckLower:           flowcheck.DefaultLower,
		FlowcheckUpper:           flowcheck.DefaultUpper,
		SpotcheckInterval:        spotcheck.DefaultInterval,
		TraceMax:                 10000,
		SamplerInterval:          5_000_000,
	}
}

// MaxTraceMax is the largest METER_TRACE_MAX accepted. The export queue
// is sized to hold one whole trace, and the engine buffers a traced
// goroutine's spans until it hands them over: 100,000 spans are about 8 MB
// of queue and 5 MB of buffer, where a larger value could take gigabytes
// for one runaway trace.
const MaxTraceMax = 100_000

// Property describes one property: the one description of it, which
// probe's package doc and docs/chain.md quote (TestDocsQuoteProperties).
type Property struct {
	Name, Default, Meaning string
}

// Properties lists every property this package reads, in the order the
// docs show them.
var Properties = []Property{
	{"METER_ENABLED", "true", "false: every probe disabled, a firing costs a load and a branch"},
	{"METER_CLOCK", "auto", "tsc, mono or auto (tsc where the TSC is invariant)"},
	{"METER_HOTSPOT_ENABLED", "true", "false: every firing metered, but an untimed probe's (METER_HOTSPOT_UNTIMED) after its first thousands"},
	{"METER_HOTSPOT_THRESHOLD", "10", "µs, inclusive: a firing at or above both thresholds is hot"},
	{"METER_HOTSPOT_THRESHOLD_INHERENT", "2", "µs, inherent"},
	{"METER_HOTSPOT_INITIAL", "1000", "starting credit: cold firings, each metered, before a probe is judged on its totals"},
	{"METER_HOTSPOT_SAMPLE", "100", "a sampled probe's calls are all counted, about one in N metered; 0: no probe sampled"},
	{"METER_HOTSPOT_SAMPLE_SHARE", "0.05", "%: a cold probe whose own time (with its waits inside calls) is below this share of the time it ran is disabled (never a root)"},
	{"METER_HOTSPOT_COST", "2", "%: a probe is metered at every call while that costs at most this share of its own time and waits; sampled otherwise (0: no limit)"},
	{"METER_HOTSPOT_UNTIMED", "2", "a cold probe whose calls take less than N times what timing a call costs (at most 300 ns) is untimed: counted, never metered, hotspot on or off; 0: none"},
	{"METER_BUDGET_ENABLED", "false", ""},
	{"METER_BUDGET_PERCENT", "10", "1..100: measurements one call may cause, as a share of its time"},
	{"METER_BUDGET_UNIT", "1", "µs charged per measurement"},
	{"METER_TRACEPOINT_ENABLED", "false", ""},
	{"METER_TRACEPOINT_SAMPLE", "100", "every Nth firing of a probe outside a trace starts one"},
	{"METER_TRACEPOINT_INCLUDE", "(roots)", "regexp on probe names that may start traces; unset: the roots meterinject marks (every probe if none)"},
	{"METER_FLOWCHECK_ENABLED", "false", ""},
	{"METER_FLOWCHECK_LOWER", "0", "a goroutine starts a trace after a gap of LOWER"},
	{"METER_FLOWCHECK_UPPER", "100", "+ a random number in [0, UPPER−LOWER) firings"},
	{"METER_SPOTCHECK_ENABLED", "false", ""},
	{"METER_SPOTCHECK_INTERVAL", "10000", "every Nth firing of a disabled probe is metered; a hot one enables the probe again"},
	{"METER_TRACE_MAX", "10000", "firings metered in one trace at most (≤ 100000)"},
	{"METER_PPROF_LABELS", "false", "label goroutines with the trace they run (an allocation per trace start)"},
	{"METER_SAMPLER_INTERVAL", "5000", "µs, mean interval at which a thread of the process looks at which goroutines run: the CPU time of stretches left out as waits; 0: off"},
	{"METER_EXPORT_CSV", "(none)", "path: the performance model, at exit and each interval"},
	{"METER_EXPORT_PPROF", "(none)", "path: metered call paths as a pprof profile"},
	{"METER_EXPORT_OTLP", "false", "traces and the model over OTLP (needs the otlp import)"},
	{"METER_EXPORT_INTERVAL", "0", "Go duration; 0: at exit only"},
	{"METER_HTTP", "(off)", "host:port: the live page (needs the live import)"},
}

// Names lists every property this package reads; Unknown names the
// nearest of them for a misspelt one.
var Names = func() []string {
	n := make([]string, len(Properties))
	for i, p := range Properties {
		n[i] = p.Name
	}
	return n
}()

// Table renders Properties as the docs quote them: one line a property,
// name, default and meaning in columns, each line after prefix.
func Table(prefix string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%-34s %-8s %s\n", prefix, "property", "default", "meaning")
	for _, p := range Properties {
		line := fmt.Sprintf("%s%-34s %-8s %s", prefix, p.Name, p.Default, p.Meaning)
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// ToolNames are METER_ variables that the project's tools read, not the
// runtime: a program started with one set says nothing about it.
var ToolNames = []string{"METER_RUNTIME"}

type parser struct {
	lookup func(string) (string, bool)
	errs   io.Writer
}

func (p parser) complain(name, value, want, def string) {
	fmt.Fprintf(p.errs, "meter: %s=%q: want %s; using the default, %s\n", name, value, want, def)
}

func (p parser) boolean(name string, dst *bool) {
	v, ok := p.lookup(name)
	if !ok || v == "" {
		return
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		p.complain(name, v, "true or false", strconv.FormatBool(*dst))
		return
	}
	*dst = b
}

func (p parser) integer(name string, dst *int64, lo, hi int64) {
	v, ok := p.lookup(name)
	if !ok || v == "" {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < lo || n > hi {
		want := fmt.Sprintf("an integer from %d to %d", lo, hi)
		if hi == math.MaxInt64 {
			want = fmt.Sprintf("an integer of at least %d", lo)
		}
		p.complain(name, v, want, strconv.FormatInt(*dst, 10))
		return
	}
	*dst = n
}

// micros parses a number of microseconds, fractions allowed, into ns.
func (p parser) micros(name string, dst *int64, positive bool) {
	v, ok := p.lookup(name)
	if !ok || v == "" {
		return
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1e12 || positive && f*1000 < 1 {
		want := "a number of microseconds of at least 0"
		if positive {
			want = "a number of microseconds of at least 0.001"
		}
		p.complain(name, v, want, strconv.FormatFloat(float64(*dst)/1000, 'f', -1, 64))
		return
	}
	*dst = int64(math.Round(f * 1000))
}

// percent parses a percentage from 0 to 100, fractions allowed, into a
// fraction.
func (p parser) percent(name string, dst *float64) {
	v, ok := p.lookup(name)
	if !ok || v == "" {
		return
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 100 {
		p.complain(name, v, "a percentage from 0 to 100", strconv.FormatFloat(*dst*100, 'f', -1, 64))
		return
	}
	*dst = f / 100
}

func (p parser) choice(name string, dst *string, choices ...string) {
	v, ok := p.lookup(name)
	if !ok || v == "" {
		return
	}
	for _, c := range choices {
		if strings.EqualFold(strings.TrimSpace(v), c) {
			*dst = c
			return
		}
	}
	p.complain(name, v, "one of "+strings.Join(choices, ", "), *dst)
}

// Load reads every property through lookup (os.LookupEnv in production),
// writing one line to errs for each bad value.
func Load(lookup func(string) (string, bool), errs io.Writer) Config {
	c := Defaults()
	p := parser{lookup, errs}
	p.boolean("METER_ENABLED", &c.Enabled)
	p.choice("METER_CLOCK", &c.Clock, "auto", "tsc", "mono")

	p.boolean("METER_HOTSPOT_ENABLED", &c.HotspotEnabled)
	p.micros("METER_HOTSPOT_THRESHOLD", &c.HotspotThreshold, false)
	p.micros("METER_HOTSPOT_THRESHOLD_INHERENT", &c.HotspotThresholdInherent, false)
	p.integer("METER_HOTSPOT_INITIAL", &c.HotspotInitial, 1, math.MaxInt32)
	p.integer("METER_HOTSPOT_SAMPLE", &c.HotspotSample, 0, 1<<30)
	p.percent("METER_HOTSPOT_SAMPLE_SHARE", &c.HotspotSampleShare)
	p.percent("METER_HOTSPOT_COST", &c.HotspotCost)
	p.integer("METER_HOTSPOT_UNTIMED", &c.HotspotUntimed, 0, 1000)

	p.boolean("METER_BUDGET_ENABLED", &c.BudgetEnabled)
	p.integer("METER_BUDGET_PERCENT", &c.BudgetPercent, 1, 100)
	p.micros("METER_BUDGET_UNIT", &c.BudgetUnit, true)

	p.boolean("METER_TRACEPOINT_ENABLED", &c.TracepointEnabled)
	p.integer("METER_TRACEPOINT_SAMPLE", &c.TracepointSample, 1, tracepoint.MaxSample)
	if v, ok := lookup("METER_TRACEPOINT_INCLUDE"); ok && v != "" {
		re, err := regexp.Compile(v)
		if err != nil {
			p.complain("METER_TRACEPOINT_INCLUDE", v, "a Go regular expression ("+err.Error()+")", "every probe")
		} else {
			c.TracepointInclude = re
		}
	}

	p.boolean("METER_FLOWCHECK_ENABLED", &c.FlowcheckEnabled)
	lower, upper := c.FlowcheckLower, c.FlowcheckUpper
	p.integer("METER_FLOWCHECK_LOWER", &lower, 0, flowcheck.MaxGap)
	p.integer("METER_FLOWCHECK_UPPER", &upper, 0, flowcheck.MaxGap)
	if upper < lower {
		fmt.Fprintf(errs, "meter: METER_FLOWCHECK_UPPER=%d is below METER_FLOWCHECK_LOWER=%d: want UPPER >= LOWER; using the defaults, %d and %d\n",
			upper, lower, c.FlowcheckLower, c.FlowcheckUpper)
	} else {
		c.FlowcheckLower, c.FlowcheckUpper = lower, upper
	}

	p.boolean("METER_SPOTCHECK_ENABLED", &c.SpotcheckEnabled)
	p.integer("METER_SPOTCHECK_INTERVAL", &c.SpotcheckInterval, 1, spotcheck.MaxInterval)
	p.integer("METER_TRACE_MAX", &c.TraceMax, 1, MaxTraceMax)
	p.boolean("METER_PPROF_LABELS", &c.PprofLabels)
	p.micros("METER_SAMPLER_INTERVAL", &c.SamplerInterval, false)

	if v, ok := lookup("METER_EXPORT_CSV"); ok {
		c.ExportCSV = v
	}
	if v, ok := lookup("METER_EXPORT_PPROF"); ok {
		c.ExportPprof = v
	}
	p.boolean("METER_EXPORT_OTLP", &c.ExportOTLP)
	if v, ok := lookup("METER_EXPORT_INTERVAL"); ok && v != "" {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < 0 {
			p.complain("METER_EXPORT_INTERVAL", v, "a Go duration of at least 0, such as 10s", "0")
		} else {
			c.ExportInterval = d
		}
	}
	if v, ok := lookup("METER_HTTP"); ok && v != "" {
		if validAddress(v) {
			c.HTTP = v
		} else {
			p.complain("METER_HTTP", v, "an address host:port, such as 127.0.0.1:6060 (port 0: any free port)", "off")
		}
	}
	return c
}

// validAddress reports whether a is host:port as net.Listen takes it: a
// port from 0 to 65535 and a host that is empty (every interface), a name,
// an IPv4 address or a bracketed IPv6 one. It is checked here without the
// net package, which a program without the live page does not link.
func validAddress(a string) bool {
	i := strings.LastIndexByte(a, ':')
	if i < 0 {
		return false
	}
	host, port := a[:i], a[i+1:]
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return false
	}
	if strings.HasPrefix(host, "[") {
		inner, ok := strings.CutSuffix(host[1:], "]")
		ip, _, _ := strings.Cut(inner, "%") // a zone, as in [fe80::1%eth0]
		return ok && strings.Contains(ip, ":") && strings.Trim(ip, "0123456789abcdefABCDEF:.") == ""
	}
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Unknown writes one line to errs for each METER_ variable in environ
// (os.Environ's form, NAME=value) that is not a property, naming the
// nearest property: a typo never passes silently, and never stops the
// program.
func Unknown(environ []string, errs io.Writer) {
	known := map[string]bool{}
	for _, n := range append(Names, ToolNames...) {
		known[n] = true
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "METER_") || known[name] {
			continue
		}
		best, dist := "", math.MaxInt
		for _, n := range Names {
			if d := distance(name, n); d < dist {
				best, dist = n, d
			}
		}
		fmt.Fprintf(errs, "meter: %s is not a property (did you mean %s?); it is ignored\n", name, best)
	}
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
