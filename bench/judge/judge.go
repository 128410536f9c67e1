package main

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/meterio/meter/report"
	"github.com/meterio/meter/schema"
)

// timed reports whether the model times a row's probe: every label but
// untimed, disabled and budget (a label from a newer runtime counts as
// timed).
func timed(r report.Row) bool {
	return r.Label != schema.LabelUntimed && !off(r)
}

// off reports whether a row's probe was switched off: its count stops
// where that happened.
func off(r report.Row) bool { return schema.SwitchedOff(r.Label) }

// Limits is what the checks accept.
type Limits struct {
	CountTolerance float64       // relative: 0.005 is 0.5%
	ShareAvg       float64       // points, mean over the top ShareTop
	ShareMax       float64       // points, any row of the top ShareTop
	ShareTop       int           // rows of the profile's top compared
	HiddenTop      int           // rows of the profile's top that must be in the model
	UntimedLimit   time.Duration // an untimed probe's true own time per call must be below
}

// DefaultLimits are docs/design.md's figures.
var DefaultLimits = Limits{
	CountTolerance: 0.005,
	ShareAvg:       3,
	ShareMax:       8,
	ShareTop:       5,
	HiddenTop:      10,
	UntimedLimit:   300 * time.Nanosecond,
}

// Charging is a CPU profile charged to functions: each sample's CPU time
// goes to the innermost frame of its stack that take accepts.
type Charging struct {
	NS      map[string]float64 // by function
	Samples map[string]float64 // by function: how many samples hold NS
	Claimed float64            // ns of samples with a frame taken
	All     float64            // ns of every sample
}

// Charge charges prof's CPU samples to the innermost frame that take
// accepts, each frame's name read through alias first (the runtime's name
// of a closure → its probe's name). Stacks are leaf first, inlined frames
// expanded, as report.ReadProfile gives them.
func Charge(prof *report.Profile, alias map[string]string, take func(string) bool) Charging {
	c := Charging{NS: map[string]float64{}, Samples: map[string]float64{}}
	v, k := cpuIndex(prof), prof.Index("samples")
	for _, s := range prof.Samples {
		if v >= len(s.Values) {
			continue
		}
		ns := float64(s.Values[v])
		c.All += ns
		n := 1.0
		if k >= 0 && k < len(s.Values) {
			n = float64(s.Values[k])
		}
		for _, fn := range s.Stack {
			if fn = ProbeName(fn, alias); take(fn) {
				c.NS[fn] += ns
				c.Samples[fn] += n
				c.Claimed += ns
				break
			}
		}
	}
	return c
}

// MeteringFrames matches the functions of the meter runtime: a sample
// with one of them on its stack is the cost of measuring (Begin and End,
// their clock reads, the export at exit), not the program's own work.
var MeteringFrames = regexp.MustCompile(`^github\.com/meterio/meter/(meter|probe|clock|extensions|export|internal|otlp|live)[./]`)

// CountingFrames matches the frames a firing that is only counted runs:
// begin's assembly leaf, the engine's End finding nothing to end (at the
// exits that call it whatever the firing), and the probe calls inlined
// around them. The model's inherent times keep what counting an untimed
// or disabled probe's firing costs (the engine subtracts only what
// metering a firing costs), so a sample in those frames alone, in the
// firing of such a probe, is the program's: it stays, charged to the
// function whose firing it counts. In the firing of a timed probe the
// same frames are metering: the engine takes them off with the rest of
// the firing's overhead (the inner overhead of a metered firing, the
// unmetered cost in a sampled probe's charge). A metered firing's end
// runs in end, which is metering.
var CountingFrames = regexp.MustCompile(`^github\.com/meterio/meter/(meter\.begin(\.abi0)?|meter\.\(\*Probe\)\.(Begin|End)|probe\.\(\*Probe\)\.(On|Begin|End))$`)

