package meter

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/clock"
)

// Labels in the model.
const (
	LabelHotspot  = "hotspot"  // mean inclusive and inherent times at or above hotspot's thresholds
	LabelDisabled = "disabled" // hotspot switched it off: its figures cover its metered firings only
	LabelBudget   = "budget"   // it can never afford its own measurement
	LabelSampled  = "sampled"  // metered in sampling windows: count and totals are estimates
)

// Row is one probe in a snapshot of the model. Times are ns. For a sampled
// probe, Count, Total and InherentTotal are estimates: what sampling
// windows measured, over the share of time they took (Metered says how
// many firings were measured). The inherent time of a probe metered always
// is its inclusive time times the inherent share that the firings windows
// overlapped show, once windows have run (see sampler.go).
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
	InherentSD    float64 // of their inherent times
	Reenabled     int64   // times a spot check re-enabled it
}

// Snapshot is the performance model at one moment.
type Snapshot struct {
	Taken           time.Time
	Started         time.Time // when the chain was first wired with metering on
	Final           bool      // the last model of the run (the exports set it at exit); false: the run goes on
	Roots           []string  // the probes marked as entries of units of work
	Clock           string
	Extensions      []string    // "name(settings)", in chain order
	Rows            []Row       // metered or labelled probes, largest inherent total first
	Probes          int         // registered probes
	Traces          int64       // traces ended
	TruncatedTraces int64       // of which truncated: reached the maximum, handed over in parts, or lost their root
	Unwound         int64       // metered firings a panic or runtime.Goexit unwound before their End: not counted
	Windows         int64       // sampling windows opened
	WindowNanos     int64       // how long they were open, in all
	SamplingNanos   int64       // since the first probe was sampled
	SamplingAlloc   int64       // bytes the program allocated since then (-1: unknown)
	WindowAlloc     int64       // of those, in windows
	Dropped         int64       // spans the export path dropped
	WindowOverhead  int64       // ns the windows' metering took, over all goroutines
	Interrupted     int64       // sampled firings in windows whose own time held an interruption, taken off (end.go)
	CountWindows    int64       // counting windows closed (counting.go)
	CountNanos      int64       // ns counting windows were open
	CountAlloc      int64       // bytes the program allocated in them
	Counted         int64       // sampled firings they counted
	CountOverhead   int64       // ns counting a firing costs
	Overheads       [2][2]int64 // ns, inner and outer overhead of a metered firing: [0] of an enabled probe, [1] of one in a window (calibrate.go)
	Clamped         uint64      // negative clock differences clamped to zero
}

// started is when Configure first wired a chain with metering on.
var started atomic.Value

func init() { started.Store(time.Time{}) }

// Take reads the model without stopping the program. Each statistics row
// is read whole (its writer is never blocked: a row being written is read
// again), so each row of the model counts exactly the metered firings
// whose times it holds.
func Take() Snapshot {
	s := Snapshot{
		Taken:           time.Now(),
		Clock:           clock.Source(),
		Extensions:      Settings(),
		Traces:          tracesEnded.load(),
		TruncatedTraces: tracesTruncated.Load(),
		Started:         started.Load().(time.Time),
		Unwound:         unwound.Load(),
		Windows:         int64(sampler.seq.Load()+1) / 2,
		Dropped:         dropped.Load(),
		Clamped:         clock.Clamped(),
		WindowOverhead:  sampler.over.Load(),
		Interrupted:     interruptions.Load(),
	}
	if engine.manual != nil {
		s.Clock = "manual"
	}
	if sampler.active.Load() {
		t := now()
		s.WindowNanos = windowNanos(t)
		s.SamplingNanos = nanos(sampler.since.Load(), t)
		s.SamplingAlloc, s.WindowAlloc = -1, 0
		if a, a0 := allocated(), sampler.allocSince.Load(); a >= 0 && a0 >= 0 {
			s.SamplingAlloc, s.WindowAlloc = a-a0, windowAlloc(a)
			s.CountAlloc = countingAlloc(a)
		}
		s.CountWindows, s.CountNanos = sampler.countWindows.Load(), countingNanos(t)
		s.Counted, s.CountOverhead = countedAll(), countOverhead.outer.Load()
	}
	for k := range overhead {
		s.Overheads[k] = [2]int64{overhead[k].inner.Load(), overhead[k].outer.Load()}
	}
	probes := Probes()
	s.Probes = len(probes)
	for _, p := range probes {
		if r := p.row(); r.Count > 0 || r.Label != "" {
			s.Rows = append(s.Rows, r)
		}
		if p.Root() {
			s.Roots = append(s.Roots, p.name)
		}
	}
	slices.SortFunc(s.Rows, func(a, b Row) int {
		if c := cmp.Compare(b.InherentTotal, a.InherentTotal); c != 0 {
			return c
		}
		return strings.Compare(a.Probe, b.Probe)
	})
	return s
}

func (p *Probe) row() Row {
	t := p.stats.sum()
	r := Row{Probe: p.name, Metered: t.count, Min: t.min, Max: t.max, Reenabled: p.reenabled.Load()}
	if n := float64(t.count); n > 1 {
		mi, mh := float64(t.total)/n, float64(t.inherent)/n
		r.SD = math.Sqrt(max(t.sqTotal/n-mi*mi, 0) * n / (n - 1))
		r.InherentSD = math.Sqrt(max(t.sqInh/n-mh*mh, 0) * n / (n - 1))
	}
	p.sampling.mu.Lock()
	e := p.adjustment(t, now())
	p.sampling.mu.Unlock()
	r.Count, r.Total, r.InherentTotal = t.count+e.count, t.total+e.total, t.inherent+e.inherent
	if p.State() != Sampled {
		// Metered always, with sampled probes under it: its own time, with
		// what they took as the windows show it (see ownEstimate).
		if own, ok := ownEstimate(p, t); ok {
			r.InherentTotal = own + e.inherent
		}
	}
	if r.Count > 0 {
		r.Avg, r.InherentAvg = r.Total/r.Count, r.InherentTotal/r.Count
	}
	switch p.State() {
	case DisabledHotspot:
		r.Label = LabelDisabled
	case DisabledBudget:
		r.Label = LabelBudget
	case Sampled:
		r.Label = LabelSampled
	default:
		if e != (totals{}) {
			r.Label = LabelSampled // sampled for a while: its figures hold estimates
		} else if h := engine.hotspot; h != nil && r.Count > 0 && h.Label(r.Avg, r.InherentAvg) {
			r.Label = LabelHotspot
		}
	}
	return r
}
