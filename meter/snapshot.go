package meter

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/schema"
)

// Labels in the model (package schema defines them and says what each
// means).
const (
	LabelHotspot  = schema.LabelHotspot
	LabelSampled  = schema.LabelSampled
	LabelUntimed  = schema.LabelUntimed
	LabelTraced   = schema.LabelTraced
	LabelDisabled = schema.LabelDisabled
	LabelBudget   = schema.LabelBudget
)

// Row is one probe in a snapshot of the model. Count is the number of
// calls (up to its disabling, for a disabled probe). Times are ns: the
// totals over every call, measured where each call was metered and
// estimated from the metered calls where some were not (sampled, traced,
// or skipped for want of budget), and none for an untimed probe. Inherent
// time is inclusive time less that of the timed children (parent.go).
type Row struct {
	Probe         string
	Count         int64
	Total         int64
	Avg           int64
	InherentTotal int64
	InherentAvg   int64
	Min           int64
	Max           int64
	Label         string
	Metered       int64   // firings measured
	SD            float64 // standard deviation of the inclusive times of the metered firings, ns
	Reenabled     int64   // times a spot check re-enabled it
	// Waited is the wall time, ns, of the stretches of its own time that
	// were left out because its goroutine parked to wait in them
	// (stretch.go): the CPU time they held before and after the wait is
	// missing from its inherent time. Scaled to the count as its times are.
	Waited int64
	// Open is how many of its calls were still running at the snapshot
	// with their time so far in its totals (open.go): a function that runs
	// for the life of the program shows what it ran up to now.
	Open int64
	// TimeIn names, for an untimed or disabled row, the probes whose own
	// time holds its calls' time: those its metered calls ran under, at
	// most four (the report lists a row's untimed callees from them).
	TimeIn []string
}

// Snapshot is the performance model at one moment.
type Snapshot struct {
	Taken            time.Time
	Started          time.Time // when the chain was first wired with metering on
	Final            bool      // the last model of the run (the exports set it at exit); false: the run goes on
	Roots            []string  // the probes marked as entries of units of work
	Clock            string
	ClockFallback    string      // why the clock is mono where the TSC was not refused by the user (clock.Fallback)
	Extensions       []string    // "name(settings)", in chain order
	Rows             []Row       // metered or labelled probes, largest inherent total first
	Probes           int         // registered probes
	Traces           int64       // traces ended
	TruncatedTraces  int64       // of which truncated: reached the maximum, handed over in parts, or lost their root
	Unwound          int64       // metered firings a panic or runtime.Goexit unwound before their End: not timed
	Disturbed        int64       // stretches of own time left out: the goroutine parked to wait in them, or waited in a system call (stretch.go)
	SyscallStretches int64       // of those, stretches timed by the wall clock that held a system call (stretch.go)
	Unfollowed       int64       // trace parts, and firings in them, that found the pool of marks dry: goroutines started there did not join (join.go)
	Descheduled      int64       // stretches charged their wall time less run-queue waits: the scheduler took the goroutine off its P in them (sched.go)
	WaitsSeen        bool        // the engine tells waits from work (wait.go); false: own time holds waits
	Sampler          int64       // ns, the sampler's mean interval (sampler_linux.go); 0: no sampler
	Interrupted      int64       // selected firings suspect of a pause: their own time over the threshold and 64 times their probe's mean (end.go, interrupted)
	Overcharged      int64       // stretches shorter than the estimate of the sampled probe's calls in them; the excess, summed over the probe's, taken off it (stretch.go)
	Dropped          int64       // spans the export path dropped
	UntimedLimit     int64       // ns of own time per call under which a cold probe is untimed
	Overheads        [3][2]int64 // ns, inner and outer overhead of a metered firing: [0] of a metered probe, [1] of a selected one, [2] of a forced one (calibrate.go)
	Residual         [3]int64    // ns a firing whose parent leaves out its metering, timed, still costs the parent (calibrate.go), by path as Overheads
	ClockGap         int64       // ns a clock read adds between two others (calibrate.go)
	Unmetered        int64       // ns a sampled probe's firing that is not metered costs its stretch, charged with its mean (calibrate.go)
	Bracket          int64       // ns a bracket of a wait that did not park costs its stretch, taken off it (calibrate.go)
	StretchMark      int64       // ns a mark after a go statement costs the stretch it begins, taken off it (calibrate.go)
	Clamped          uint64      // negative clock differences clamped to zero
}

