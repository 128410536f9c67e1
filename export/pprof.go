package export

import (
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/pprof/profile"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/meter"
)

// Sample types of the pprof profile, in this order.
const (
	SampleCount     = "count"     // metered firings
	SampleInclusive = "inclusive" // ns: End − Begin of those firings
	SampleInherent  = "inherent"  // ns: inclusive minus metered children; the default
)

// CallPaths aggregates exported spans by call path: the probes from the
// trace's root down to the span. The exporter goroutine adds to it once per
// batch; WriteProfile reads it. Its size follows the number of distinct
// paths, not the number of spans.
type CallPaths struct {
	mu    sync.Mutex
	nodes []pathNode        // node 0 is the empty path
	index map[pathKey]int32 // (parent node, probe) → node
	trace uint64            // trace the last record belonged to
	node  []int32           // node of each span of that trace, by index

	byPrb map[*meter.Probe]*pathTotals // totals of traced firings per probe
}

type pathKey struct {
	parent int32
	probe  *meter.Probe
}

type pathNode struct {
	parent                     int32
	probe                      *meter.Probe
	count, inclusive, inherent int64
}

type pathTotals struct{ count, inclusive, inherent int64 }

// NewCallPaths returns an empty aggregate.
func NewCallPaths() *CallPaths {
	return &CallPaths{
		nodes: []pathNode{{parent: -1}},
		index: map[pathKey]int32{},
		byPrb: map[*meter.Probe]*pathTotals{},
	}
}

// add folds a batch of records in, given as the one or two runs of queue
// slots that hold them. The records of one trace are consecutive in the
// queue, so a trace split over two batches continues where it left.
func (c *CallPaths) add(a, b []slot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range a {
		c.addRecord(&a[i].rec)
	}
	for i := range b {
		c.addRecord(&b[i].rec)
	}
}

func (c *CallPaths) addRecord(r *record) {
	if r.index == 0 || r.trace != c.trace {
		c.trace = r.trace
		c.node = c.node[:0]
	}
	if int(r.index) != len(c.node) { // not the next span of this trace: its start was lost
		return
	}
	parent := int32(0)
	if r.parent >= 0 && int(r.parent) < len(c.node) {
		parent = c.node[r.parent]
	}
	key := pathKey{parent, r.probe}
	n, ok := c.index[key]
	if !ok {
		n = int32(len(c.nodes))
		c.nodes = append(c.nodes, pathNode{parent: parent, probe: r.probe})
		c.index[key] = n
	}
	c.node = append(c.node, n)
	incl := clock.Nanos(clock.Elapsed(r.start, r.end))
	if r.end == 0 {
		incl = 0
	}
	nd := &c.nodes[n]
	nd.count++
	nd.inclusive += incl
	nd.inherent += r.inherent
	t := c.byPrb[r.probe]
	if t == nil {
		t = &pathTotals{}
		c.byPrb[r.probe] = t
	}
	t.count++
	t.inclusive += incl
	t.inherent += r.inherent
}

// WriteProfile writes the model and the call paths as a pprof profile
// (gzipped protobuf) with the sample types count, inclusive and inherent
// (ns); inherent is the default, so a flame graph of it shows where time
// goes, and a frame's cumulative inherent time is its inclusive time.
//
// Every traced firing is a sample whose stack is its call path (root →
// leaf), labelled source=trace. What the model holds beyond the traced
// firings (firings outside traces, or traced ones not exported yet) is one
// sample per probe with the probe alone on its stack, labelled
// source=model. So for each probe, the samples it is the leaf of add up to
// its row in the model: count, total and inherent total. paths may be nil.
func WriteProfile(w io.Writer, s meter.Snapshot, paths *CallPaths) error {
	return buildProfile(s, paths).Write(w)
}

// WritePprofFile writes the profile to path atomically.
func WritePprofFile(path string, s meter.Snapshot, paths *CallPaths) error {
	return WriteFileAtomic(path, func(w io.Writer) error { return WriteProfile(w, s, paths) })
}

func buildProfile(s meter.Snapshot, paths *CallPaths) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: SampleCount, Unit: "count"},
			{Type: SampleInclusive, Unit: "nanoseconds"},
			{Type: SampleInherent, Unit: "nanoseconds"},
		},
		DefaultSampleType: SampleInherent,
		TimeNanos:         s.Taken.UnixNano(),
		PeriodType:        &profile.ValueType{Type: SampleCount, Unit: "count"},
		Period:            1,
		Comments:          []string{"meter: metered call paths and the performance model; clock " + s.Clock},
	}
	// One mapping for the program, already symbolized: the locations are
	// probes, named, without addresses.
	exe, _ := os.Executable()
	m := &profile.Mapping{ID: 1, File: filepath.Base(exe), HasFunctions: true}
	p.Mapping = []*profile.Mapping{m}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		locs[name] = l
		return l
	}
	traced := map[string]pathTotals{}
	if paths != nil {
		paths.mu.Lock()
		for i := 1; i < len(paths.nodes); i++ {
			n := &paths.nodes[i]
			if n.count == 0 {
				continue
			}
			var stack []*profile.Location // leaf first
			for j := int32(i); j > 0; j = paths.nodes[j].parent {
				stack = append(stack, loc(paths.nodes[j].probe.Name()))
			}
			p.Sample = append(p.Sample, &profile.Sample{
				Location: stack,
				Value:    []int64{n.count, n.inclusive, n.inherent},
				Label:    map[string][]string{"source": {"trace"}},
			})
		}
		for pr, t := range paths.byPrb {
			tt := traced[pr.Name()]
			tt.count += t.count
			tt.inclusive += t.inclusive
			tt.inherent += t.inherent
			traced[pr.Name()] = tt
		}
		paths.mu.Unlock()
	}
	for _, r := range s.Rows {
		t := traced[r.Probe]
		c, in, inh := r.Count-t.count, r.Total-t.inclusive, r.InherentTotal-t.inherent
		if c <= 0 && in <= 0 && inh <= 0 {
			continue
		}
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{loc(r.Probe)},
			Value:    []int64{max(c, 0), max(in, 0), max(inh, 0)},
			Label:    map[string][]string{"source": {"model"}},
		})
	}
	return p
}

// Frozen returns a copy of the call paths as they are now. Take the copy
// before meter.Take when writing a profile: every span in the copy is then
// in the snapshot too, because a firing is recorded in the model before its
// trace reaches the export path.
func (c *CallPaths) Frozen() *CallPaths {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := &CallPaths{
		nodes: append([]pathNode(nil), c.nodes...),
		index: map[pathKey]int32{},
		byPrb: make(map[*meter.Probe]*pathTotals, len(c.byPrb)),
	}
	for p, t := range c.byPrb {
		tt := *t
		f.byPrb[p] = &tt
	}
	return f
}
