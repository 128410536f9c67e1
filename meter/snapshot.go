package meter

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meterio/meter/clock"
)

// Labels in the model.
const (
	LabelHotspot  = "hotspot"
	LabelDisabled = "disabled"
	LabelBudget   = "budget"
)

// Row is one probe in a snapshot of the model. Times are ns.
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
	Reenabled     int64 // times a spot check re-enabled it
}

// Snapshot is the performance model at one moment.
type Snapshot struct {
	Taken           time.Time
	Clock           string
	Extensions      []string // "name(settings)", in chain order
	Rows            []Row    // metered or labelled probes, largest inherent total first
	Probes          int      // registered probes
	Traces          int64    // traces ended
	TruncatedTraces int64    // of which reached the trace maximum
	Dropped         int64    // spans the export path dropped
	Clamped         uint64   // negative clock differences clamped to zero
}

var foldMu sync.Mutex

// Take reads the model without stopping the program. It moves the epoch on,
// so new firings go to the other bank, waits for the firings still being
// recorded in the old one (a few ns each) and folds it into the base. The
// result is a consistent cut: every firing recorded before the epoch moved
// is in every row it touches, and none after.
func Take() Snapshot {
	foldMu.Lock()
	defer foldMu.Unlock()
	old := epoch.Add(1) - 1
	s := Snapshot{
		Taken:           time.Now(),
		Clock:           clock.Source(),
		Traces:          tracesEnded.Load(),
		TruncatedTraces: tracesTruncated.Load(),
		Dropped:         dropped.Load(),
		Clamped:         clock.Clamped(),
	}
	for _, e := range engine.exts {
		s.Extensions = append(s.Extensions, e.Name()+"("+e.Settings()+")")
	}
	probes := Probes()
	s.Probes = len(probes)
	for _, p := range probes {
		p.fold(old & 1)
		r := p.row()
		if r.Label == "" {
			for _, l := range engine.labelers {
				if r.Label = l.Label(&r); r.Label != "" {
					break
				}
			}
		}
		if r.Count > 0 || r.Label != "" {
			s.Rows = append(s.Rows, r)
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

// row reads the probe's base, which only Take writes.
func (p *Probe) row() Row {
	r := Row{Probe: p.name}
	r.Count, r.Total, r.InherentTotal = p.base.count.Load(), p.base.total.Load(), p.base.inherent.Load()
	r.Min, r.Max = p.base.min.Load(), p.base.max.Load()
	if r.Count > 0 {
		r.Avg, r.InherentAvg = r.Total/r.Count, r.InherentTotal/r.Count
	} else {
		r.Min, r.Max = 0, 0
	}
	switch p.Disabled() {
	case DisabledHotspot:
		r.Label = LabelDisabled
	case DisabledBudget:
		r.Label = LabelBudget
	}
	r.Reenabled = p.reenabled.Load()
	return r
}
