package meter

import (
	"context"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Traces across goroutines.
//
// A goroutine started while a trace is open on its creator joins that
// trace: its first metered firing is a span of the same trace, whose
// parent is the span that was open in the creator at the go statement, and
// the firings metered inside it are spans of the trace too. Its part of
// the trace ends with that firing; it then runs untraced.
//
// The runtime hands the child what it needs, with no change to the go
// statement: a new goroutine inherits its creator's profiler labels, one
// pointer in the runtime's g (runtime/pprof: "goroutines spawned while
// executing f will have the augmented label-set"). While a goroutine is
// inside a trace, that pointer points at a mark: an object that begins
// with the goroutine's own label set, laid out as runtime/pprof lays out
// the one it keeps there, so that the CPU profiler, the goroutine profile
// and GODEBUG=tracebacklabels read the labels the goroutine had, and goes
// on with the trace and the span open. Each metered firing in a trace gets
// a mark of its own, set as it begins and replaced by its parent's as it
// ends, so a child started at any moment carries the span open then.
//
// The child looks at its labels once: when the engine first meets it, at
// its first firing of a metered probe, which the goroutine table tells
// apart from the firings of the goroutine that had its g before
// (sameGoroutine). It then puts back the labels under the mark, so that it
// holds the mark no longer, and joins if the mark's trace has room left.
// An untraced goroutine pays nothing more than that one look; a goroutine
// outside any trace carries no mark, and a firing outside a trace writes no
// label.
//
// A mark must never change once a child may have copied it: a child that
// first fires long after its creator moved on (after the trace's root
// ended, say) must still find the span that was open at its go statement.
// So marks are never reused while any goroutine can reach them: they come
// in blocks that the collector returns to a pool, through a finalizer,
// once no goroutine's labels point into them (the runtime clears a
// goroutine's labels when it exits). A trace takes its blocks from the
// pool and never allocates one: a firing allocates nothing. The pool is
// filled when a trace gate is wired; a firing that finds it below a
// quarter of its size, or empty, starts a short-lived goroutine that fills
// it again, to a size that doubles (up to maxPool) each time it ran dry.
// Where it is dry (a burst of traces faster than a refill), goroutines
// started in a trace's part do not join it, and the model counts the part
// as unfollowed.
//
// What is followed: go statements, in the program and in the libraries it
// calls (errgroup's Go, a goroutine that outlives its handler), however
// deep. What is not: work handed to a goroutine that already runs (a
// worker pool fed by a channel: its goroutines were started outside the
// trace); a goroutine whose first metered firing is of a function that has
// never returned (a worker loop started by the request: it would meter its
// goroutine for as long as it lives); goroutines started inside a region
// where the program set labels of its own (pprof.Do, SetGoroutineLabels),
// which replace the mark until they are taken off.

// profLabel and labelList are runtime/pprof's label set as the runtime's
// labels pointer points at it: a struct holding one slice of key-value
// pairs (Go 1.20 and later; TestMarkLayout checks it against runtime/pprof).
type profLabel struct{ key, value string }

type labelList struct{ list []profLabel }

// markCap is the capacity a mark gives its copy of the label slice: no
// slice can have it, so a labels pointer whose slice has it is a mark. The
// profiler and the traceback only range over the slice.
const markCap = 0x6d657465725f6d6b

// mark is what a goroutine's labels point at while it is inside a trace.
type mark struct {
	labels labelList      // first: the goroutine's label set, its capacity markCap
	prev   unsafe.Pointer // the labels pointer under the marks: the program's
	trace  *sharedTrace
	span   int32 // index in the trace of the span open; -1 for none
}

// marksPerBlock is how many marks one block holds: the spans a part of a
// trace opens before it takes its next block.
const marksPerBlock = 16

// markBlock holds marks and, in the first block of a trace's root part,
// what the trace's goroutines share: the marks of every part point at it,
// so it lives as long as any of them.
type markBlock struct {
	marks [marksPerBlock]mark
	trace sharedTrace
	next  atomic.Pointer[markBlock] // in freeBlocks
}

// sharedTrace is what the goroutines of one trace share: its id, its span
// indexes, the count that METER_TRACE_MAX caps, and whether its root has
// ended.
type sharedTrace struct {
	id        uint64
	spans     atomic.Int32 // the next span index
	traced    atomic.Int32 // firings metered in the trace, on all its goroutines
	rootDone  atomic.Bool  // the root's part has been handed over, final
	truncated atomic.Bool  // the model counted the trace as truncated
}

// joinState is a goroutine's side of the trace it is in: allocated at its
// first trace, kept for the g's later goroutines.
type joinState struct {
	trace  *sharedTrace
	member bool  // joined another goroutine's trace: not its root part
	parent int32 // index of the span the part's root descends from; -1 for the trace's root
	ownID  uint64
	hooked bool // the root hook saw the trace start (RootHook)

	prev   unsafe.Pointer // the labels pointer under the marks
	cur    *mark          // the mark set last
	blocks []*markBlock
	used   int // marks used in the last block

	inherit *mark // the mark its creator's trace left a goroutine: it joins at its first metered firing
}

// freeBlocks is a lock-free stack of the blocks that no goroutine reaches:
// new ones, and those the collector gave back. A block pushed is new or
// unreachable, so it cannot come back on top while a goroutine that is
// taking it holds it: the stack has no ABA.
var freeBlocks atomic.Pointer[markBlock]

var (
	pooled    atomic.Int32 // blocks in freeBlocks
	poolWant  atomic.Int32 // what a refill tops the pool up to
	poolDry   atomic.Bool  // a trace found the pool empty since the last refill
	refilling atomic.Bool  // a refill runs (refillSoon)
)

// The pool's size: minPool blocks (800 bytes each, 50 KB in all) at first,
// doubled by each refill before which it ran dry. The collector scans the
// blocks in the pool at each cycle, so it starts small.
const minPool, maxPool = 64, 4096

// takeBlock returns a block of marks from the pool, or nil when it is
// empty. It never allocates: where the pool runs low it starts a refill.
func takeBlock() *markBlock {
	for {
		b := freeBlocks.Load()
		if b == nil {
			poolDry.Store(true)
			refillSoon()
			return nil
		}
		if freeBlocks.CompareAndSwap(b, b.next.Load()) {
			b.next.Store(nil)
			if pooled.Add(-1) < poolWant.Load()/4 {
				refillSoon()
			}
			return b
		}
	}
}

// pushBlock puts b, new or unreachable, in the pool.
func pushBlock(b *markBlock) {
	for {
		top := freeBlocks.Load()
		b.next.Store(top)
		if freeBlocks.CompareAndSwap(top, b) {
			break
		}
	}
	pooled.Add(1)
}

// newBlock returns a block whose finalizer puts it back in the pool once
// nothing reaches it.
func newBlock() *markBlock {
	b := new(markBlock)
	runtime.SetFinalizer(b, recycleBlock)
	return b
}

// recycleBlock runs on the finalizers' goroutine.
func recycleBlock(b *markBlock) {
	clear(b.marks[:])
	runtime.SetFinalizer(b, recycleBlock)
	pushBlock(b)
	blocksRecycled.Add(1)
}

// fillPool tops the pool up to poolWant blocks, doubling poolWant first if
// the pool ran dry since the last refill. Configure calls it when a trace
// gate is wired.
func fillPool() {
	want := max(poolWant.Load(), minPool)
	if poolDry.Swap(false) {
		want = min(2*want, maxPool)
	}
	poolWant.Store(want)
	for pooled.Load() < want {
		pushBlock(newBlock())
	}
}

// refillSoon starts a goroutine that fills the pool, unless one runs, so
// that the firing that found the pool low allocates nothing itself. The
// goroutine lives for the few microseconds the allocations take.
func refillSoon() {
	if refilling.CompareAndSwap(false, true) {
		go refill()
	}
}

func refill() {
	fillPool()
	refilling.Store(false)
}

// blocksRecycled counts the blocks the collector gave back.
var blocksRecycled atomic.Int64

// unfollowed counts the parts of traces, and the firings in them, that
// found the pool of marks dry: goroutines started there do not join.
var unfollowed atomic.Int64

// The runtime keeps a goroutine's profiler labels as one pointer, which
// runtime/pprof sets and reads through these two functions; the runtime
// keeps them linkable for packages outside the standard library
// (runtime/proflabel.go).
//
//go:linkname getProfLabel runtime/pprof.runtime_getProfLabel
func getProfLabel() unsafe.Pointer

//go:linkname setProfLabel runtime/pprof.runtime_setProfLabel
func setProfLabel(labels unsafe.Pointer)

// asMark returns the mark that the labels pointer l points at, or nil.
func asMark(l unsafe.Pointer) *mark {
	if l == nil || (*[3]uintptr)(l)[2] != markCap {
		return nil
	}
	return (*mark)(l)
}

func (g *Goroutine) joinState() *joinState {
	if g.join == nil {
		g.join = &joinState{}
	}
	return g.join
}

// openRoot sets up the trace that g starts (startTrace): g's part is its
// root part.
func (g *Goroutine) openRoot() {
	j := g.joinState()
	j.member, j.parent, j.hooked = false, -1, false
	b := takeBlock()
	if b == nil {
		unfollowed.Add(1)
		j.trace = nil // the trace stays on g: traceCount and spanIndex are g's own
		return
	}
	j.blocks, j.used = append(j.blocks[:0], b), 0
	t := &b.trace
	t.id = g.TraceID
	t.spans.Store(0)
	t.traced.Store(0)
	t.rootDone.Store(false)
	t.truncated.Store(false)
	j.trace = t
	g.takeLabels()
}

// takeLabels remembers the labels under the marks of g's part.
func (g *Goroutine) takeLabels() {
	j := g.join
	j.prev, j.cur = getProfLabel(), nil
	if m := asMark(j.prev); m != nil {
		j.prev = m.prev
	}
}

// noteGoroutine runs when g's frames are found to belong to a goroutine
// that has ended (sameGoroutine): the running goroutine is new to the
// engine. If its labels are a mark, it was started inside a trace: it
// gets its labels back, and joins at its first metered firing
// (joinFirst).
func (g *Goroutine) noteGoroutine() {
	if g.join != nil {
		g.join.inherit = nil
	}
	m := asMark(getProfLabel())
	if m == nil {
		return
	}
	setProfLabel(m.prev)
	if m.trace != nil {
		g.joinState().inherit = m
	}
}

// joining reports whether g carries a mark to join at its next metered
// firing.
func (g *Goroutine) joining() bool { return g.join != nil && g.join.inherit != nil }

// joinFirst is the first firing of a metered probe on a goroutine started
// inside a trace: metered, as the root of the goroutine's part of that
// trace, if the trace has room. Otherwise the goroutine does not join, and
// the firing goes through the gates. A part whose root does not end (a
// worker's loop that the request started) is cut at its first hand-over
// after the trace's root has ended (partOutlived).
func joinFirst(p *Probe, g *Goroutine, pos, pc uintptr) *Frame {
	m := g.join.inherit
	g.join.inherit = nil
	if p.internal || m.trace.traced.Load() >= engine.traceMax {
		return outside(p, g, pos, pc)
	}
	g.acquire()
	g.settle(pos, pc)
	j := g.join
	j.trace, j.member, j.parent, j.hooked, j.ownID = m.trace, true, m.span, false, g.TraceID
	g.trace = g.depth + 1
	g.traced, g.full, g.cut, g.nextSpan = 0, false, false, 0
	g.TraceID = m.trace.id
	g.handed = now()
	g.takeLabels()
	if f := g.meter(p, pos, pc, meterAlways, 1, noEntry); f != nil {
		return f
	}
	g.acquire()
	g.leavePart()
	g.trace = 0
	g.release()
	return nil
}

// traceCount returns how many firings g's trace has metered, on all its
// goroutines: what METER_TRACE_MAX caps.
func (g *Goroutine) traceCount() int32 {
	if j := g.join; j != nil && j.trace != nil {
		return j.trace.traced.Load()
	}
	return g.traced
}

// countTraced counts a metered firing in g's trace, for all its
// goroutines.
func (g *Goroutine) countTraced() {
	if j := g.join; j != nil && j.trace != nil {
		j.trace.traced.Add(1)
	}
}

// spanIndex returns the index of the next span of g's trace, unique across
// its goroutines.
func (g *Goroutine) spanIndex() int32 {
	if j := g.join; j != nil && j.trace != nil {
		return j.trace.spans.Add(1) - 1
	}
	i := g.nextSpan
	g.nextSpan++
	return i
}

// partParent returns the parent index of the root span of g's part: -1
// for the trace's root, the creator's span for a joined goroutine.
func (g *Goroutine) partParent() int32 {
	if j := g.join; j != nil && j.member {
		return j.parent
	}
	return -1
}

// markPush gives the running goroutine, inside a trace, the mark of the
// firing f just pushed at index d, unless the program has set labels of
// its own since the last mark.
func (g *Goroutine) markPush(f *Frame) {
	j := g.join
	if j == nil || j.trace == nil {
		return
	}
	m := g.newMark()
	f.label = m
	if m == nil {
		g.setMark(nil) // the pool is dry: goroutines started in f do not join
		return
	}
	m.trace, m.prev, m.span = j.trace, j.prev, -1
	if f.span >= 0 {
		m.span = g.spans[f.span].Index
	}
	m.labels = labelList{}
	if j.prev != nil {
		m.labels = *(*labelList)(j.prev)
	}
	(*[3]uintptr)(unsafe.Pointer(&m.labels.list))[2] = markCap
	g.setMark(m)
}

// markPop lets go of the mark of fr, the frame at index d, whose firing
// ended or was dropped, and gives the running goroutine the mark of the
// frame below while that frame is inside g's part. Frames dropped because
// g went to another goroutine leave that goroutine's labels alone.
func (g *Goroutine) markPop(fr *Frame, d int32) {
	fr.label = nil
	if g.trace == 0 || d <= g.trace-1 || g.join == nil || g.join.trace == nil || identity() != g.goid {
		return
	}
	g.setMark(g.frames[d-1].label)
}

// partOutlived reports whether g's part of a trace is a joined
// goroutine's whose trace's root has ended: at a hand-over, such a part
// ends, truncated, with the spans still open cut off, and the goroutine
// goes on untraced.
func (g *Goroutine) partOutlived() bool {
	j := g.join
	return j != nil && j.member && j.trace != nil && j.trace.rootDone.Load()
}

// sharedTrace returns what g's trace shares with its other goroutines, or
// nil.
func (g *Goroutine) sharedTrace() *sharedTrace {
	if g.join == nil {
		return nil
	}
	return g.join.trace
}

// setMark points the running goroutine's labels at m, or, for nil (a
// firing that got no mark), at the labels under the marks, if they point
// at the part's last mark or at the labels under the marks (a pprof.Do
// that returned gave those back); labels the program set itself stay.
func (g *Goroutine) setMark(m *mark) {
	j := g.join
	if cur := getProfLabel(); cur == unsafe.Pointer(j.cur) && j.cur != nil || cur == j.prev {
		if m == nil {
			setProfLabel(j.prev)
		} else {
			setProfLabel(unsafe.Pointer(m))
		}
		j.cur = m
	}
}

// newMark returns the next mark of g's part, or nil when its blocks are
// used up and the pool is dry (counted as unfollowed).
func (g *Goroutine) newMark() *mark {
	j := g.join
	if len(j.blocks) == 0 || j.used == marksPerBlock {
		b := takeBlock()
		if b == nil {
			unfollowed.Add(1)
			return nil
		}
		j.blocks = append(j.blocks, b)
		j.used = 0
	}
	m := &j.blocks[len(j.blocks)-1].marks[j.used]
	j.used++
	return m
}

// leavePart ends g's part of its trace: the running goroutine gets back
// the labels under the marks (when the labels are still a mark; a
// goroutine whose g has gone to another has none), the marks are let go,
// and a joined goroutine takes back its own trace ids.
func (g *Goroutine) leavePart() {
	j := g.join
	if j == nil || j.trace == nil {
		return
	}
	if j.cur != nil && identity() == g.goid && getProfLabel() == unsafe.Pointer(j.cur) {
		setProfLabel(j.prev)
	}
	if j.member {
		g.TraceID = j.ownID
	}
	for i := max(g.trace-1, 0); i < int32(len(g.frames)); i++ {
		g.frames[i].label = nil
		if i < g.depth {
			g.frames[i].span = -1 // open, in a part cut off (partOutlived)
		}
	}
	clear(j.blocks)
	j.blocks, j.used = j.blocks[:0], 0
	j.trace, j.prev, j.cur, j.member, j.hooked = nil, nil, nil, false, false
}

// partEnd returns, for the last part of g's trace that g hands over, final
// and truncated as the sink should see them, and whether the model counts
// the trace as ended; it counts the trace as truncated once. The root's
// part ends the trace. A joined goroutine's part that ends before it is
// not final; one that ends after it is final (the trace's root has gone
// out) and truncated, as a part exported before the trace ended is.
func (g *Goroutine) partEnd(truncated bool) (final, trunc, ended bool) {
	j := g.join
	if j == nil || j.trace == nil {
		return true, truncated, true
	}
	final, ended = true, true
	if j.member {
		ended = false
		final = j.trace.rootDone.Load()
		truncated = truncated || final
	}
	if truncated && !j.trace.truncated.Swap(true) {
		tracesTruncated.Add(1)
	}
	return final, truncated, ended
}

// RootHook sees the traces that start at a firing of a function with a
// context.Context or *http.Request parameter: the otlp module registers
// one, which makes such a trace a child of the caller's span and puts the
// request on its root span. Its calls run on the traced goroutine and must
// not block.
type RootHook interface {
	// Started runs as the trace starts, with the function's context (nil
	// when it has none), and for an HTTP handler its
	// http.ResponseWriter and *http.Request (as any, so that this package
	// links no net/http).
	Started(trace uint64, ctx context.Context, w, r any)
	// Ended runs as the trace's root firing ends, before its spans are
	// handed over.
	Ended(trace uint64)
}

type rootHookBox struct{ h RootHook }

var rootHook atomic.Pointer[rootHookBox]

// SetRootHook registers h (the otlp module does, at init); nil removes it.
func SetRootHook(h RootHook) {
	if h == nil {
		rootHook.Store(nil)
		return
	}
	rootHook.Store(&rootHookBox{h})
}

// Starts reports whether the metered firing f started its trace: then
// generated code hands its function's context or request to Within.
func (f Firing) Starts() bool { return f.frame().how == meterStart }

// Within hands the context ctx, or the handler's w and r, of the function
// whose firing f started a trace to the registered RootHook. Generated
// code calls it only for such a firing (Starts), right after Begin.
func Within(firing Firing, ctx context.Context, w, r any) {
	b := rootHook.Load()
	f := firing.frame()
	if b == nil || f == nil || f.how != meterStart {
		return
	}
	g := f.g
	if j := g.join; j != nil && g.trace != 0 && !j.member && f.index == g.trace-1 {
		j.hooked = true
		b.h.Started(g.TraceID, ctx, w, r)
	}
}

// rootEnded tells the root hook that the root firing of g's trace ended.
func (g *Goroutine) rootEnded() {
	if j := g.join; j != nil && j.hooked {
		j.hooked = false
		if b := rootHook.Load(); b != nil {
			b.h.Ended(g.TraceID)
		}
	}
}