// WithoutMetering returns prof without the samples that have a frame
// matching frames, but those of CountingFrames in the firing of a probe
// that timed (its function's name, through alias) does not accept, and
// the CPU time, in ns, of those it left out. The model's inherent times
// leave out the cost of measuring (the engine subtracts its own
// overhead), so the profile it is compared with must leave it out too:
// with every firing metered it is most of the profile, charged to the
// functions of 2 ns whose firings it measures. timed nil: no probe is
// timed.
func WithoutMetering(prof *report.Profile, frames *regexp.Regexp, alias map[string]string, timed func(string) bool) (*report.Profile, float64) {
	out := *prof
	out.Samples = nil
	v := cpuIndex(prof)
	var left float64
	for _, s := range prof.Samples {
		metering := false
		top := 0 // counting frames at the top of the stack
		for i, fn := range s.Stack {
			if frames.MatchString(fn) {
				if !CountingFrames.MatchString(fn) {
					metering = true
					break
				}
				if top == i {
					top++
				}
			}
		}
		if !metering && top > 0 && top < len(s.Stack) && timed != nil {
			// The frame below them: the function whose firing they are.
			metering = timed(ProbeName(s.Stack[top], alias))
		}
		if !metering {
			out.Samples = append(out.Samples, s)
		} else if v < len(s.Values) {
			left += float64(s.Values[v])
		}
	}
	return &out, left
}

// ProbeName is the probe name of a function the profile names fn: type
// arguments written as [...] (the profile has main.sum[go.shape.int],
// the probe main.sum[...]), then the truth file's alias, if any.
func ProbeName(fn string, alias map[string]string) string {
	fn = elideTypeArgs(fn)
	if a, ok := alias[fn]; ok {
		return a
	}
	return fn
}

