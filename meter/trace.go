package meter

// startTrace makes the firing of p about to be pushed on g the root of a
// new trace.
func (g *Goroutine) startTrace(p *Probe) {
	g.trace = g.depth + 1
	g.traced, g.full, g.cut, g.nextSpan = 0, false, false, 0
	g.nextTraceID()
	g.handed = now()
	if engine.sink != nil {
		engine.sink.TraceStarted(g, p)
	}
	g.openRoot() // goroutines it starts join it (join.go)
}

// idBlock is how many trace ids a goroutine takes from traceIDs at a
// time, so that goroutines starting traces at once on different cores do
// not meet on its line at each start. Ids stay unique; their order says
// nothing about when traces started.
const idBlock = 64

// nextTraceID gives g's next trace the next id of its block, taking a new
// block when it has none left.
func (g *Goroutine) nextTraceID() {
	if g.ids == 0 {
		g.TraceID = traceIDs.Add(idBlock) - idBlock
		g.ids = idBlock
	}
	g.TraceID++
	g.ids--
}

// stripedCount is a count that goroutines on different Ps add to on
// different cache lines, by their stripe (Goroutine.stripe); its value is
// the sum.
type stripedCount [stripeCount]leaseLine

func (c *stripedCount) add(stripe uint64, n int64) { c[stripe&(stripeCount-1)].units.Add(n) }

func (c *stripedCount) load() int64 {
	s := int64(0)
	for i := range c {
		s += c[i].units.Load()
	}
	return s
}

// addSpan gives frame f, at index d on g's stack, a span in the current
// trace, whose parent is the span of the frame below, unless f is the root.
// A joined goroutine's first span's parent is its creator's (join.go).
func (g *Goroutine) addSpan(f *Frame, d int32, p *Probe) {
	parent := g.partParent()
	if d > g.trace-1 {
		parent = g.spans[g.frames[d-1].span].Index
	}
	f.span = int32(len(g.spans))
	g.spans = append(g.spans, Span{Probe: p, Index: g.spanIndex(), Parent: parent})
}

// endTrace ends g's trace: its root ended, or was dropped. What is left of
// its spans goes to the sink, marked truncated if the trace reached the
// maximum, was handed over in parts or lost its root. On a goroutine that
// joined another's trace it ends the goroutine's part (join.go).
func (g *Goroutine) endTrace() {
	id, shared := g.TraceID, g.sharedTrace()
	truncated := g.full || g.cut
	final, ended := true, true
	if shared != nil {
		final, truncated, ended = g.partEnd(truncated)
		if ended {
			g.rootEnded()
		}
		g.leavePart()
	} else {
		if truncated {
			tracesTruncated.Add(1)
		}
		g.rootEnded() // a trace that found the pool of marks dry (join.go)
	}
	if engine.sink != nil {
		engine.sink.TraceSpans(id, g.spans, final, truncated)
		clear(g.spans)
		g.spans = g.spans[:0]
	}
	if ended {
		if shared != nil {
			shared.rootDone.Store(true)
		}
		tracesEnded.add(g.stripe, 1)
	}
	g.trace, g.traced, g.full, g.cut, g.nextSpan = 0, 0, false, false, 0
	g.flowLeft = 0 // flowcheck draws the next gap at the goroutine's next firing
}

// handOver hands the spans of g's trace that are not open any more (ended,
// or cut off by a panic) to the sink, while the trace goes on: a trace
// whose root runs for hours (a connection loop) is exported as it goes,
// marked truncated. The spans still open, those of the frames from the
// root up, stay, with their indexes.
func (g *Goroutine) handOver(t int64) {
	g.handed = t
	if g.partOutlived() { // a joined goroutine's part outlived its trace's root (join.go)
		g.cut = true
		g.endTrace()
		return
	}
	if engine.sink == nil {
		return
	}
	g.open = g.open[:0]
	n, d := 0, g.trace-1
	for i := range g.spans {
		if d < g.depth && g.frames[d].span == int32(i) {
			g.open = append(g.open, g.spans[i])
			d++
			continue
		}
		g.spans[n] = g.spans[i]
		n++
	}
	if n == 0 {
		return
	}
	g.cut = true
	engine.sink.TraceSpans(g.TraceID, g.spans[:n], false, true)
	clear(g.spans)
	g.spans = append(g.spans[:0], g.open...)
	for d, k := g.trace-1, int32(0); d < g.depth; d, k = d+1, k+1 {
		g.frames[d].span = k
	}
}

// AddDropped counts spans that the export path had to drop; the model
// reports the total.
func AddDropped(n int64) { dropped.Add(n) }