// started is when Configure first wired a chain with metering on.
var started atomic.Value

func init() { started.Store(time.Time{}) }

// Take reads the model without stopping the program. Each statistics row
// is read whole (its writer is never blocked: a row being written is read
// again).
func Take() Snapshot {
	s := Snapshot{
		Taken:            time.Now(),
		Clock:            clock.Source(),
		ClockFallback:    clock.Fallback(),
		Extensions:       Settings(),
		Traces:           tracesEnded.load(),
		TruncatedTraces:  tracesTruncated.Load(),
		Started:          started.Load().(time.Time),
		Unwound:          unwound.Load(),
		Disturbed:        disturbed.Load(),
		SyscallStretches: syscallStretches.Load(),
		Unfollowed:       unfollowed.Load(),
		WaitsSeen:        waitsSeen(),
		Sampler:          samplerInterval.Load(),
		Descheduled:      descheduled.Load(),
		Interrupted:      interruptions.Load(),
		Overcharged:      overcharges.Load(),
		Dropped:          dropped.Load(),
		Clamped:          clock.Clamped(),
		UntimedLimit:     UntimedLimit(),
	}
	if engine.manual != nil {
		s.Clock, s.ClockFallback = "manual", ""
	}
	for k := range overhead {
		s.Overheads[k] = [2]int64{overhead[k].inner.Load(), overhead[k].outer.Load()}
		s.Residual[k] = residual[k].inner.Load()
	}
	s.Unmetered, s.ClockGap = unmetered.inner.Load(), clockGap
	s.Bracket, s.StretchMark = bracket.inner.Load(), stretchMark.inner.Load()
	probes := Probes()
	s.Probes = len(probes)
	rowOf := make(map[*Probe]int, len(probes))
	var short []deficit
	for _, p := range probes {
		if r, own := p.rowOwn(); r.Count > 0 || r.Label != "" {
			rowOf[p] = len(s.Rows)
			s.Rows = append(s.Rows, r)
			if own < 0 {
				short = append(short, deficit{p, -own})
			}
		}
		if p.Root() {
			s.Roots = append(s.Roots, p.name)
		}
	}
	takeDeficits(s.Rows, rowOf, short, probes)
	slices.SortFunc(s.Rows, func(a, b Row) int {
		if c := cmp.Compare(b.InherentTotal, a.InherentTotal); c != 0 {
			return c
		}
		return strings.Compare(a.Probe, b.Probe)
	})
	return s
}

// Deficits. A caller's own time is its stretches less what its
// children were charged: a sampled child's unmetered calls at the child's
// estimate, which its selected calls give. Those are timed by a clock
// read on each side, and run slower than the calls that are not (a read
// waits for the work before it; the other calls overlap theirs with
// their caller's): a short function that moves memory measures a third
// longer selected than it runs. Where a stretch holds one sampled
// probe's calls alone, the stretch bounds them (overcharged). Where it
// holds several probes' calls (a loop that calls two sampled functions,
// one of them also under the other through an untimed layer), no stretch
// tells one probe's excess from another's; but a caller whose own time
// comes to less than nothing, over all its stretches, was charged more
// than its stretches held, and its sampled children's estimates are too
// high by that much at least.
//
// So a model takes such a caller's deficit off its sampled children's
// rows, in proportion to their own time under it (the share of their
// selected firings' own time that had it as their timed parent,
// Probe.callers), at most half of each child's time there, and the
// caller's own time stays at 0. The deficit binds only where the caller
// does little besides the calls: a caller with own work of its own hides
// as much of its children's excess, as the bound does. The correction is
// the model's, taken as it is written: the chain's verdicts and the
// charges stand.

// deficit is a probe's own time below 0, in ns.
type deficit struct {
	p  *Probe
	ns int64
}

