package report

import (
	"math"
	"slices"
	"time"

	"github.com/meterio/meter/schema"
)

// Coverage is how much of the program's time the model covers: the
// inclusive time of the entry probes' firings, each counted once, against
// the process's wall and CPU time.
//
// An entry's firing counts only where no other entry is open beneath it
// on its goroutine (it is outermost): a router's ServeHTTP, the
// middleware closure it calls and the handler under that are three
// entries, and one request is one unit of work. So the covered time never
// counts one moment of one goroutine twice, and it can pass the wall time
// only by work on several goroutines at once.
//
// Which firings run inside another entry is not in the CSV: it comes from
// the traced call paths of the pprof export. Every nested entry firing g
// has one nearest entry firing f open beneath it; so the nested calls of
// an entry E are, summed over every entry firing f, the calls of E whose
// nearest enclosing entry is f. A traced firing's subtree is in the paths
// whole: for f inside a trace that sum is read off exactly. The firings of
// an entry R outside traces (its count, less its firings inside traces)
// are sampled by the traces R starts, so for them the sum over R's traces
// is scaled by (R's firings outside traces) / (traces R started). What E's
// nested calls took is that count times the mean inclusive time of E's
// traced nested calls; E's covered time is its total less that, and no
// time at all when every call of it is nested. Where the program nests
// entries the same way every time (a router, its middleware, a handler),
// the nested counts come out exact. Elsewhere they are estimates from a
// sample, as good as the number of traces; a program whose nesting repeats
// in step with the tracepoint's sample (every Nth firing) can skew them.
type Coverage struct {
	Entries  []Entry // the entry probes in the model, in the order of Model.Roots or of the traces
	FromPath bool    // no probe is marked as an entry: the entries are the probes that start traces
	Nesting  bool    // the traced call paths say which entries run inside others
	Covered  int64   // ns: the entries' outermost inclusive time, summed
	// With several entries and no traced call paths, which of them run
	// inside others is not known: Covered sums them all (an upper bound,
	// exact if none nests), and Least is the largest entry's total (a
	// lower bound).
	Least int64
	// With no entry known at all: the row with the largest inclusive
	// total, a lower bound of the covered time.
	Largest *Row
	Wall    time.Duration // the process's wall time; 0: unknown
	CPU     time.Duration // its CPU time, user and system; 0: unknown
	// CoreWait is the time its threads waited for a core (Model.CoreWait).
	CoreWait time.Duration
}

// Entry is one entry probe and the part of its time the coverage counts.
type Entry struct {
	Row
	Outer   float64  // share of its calls with no other entry open beneath them on the goroutine
	Inside  []string // entries the traced call paths show it inside, by name
	Traced  bool     // it is in some traced call path
	Covered int64    // ns counted: its total less what its nested calls took
}

// Coverage works out how much of the program's time the model covers.
// Entry probes are those in m.Roots (probe.Roots marks them; the .meta
// key roots names them), else the probes that start the traced call
// paths of m.Profile. With neither, Largest is the best the model can say.
func (m *Model) Coverage() Coverage {
	c := Coverage{Wall: m.Wall, CPU: m.CPU, CoreWait: m.CoreWait}
	byName := make(map[string]*Row, len(m.Rows))
	for i := range m.Rows {
		byName[m.Rows[i].Probe] = &m.Rows[i]
	}
	paths := tracedPaths(m.Profile)
	names := m.Roots
	if len(names) == 0 && paths != nil {
		for _, r := range paths.Children {
			names = append(names, r.Name)
		}
		c.FromPath = true
	}
	index := map[string]int{}
	for _, name := range names {
		r := byName[name]
		if _, dup := index[name]; r == nil || dup {
			continue
		}
		index[name] = len(c.Entries)
		c.Entries = append(c.Entries, Entry{Row: *r, Outer: 1})
	}
	c.FromPath = c.FromPath && len(c.Entries) > 0
	if len(c.Entries) == 0 {
		for i := range m.Rows {
			if c.Largest == nil || m.Rows[i].Total > c.Largest.Total {
				c.Largest = &m.Rows[i]
			}
		}
		return c
	}
	for i := range c.Entries {
		c.Entries[i].Covered = c.Entries[i].Total
	}
	if paths != nil {
		c.Nesting = nest(c.Entries, index, paths)
	}
	for i := range c.Entries {
		e := &c.Entries[i]
		c.Covered += e.Covered
		c.Least = max(c.Least, e.Total)
	}
	if c.Nesting || len(c.Entries) == 1 {
		c.Least = c.Covered
	}
	return c
}

