package export

import (
	"context"
	"runtime/pprof"
	"strconv"
	"sync"
	"unsafe"

	"github.com/meterio/meter/meter"
)

// Labels a traced goroutine carries, for Go's own CPU profile:
// `go tool pprof -tagfocus meter.root=main.handle cpu.out`.
const (
	LabelTraceID = "meter.trace_id" // the meter trace id, decimal (the OTLP trace id ends with it, in hex)
	LabelRoot    = "meter.root"     // the probe that started the trace
)

// The runtime keeps a goroutine's labels as one pointer. runtime/pprof can
// set it from a context but has no call that reads it, so the previous
// labels could not be put back. These are the two runtime functions
// runtime/pprof itself uses; the runtime keeps them available to linkname
// on purpose (see runtime/proflabel.go).
//
//go:linkname getProfLabel runtime/pprof.runtime_getProfLabel
func getProfLabel() unsafe.Pointer

//go:linkname setProfLabel runtime/pprof.runtime_setProfLabel
func setProfLabel(labels unsafe.Pointer)

// labeler sets pprof labels when a goroutine enters a trace and puts its
// previous labels back when the trace ends. Never per firing.
type labeler struct {
	on    bool
	saved sync.Map // *meter.Goroutine → *savedLabels
}

type savedLabels struct {
	prev unsafe.Pointer // the goroutine's labels before the trace
	set  bool           // labels were set for the current trace
}

// started costs a sync.Map look-up and the allocations of one labelled
// context (a few small objects), once per trace.
func (l *labeler) started(g *meter.Goroutine, root *meter.Probe) {
	if !l.on {
		return
	}
	s := l.state(g)
	s.prev = getProfLabel()
	ctx := pprof.WithLabels(context.Background(), pprof.Labels(LabelTraceID, strconv.FormatUint(g.TraceID, 10), LabelRoot, root.Name()))
	pprof.SetGoroutineLabels(ctx)
	s.set = true
}

// ended puts the previous labels back: a look-up and a pointer store, no
// allocation.
func (l *labeler) ended(g *meter.Goroutine) {
	if !l.on {
		return
	}
	v, ok := l.saved.Load(g)
	if !ok {
		return
	}
	s := v.(*savedLabels)
	if s.set {
		setProfLabel(s.prev)
		s.prev, s.set = nil, false
	}
}

func (l *labeler) state(g *meter.Goroutine) *savedLabels {
	if v, ok := l.saved.Load(g); ok {
		return v.(*savedLabels)
	}
	v, _ := l.saved.LoadOrStore(g, &savedLabels{})
	return v.(*savedLabels)
}

// LabelSink is a meter.Sink that only sets the pprof labels of traced
// goroutines: for a program that traces but exports no traces.
type LabelSink struct{ l labeler }

// NewLabelSink returns a sink that labels traced goroutines.
func NewLabelSink() *LabelSink { return &LabelSink{labeler{on: true}} }

// TraceStarted sets the goroutine's labels.
func (s *LabelSink) TraceStarted(g *meter.Goroutine, root *meter.Probe) { s.l.started(g, root) }

// TraceEnded puts back the labels the goroutine had before the trace.
func (s *LabelSink) TraceSpans(uint64, []meter.Span, bool, bool) {}