// takeDeficits takes each caller's deficit in short off the rows of its
// sampled children (probes), rows[rowOf[p]] being p's.
func takeDeficits(rows []Row, rowOf map[*Probe]int, short []deficit, probes []*Probe) {
	type share struct {
		row  *Row
		time float64 // ns of own time under the caller
	}
	var under []share
	for _, d := range short {
		under = under[:0]
		var sum float64
		for _, c := range probes {
			i, ok := rowOf[c]
			if !ok || c == d.p || c.State() != Sampled || rows[i].InherentTotal <= 0 {
				continue
			}
			sel := c.selectedOwn.Load()
			if sel <= 0 {
				continue
			}
			for k := range c.callers.to {
				e := &c.callers.to[k]
				if e.parent.Load() != d.p {
					continue
				}
				if own := e.own.Load(); own > 0 {
					t := float64(rows[i].InherentTotal) * min(float64(own)/float64(sel), 1)
					under = append(under, share{&rows[i], t})
					sum += t
				}
				break
			}
		}
		if sum <= 0 {
			continue
		}
		for _, u := range under {
			cut := int64(math.Round(min(float64(d.ns)*u.time/sum, u.time/2)))
			r := u.row
			r.InherentTotal -= cut
			r.Total = max(r.Total-cut, r.InherentTotal)
			if r.Count > 0 {
				r.Avg, r.InherentAvg = r.Total/r.Count, r.InherentTotal/r.Count
			}
		}
	}
}

// untimedYet reports whether p, not judged yet, would be untimed on what
// its metered firings show: its calls' inclusive time is under the untimed
// limit. A program that ends before hotspot judges its probes (a short
// one) then claims no time for calls the clock could not time.
func (p *Probe) untimedYet() bool {
	switch p.short.Load() {
	case shortYes:
		return true
	case shortNo:
		return false
	}
	t := p.stats.sum()
	if t.wsum == 0 || engine.gated {
		return false
	}
	return t.wtotal/t.wsum < UntimedLimit()
}

// row returns p's row.
func (p *Probe) row() Row {
	r, _ := p.rowOwn()
	return r
}

// rowOwn returns p's row, and its own time before it is floored at 0, in
// ns: below 0 where its stretches held less than its children were charged
// (deficits).
func (p *Probe) rowOwn() (Row, int64) {
	t := p.stats.sum()
	back := t.back + givenBack(p)
	r := Row{Probe: p.name, Count: p.Calls(), Metered: t.count, Min: t.min, Max: t.max, Reenabled: p.reenabled.Load()}
	if n := float64(t.count); n > 1 {
		m := float64(t.total) / n
		r.SD = math.Sqrt(max(t.sqTotal/n-m*m, 0) * n / (n - 1))
	}
	wtotal, wown := t.trimmed(r.Count)
	if off := p.pendingOff(); off != 0 {
		wtotal, wown = wtotal-off, wown-off
	}
	st := p.State()
	var own int64
	switch {
	case st == Untimed || st == Enabled && p.untimedYet():
		r.Label = LabelUntimed
		r.Min, r.Max, r.SD = 0, 0, 0
		r.TimeIn = p.warm.parents()
		return r, 0
	case st.Disabled():
		r.TimeIn = p.warm.parents()
		// Its metered firings only, as they were measured.
		r.Label = LabelDisabled
		if st == DisabledBudget {
			r.Label = LabelBudget
		}
		r.Total, r.InherentTotal = int64(math.Round(max(wtotal, 0))), int64(math.Round(max(wown+float64(back), 0)))
		r.Count = max(r.Count, t.wsum)
		r.Waited = max(p.waited.Load(), 0)
		own = r.InherentTotal
	default:
		// The metered firings that ended stand for wsum calls: scaled to
		// the count, less the calls of the firings still open that showed
		// their time so far (open.go), which stand for themselves.
		oown, oincl, ocalls := p.openTimes()
		if t.wsum > 0 {
			scale := float64(max(r.Count-ocalls, t.wsum)) / float64(t.wsum)
			r.Total = int64(math.Round(max(wtotal, 0) * scale))
			own = int64(math.Round((wown + float64(back)) * scale))
			r.InherentTotal = max(own, 0)
			r.Waited = max(int64(float64(p.waited.Load())*scale), 0)
		}
		r.Total += oincl
		r.InherentTotal += oown
		own += oown
		r.Open = ocalls
	}
	if r.Count > 0 {
		r.Avg, r.InherentAvg = r.Total/r.Count, r.InherentTotal/r.Count
	}
	if r.Label != "" {
		return r, own
	}
	switch {
	case engine.gated && t.count > 0:
		r.Label = LabelTraced
	case st == Sampled:
		r.Label = LabelSampled
	case engine.hotspot != nil && t.count > 0 && engine.hotspot.Label(r.Avg, r.InherentAvg):
		r.Label = LabelHotspot
	}
	return r, own
}
