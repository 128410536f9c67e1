// Package pproflabels gives goroutines inside meter traces pprof labels, so
// that Go's own CPU profile can be cut down to traced work:
//
//	go tool pprof -tagfocus meter.root=example.com/app.handle cpu.pprof
//
// It is opt-in twice over: a program links it with one blank import in its
// main package,
//
//	import _ "github.com/meterio/meter/export/pproflabels"
//
// and switches it on with METER_PPROF_LABELS=true. A program without the
// import never links runtime/pprof on meter's account, and a traced
// firing then allocates nothing.
//
// While a goroutine is inside a trace it carries the labels meter.trace_id
// (the meter trace id, decimal; the OTLP trace id ends with it in hex) and
// meter.root (the probe whose firing started the trace). They are set when
// the goroutine enters a trace and taken off when it leaves, never per
// firing; it then gets back the labels it had before, so a user's pprof.Do
// keeps working. Goroutines started inside a trace inherit the labels, as
// with pprof.Do. runtime/pprof has no call that reads a goroutine's labels,
// so this package reaches the two runtime functions runtime/pprof itself
// uses, through go:linkname; the runtime keeps them linkable on purpose
// (see runtime/proflabel.go).
//
// Cost per trace (BenchmarkLabels; docs/export.md): entering builds the
// labelled context (pprof.Labels, pprof.WithLabels, the trace id formatted
// as text), a few small allocations; leaving is a map look-up under a
// mutex. Labels are opt-in for that reason: no other traced firing
// allocates.
package pproflabels

import (
	"context"
	"runtime/pprof"
	"strconv"
	"sync"
	"unsafe"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
)

// Labels a traced goroutine carries.
const (
	LabelTraceID = "meter.trace_id" // the meter trace id, decimal
	LabelRoot    = "meter.root"     // the probe that started the trace
)

// The runtime keeps a goroutine's labels as one pointer; runtime/pprof can
// set it from a context but has no call that reads it.
//
//go:linkname getProfLabel runtime/pprof.runtime_getProfLabel
func getProfLabel() unsafe.Pointer

//go:linkname setProfLabel runtime/pprof.runtime_setProfLabel
func setProfLabel(labels unsafe.Pointer)

func init() { export.RegisterLabels(New()) }

// maxSaved bounds the labels remembered for traces that ended while their
// goroutine was elsewhere: past it they are forgotten, and such a
// goroutine keeps its trace's labels until its next trace.
const maxSaved = 1 << 16

// Labeler is the export.Labeler this package registers.
type Labeler struct {
	mu    sync.Mutex
	saved map[unsafe.Pointer]saved // labels set for a trace → what the goroutine had before
}

type saved struct {
	prev  unsafe.Pointer
	trace uint64
}

var _ export.Labeler = (*Labeler)(nil)

// New returns a Labeler; the package's init registers one.
func New() *Labeler { return &Labeler{saved: map[unsafe.Pointer]saved{}} }

// Started labels the calling goroutine, which is g entering a trace.
func (l *Labeler) Started(g *meter.Goroutine, root *meter.Probe) {
	prev := getProfLabel()
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(),
		pprof.Labels(LabelTraceID, strconv.FormatUint(g.TraceID, 10), LabelRoot, root.Name())))
	ours := getProfLabel()
	l.mu.Lock()
	if s, ok := l.saved[prev]; ok {
		// The goroutine still carries an earlier trace's labels: that
		// trace ended while it was elsewhere. Its labels before that
		// trace are the ones to give back.
		delete(l.saved, prev)
		prev = s.prev
	}
	if len(l.saved) >= maxSaved {
		clear(l.saved)
	}
	l.saved[ours] = saved{prev, g.TraceID}
	l.mu.Unlock()
}

// Ended gives the calling goroutine back the labels it had before trace,
// if it is the goroutine that carries that trace's labels.
func (l *Labeler) Ended(trace uint64) {
	cur := getProfLabel()
	l.mu.Lock()
	s, ok := l.saved[cur]
	ok = ok && s.trace == trace
	if ok {
		delete(l.saved, cur)
	}
	l.mu.Unlock()
	if ok {
		setProfLabel(s.prev)
	}
}