// tracedPaths returns the traced call paths of a profile the runtime
// wrote (samples labelled source=trace, with a count of firings), as a
// flame graph's root; nil when there are none.
func tracedPaths(p *Profile) *flameNode {
	if p == nil || p.Index(schema.SampleCount) < 0 {
		return nil
	}
	traced := false
	for i := range p.Samples {
		if src := p.Samples[i].Labels[schema.SourceLabel]; len(src) > 0 && src[0] == schema.SourceTrace {
			traced = true
			break
		}
	}
	if !traced {
		return nil
	}
	root, _ := p.flame()
	if len(root.Children) == 0 {
		return nil
	}
	return root
}

// nest sets each entry's outer share and covered time from the traced
// call paths (see Coverage), and reports whether any trace starts at an
// entry: only such a trace says what runs inside an entry.
func nest(entries []Entry, index map[string]int, paths *flameNode) bool {
	n := len(entries)
	traces := make([]int64, n)    // by entry: traces it started
	inTrace := make([]int64, n)   // by entry: its firings inside traces, beneath their roots
	sampled := make([][]int64, n) // by root entry R, by entry E: calls of E whose nearest enclosing entry is a root R
	exact := make([]float64, n)   // by entry: nested calls whose nearest enclosing entry is inside a trace
	nestedNs := make([]int64, n)  // by entry: inclusive time of its traced nested calls...
	nestedN := make([]int64, n)   // ...and their number
	inside := make([]map[string]bool, n)
	started := false
	// walk goes beneath a trace's root; enclosing is the index of the
	// nearest entry above, -1 for none, and atRoot whether that is the root.
	var walk func(nd *flameNode, root, enclosing int, atRoot bool, name string)
	walk = func(nd *flameNode, root, enclosing int, atRoot bool, name string) {
		for _, k := range nd.Children {
			j, isEntry := index[k.Name]
			if !isEntry {
				walk(k, root, enclosing, atRoot, name)
				continue
			}
			entries[j].Traced = true
			inTrace[j] += k.OwnCount
			if enclosing >= 0 {
				if atRoot {
					sampled[root][j] += k.OwnCount
				} else {
					exact[j] += float64(k.OwnCount)
				}
				nestedNs[j] += k.OwnInclusive
				nestedN[j] += k.OwnCount
				if inside[j] == nil {
					inside[j] = map[string]bool{}
				}
				inside[j][name] = true
			}
			walk(k, root, j, false, k.Name)
		}
	}
	for _, r := range paths.Children {
		i, isEntry := index[r.Name]
		if !isEntry {
			walk(r, -1, -1, false, "")
			continue
		}
		started = true
		entries[i].Traced = true
		traces[i] += r.OwnCount
		if sampled[i] == nil {
			sampled[i] = make([]int64, n)
		}
		walk(r, i, i, true, r.Name)
	}
	for j := range entries {
		for name := range inside[j] {
			entries[j].Inside = append(entries[j].Inside, name)
		}
		slices.Sort(entries[j].Inside)
	}
	if !started {
		return false
	}
	nested := exact
	for r := range entries {
		if sampled[r] == nil {
			continue
		}
		// A root's firings outside traces, of which its traces are a sample.
		outside := float64(max(entries[r].Count-inTrace[r], 0))
		scale := math.Inf(1) // a root whose own firings are missing: what is beneath it is nested
		if traces[r] > 0 {
			scale = outside / float64(traces[r])
		}
		for j, c := range sampled[r] {
			if c > 0 {
				nested[j] += scale * float64(c)
			}
		}
	}
	for j := range entries {
		e := &entries[j]
		if nested[j] == 0 || e.Count == 0 {
			continue
		}
		if nested[j] >= float64(e.Count) {
			e.Outer, e.Covered = 0, 0
			continue
		}
		e.Outer = 1 - nested[j]/float64(e.Count)
		mean := float64(nestedNs[j]) / float64(nestedN[j])
		e.Covered = max(0, e.Total-int64(math.Round(nested[j]*mean)))
	}
	return true
}
