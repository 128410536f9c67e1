package export

import (
	"sync"

	"github.com/meterio/meter/clock"
)

// CallPaths aggregates exported spans by call path: the probes from the
// trace's root down to the span. The exporter goroutine adds to it once per
// batch; WriteProfile reads it. Its size follows the number of distinct
// paths, not the number of spans.
//
// A trace may arrive in parts (see meter.Sink): spans that ended while
// their root still ran come first, and their ancestors later. A span whose
// parent has not arrived yet waits, in its trace, until the parent does;
// then it and everything waiting beneath it take their paths. What still
// waits when its trace's final part has arrived (its ancestor was dropped)
// is let go: the model's sample for the probe keeps its time. At most
// maxOpenTraces traces, and maxWaiting spans in all, wait at a time; past
// that the oldest are let go.
type CallPaths struct {
	mu    sync.Mutex
	nodes []pathNode            // node 0 is the empty path
	index map[pathKey]int32     // (parent node, probe) → node
	byPrb map[int32]*pathTotals // by probe id

	open    map[uint64]*openTrace // traces whose final part has not arrived
	order   []uint64              // ids in open, oldest first (may name closed traces)
	waiting int                   // spans waiting for their parents, in all
	last    *openTrace            // the trace of the last record: most records follow their trace's
	free    []*openTrace
}

// Bounds on what waits for parents that have not arrived.
const (
	maxOpenTraces = 4096
	maxWaiting    = 1 << 18
)

type pathKey struct {
	parent int32
	probe  int32 // meter.Probe.ID
}

type pathNode struct {
	parent                     int32
	probe                      int32 // meter.Probe.ID
	count, inclusive, inherent int64
}

type pathTotals struct{ count, inclusive, inherent int64 }

// openTrace is one trace whose final part has not arrived.
type openTrace struct {
	id      uint64
	node    []int32            // by span index: 1 + its path node once placed; 0 before
	pending map[int32][]record // by the index of a span not placed yet: spans whose parent it is
	waiting int
}

// newCallPaths returns an empty aggregate.
func newCallPaths() *CallPaths {
	return &CallPaths{
		nodes: []pathNode{{parent: -1}},
		index: map[pathKey]int32{},
		byPrb: map[int32]*pathTotals{},
		open:  map[uint64]*openTrace{},
	}
}

// add folds a batch of records in, given as the one or two runs of queue
// slots that hold them.
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
	t := c.trace(r.trace)
	if parent, ok := t.placed(r.parent); ok {
		c.place(t, r, parent)
	} else if c.waiting < maxWaiting {
		if t.pending == nil {
			t.pending = map[int32][]record{}
		}
		t.pending[r.parent] = append(t.pending[r.parent], *r)
		t.waiting++
		c.waiting++
	}
	if r.flags&flagFinal != 0 {
		c.close(t)
	}
}

// trace returns the open trace id, opening it if need be.
func (c *CallPaths) trace(id uint64) *openTrace {
	if t := c.last; t != nil && t.id == id {
		return t
	}
	t := c.open[id]
	if t == nil {
		if len(c.open) >= maxOpenTraces {
			c.evict()
		}
		if n := len(c.free); n > 0 {
			t, c.free = c.free[n-1], c.free[:n-1]
		} else {
			t = &openTrace{}
		}
		t.id = id
		if len(c.open) == 0 {
			c.order = c.order[:0]
		}
		c.open[id] = t
		if len(c.order) >= 2*maxOpenTraces {
			c.compact()
		}
		c.order = append(c.order, id)
	}
	c.last = t
	return t
}

// evict lets the oldest open traces go, until there is room for one more.
func (c *CallPaths) evict() {
	i := 0
	for ; i < len(c.order) && len(c.open) >= maxOpenTraces; i++ {
		if t := c.open[c.order[i]]; t != nil {
			c.close(t)
		}
	}
	c.order = append(c.order[:0], c.order[i:]...)
}

// compact drops the ids of closed traces from order, keeping its order.
func (c *CallPaths) compact() {
	k := 0
	for _, id := range c.order {
		if c.open[id] != nil {
			c.order[k] = id
			k++
		}
	}
	c.order = c.order[:k]
}

// close forgets a trace and whatever of it still waits.
func (c *CallPaths) close(t *openTrace) {
	delete(c.open, t.id)
	if c.last == t {
		c.last = nil
	}
	c.waiting -= t.waiting
	clear(t.node)
	t.node, t.pending, t.waiting = t.node[:0], nil, 0
	c.free = append(c.free, t)
}

// placed returns the path node of the span at index i (the empty path for
// -1, the root's parent) and whether it is placed.
func (t *openTrace) placed(i int32) (int32, bool) {
	if i < 0 {
		return 0, true
	}
	if int(i) < len(t.node) && t.node[i] != 0 {
		return t.node[i] - 1, true
	}
	return 0, false
}

// place adds r under the path node parent, then everything that waited for
// r, depth first.
func (c *CallPaths) place(t *openTrace, r *record, parent int32) {
	n := c.addSpan(r, parent)
	t.set(r.index, n)
	if t.pending == nil {
		return
	}
	type item struct {
		r      record
		parent int32
	}
	var stack []item
	push := func(i, node int32) {
		for _, w := range t.pending[i] {
			stack = append(stack, item{w, node})
		}
		if k := len(t.pending[i]); k > 0 {
			t.waiting -= k
			c.waiting -= k
			delete(t.pending, i)
		}
	}
	push(r.index, n)
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		m := c.addSpan(&it.r, it.parent)
		t.set(it.r.index, m)
		push(it.r.index, m)
	}
}

func (t *openTrace) set(i, node int32) {
	if i < 0 {
		return
	}
	for int(i) >= len(t.node) {
		t.node = append(t.node, 0)
	}
	t.node[i] = node + 1
}

// addSpan adds one span's times to the path parent + its probe, and
// returns that path's node.
func (c *CallPaths) addSpan(r *record, parent int32) int32 {
	key := pathKey{parent, r.probe}
	n, ok := c.index[key]
	if !ok {
		n = int32(len(c.nodes))
		c.nodes = append(c.nodes, pathNode{parent: parent, probe: r.probe})
		c.index[key] = n
	}
	var incl int64
	if r.end != 0 {
		incl = clock.Nanos(clock.Elapsed(r.start, r.end))
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
	return n
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
		byPrb: make(map[int32]*pathTotals, len(c.byPrb)),
	}
	for p, t := range c.byPrb {
		tt := *t
		f.byPrb[p] = &tt
	}
	return f
}