// elideTypeArgs writes each outermost bracketed part of a name as [...].
func elideTypeArgs(fn string) string {
	i := strings.IndexByte(fn, '[')
	if i < 0 {
		return fn
	}
	var b strings.Builder
	depth := 0
	for _, c := range fn {
		switch {
		case c == '[':
			if depth == 0 {
				b.WriteString("[...]")
			}
			depth++
		case c == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// cpuIndex is the position of the CPU time in a sample's values: the
// sample type "cpu", else the last.
func cpuIndex(prof *report.Profile) int {
	if i := prof.Index("cpu"); i >= 0 {
		return i
	}
	return len(prof.SampleTypes) - 1
}

// Top returns the charged functions, largest first (by name on ties), at
// most n of them.
func (c Charging) Top(n int) []string {
	fns := make([]string, 0, len(c.NS))
	for fn := range c.NS {
		fns = append(fns, fn)
	}
	sort.Slice(fns, func(i, j int) bool {
		if c.NS[fns[i]] != c.NS[fns[j]] {
			return c.NS[fns[i]] > c.NS[fns[j]]
		}
		return fns[i] < fns[j]
	})
	return fns[:min(n, len(fns))]
}

// CountRow is one model row against its true calls.
type CountRow struct {
	Probe, Label string
	Model, True  int64
	Known        bool // the truth names the function
	OK           bool
}

// Counts checks every row: one the model still counts holds its true
// calls within the tolerance; a switched-off one (disabled, budget) holds
// at most its true calls, its count having stopped. A row whose function
// the truth does not name fails: nothing vouches for it.
func Counts(rows []report.Row, t *Truth, lim Limits) (out []CountRow, ok bool) {
	ok = true
	for _, r := range rows {
		c := CountRow{Probe: r.Probe, Label: r.Label, Model: r.Count}
		c.True, c.Known = t.Calls[r.Probe]
		switch {
		case !c.Known:
		case off(r):
			c.OK = float64(r.Count) <= float64(c.True)*(1+lim.CountTolerance)
		default:
			c.OK = countOK(r.Count, c.True, lim)
		}
		ok = ok && c.OK
		out = append(out, c)
	}
	return out, ok
}

// Absent lists the registered probes that the truth says were called
// and that have no row: the model says nothing of them. That fails no
// check by itself (rows are written only for probes metered or
// labelled); the hidden check fails where such a probe is hot.
func Absent(rows []report.Row, registered map[string]bool, t *Truth) []string {
	in := map[string]bool{}
	for _, r := range rows {
		in[r.Probe] = true
	}
	var out []string
	for p := range registered {
		if !in[p] && t.Calls[p] > 0 {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func countOK(model, truth int64, lim Limits) bool {
	return math.Abs(float64(model-truth)) <= lim.CountTolerance*float64(truth)
}

// ShareRow is one of the profile's top functions, charged to the probes
// the model times, beside the model's share of inherent time.
type ShareRow struct {
	Probe, Label    string
	Profile, Model  float64 // shares, 0..1
	DiffPoints      float64 // |Profile − Model| × 100
	ProfileNS       float64
	ModelInherentNS int64
}

// SharesResult is the shares check.
type SharesResult struct {
	Rows      []ShareRow
	Avg, Max  float64 // points
	Claimed   float64 // share of the profile's CPU time charged to a timed probe
	OK        bool
	TimedRows int
}

// Shares charges the profile to the innermost frame of a probe the model
// times (untimed, disabled and budget rows, and probes the model lacks,
// pass their samples on to the nearest timed caller), takes the top
// lim.ShareTop, and compares each one's share of the charged CPU time with
// its share of the inherent time of the timed rows.
func Shares(rows []report.Row, prof *report.Profile, alias map[string]string, lim Limits) SharesResult {
	byProbe := map[string]report.Row{}
	var sum float64
	var res SharesResult
	for _, r := range rows {
		if timed(r) {
			byProbe[r.Probe] = r
			sum += float64(r.InherentTotal)
			res.TimedRows++
		}
	}
	c := Charge(prof, alias, func(fn string) bool { _, ok := byProbe[fn]; return ok })
	if c.All > 0 {
		res.Claimed = c.Claimed / c.All
	}
	for _, fn := range c.Top(lim.ShareTop) {
		r := byProbe[fn]
		s := ShareRow{Probe: fn, Label: r.Label, Profile: c.NS[fn] / c.Claimed, ProfileNS: c.NS[fn], ModelInherentNS: r.InherentTotal}
		if sum > 0 {
			s.Model = float64(r.InherentTotal) / sum
		}
		s.DiffPoints = 100 * math.Abs(s.Profile-s.Model)
		res.Avg += s.DiffPoints
		res.Max = math.Max(res.Max, s.DiffPoints)
		res.Rows = append(res.Rows, s)
	}
	if len(res.Rows) > 0 {
		res.Avg /= float64(len(res.Rows))
	}
	res.OK = len(res.Rows) > 0 && res.Avg <= lim.ShareAvg && res.Max <= lim.ShareMax
	return res
}

// HiddenRow is one of the profile's top functions charged to the
// innermost instrumented frame.
type HiddenRow struct {
	Probe, Label string
	ProfileNS    float64
	Share        float64 // of the charged CPU time
	InModel      bool
	Model, True  int64
	Known        bool    // the truth names the function
	OwnPerCall   float64 // ns: ProfileNS over the true calls (the model's count without a truth)
	OwnLow       float64 // ns: OwnPerCall at the 95% lower bound of the profile's samples (poissonLow)
	Why          string  // what is wrong; empty when nothing is
}

// poissonLow returns the one-sided 95% lower bound of the mean of a
// Poisson count of which n were seen (Wilson and Hilferty's
// approximation, within 1% of the exact bound from n = 4): a profile's
// samples of one function are such a count. An untimed row fails the
// hidden check where that bound puts its own time per call at the limit
// or over: 4 samples of a function the profile puts at 312 ns a call say
// only that it is over 106 ns.
func poissonLow(n float64) float64 {
	if n <= 0 {
		return 0
	}
	const z = 1.645
	c := 1 - 1/(9*n) - z/(3*math.Sqrt(n))
	return n * c * c * c
}

// HiddenResult is the "nothing hot hidden" check.
type HiddenResult struct {
	Rows    []HiddenRow
	Claimed float64 // share of the profile's CPU time charged to an instrumented frame
	OK      bool
}

// Hidden charges the profile to the innermost instrumented frame (a probe
// the model has a row for, or one of registered) and checks each of the
// top lim.HiddenTop: it is in the model, not switched off, with its true
// calls (when t is not nil), and, if untimed, with a true own time per
// call below lim.UntimedLimit.
func Hidden(rows []report.Row, registered map[string]bool, prof *report.Profile, t *Truth, lim Limits) HiddenResult {
	byProbe := map[string]report.Row{}
	for _, r := range rows {
		byProbe[r.Probe] = r
	}
	var alias map[string]string
	if t != nil {
		alias = t.Aliases
	}
	c := Charge(prof, alias, func(fn string) bool {
		_, ok := byProbe[fn]
		return ok || registered[fn]
	})
	res := HiddenResult{OK: true}
	if c.All > 0 {
		res.Claimed = c.Claimed / c.All
	}
	for _, fn := range c.Top(lim.HiddenTop) {
		r, in := byProbe[fn]
		h := HiddenRow{Probe: fn, Label: r.Label, ProfileNS: c.NS[fn], Share: c.NS[fn] / c.Claimed, InModel: in, Model: r.Count}
		calls := r.Count
		if t != nil {
			h.True, h.Known = t.Calls[fn]
			calls = h.True
		}
		if calls > 0 {
			h.OwnPerCall = h.ProfileNS / float64(calls)
			if n := c.Samples[fn]; n > 0 {
				h.OwnLow = h.OwnPerCall * poissonLow(n) / n
			}
		}
		switch {
		case !in:
			h.Why = "not in the model"
		case off(r):
			h.Why = r.Label
		case t != nil && !h.Known:
			h.Why = "no truth"
		case t != nil && !countOK(r.Count, h.True, lim):
			h.Why = "count"
		case r.Label == schema.LabelUntimed && h.OwnLow >= float64(lim.UntimedLimit):
			h.Why = "untimed but long"
		}
		res.OK = res.OK && h.Why == ""
		res.Rows = append(res.Rows, h)
	}
	return res
}

// CPUResult is the sanity check of the model's inherent times against
// the process's CPU time.
type CPUResult struct {
	Inherent time.Duration // sum over the rows
	CPU      time.Duration // 0: unknown
	Wait     time.Duration // the threads' wait for a core, from the truth file, else the model's .meta; 0: unknown
	Steal    time.Duration // the process's share of the steal time, from the truth file; 0: unknown
	Source   string        // where CPU comes from
	Checked  bool          // the program declares its work CPU-bound
	OK       bool
}

// CPU compares the sum of the rows' inherent times with the process's
// CPU time: from the truth file, else the model's .meta (cpu_ns), else
// the profile's samples, which start and stop a little inside the run.
// Inherent time is wall time, which holds the time a thread was ready to
// run and waited for a core that other processes had; where the truth
// file (else the model's .meta, core_wait_ns) gives that wait, the bound
// is CPU time plus the wait; and on a VM, the time the host ran other
// guests while the process's threads were running as far as the guest
// knew (steal), where the truth file gives the process's share of it. It fails
// only where the truth says the work is CPU-bound (one goroutine at a
// time, no waiting) or checked is set.
func CPU(rows []report.Row, t *Truth, m *report.Model, prof *report.Profile, checked bool) CPUResult {
	var res CPUResult
	for _, r := range rows {
		res.Inherent += time.Duration(r.InherentTotal)
	}
	if t != nil {
		res.Wait, res.Steal = t.Wait, t.Steal
	}
	if res.Wait == 0 && m != nil {
		res.Wait = m.CoreWait
	}
	switch {
	case t != nil && t.CPU > 0:
		res.CPU, res.Source = t.CPU, "truth file"
	case m != nil && m.CPU > 0:
		res.CPU, res.Source = m.CPU, "model's .meta"
	default:
		c := Charge(prof, nil, func(string) bool { return false })
		res.CPU, res.Source = time.Duration(c.All), "profile's samples"
	}
	res.Checked = checked || t != nil && t.CPUBound
	res.OK = !res.Checked || res.CPU > 0 && res.Inherent <= res.CPU+res.Wait+res.Steal
	return res
}
