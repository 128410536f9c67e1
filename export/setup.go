package export

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/meter"
	"github.com/meterio/meter/schema"
)

// Settings say which exports to start: the probe package fills them from
// the METER_* properties.
type Settings struct {
	CSV      string        // METER_EXPORT_CSV: the model as CSV, and its .meta beside it
	Pprof    string        // METER_EXPORT_PPROF: call paths and the model as a pprof profile
	OTLP     bool          // METER_EXPORT_OTLP: traces and the model over OTLP (the otlp module)
	Labels   bool          // METER_PPROF_LABELS: pprof labels on traced goroutines (the pproflabels package)
	Interval time.Duration // METER_EXPORT_INTERVAL: 0 means at exit only
	TraceMax int           // METER_TRACE_MAX: the queue holds at least one trace this long
	Traces   bool          // a trace gate is on: the engine will hand over spans
	Paths    bool          // collect call paths even with no pprof file (the live page draws them)
	Stderr   io.Writer     // where problems are reported, one line each (default os.Stderr)
	Model    func() meter.Snapshot
}

// Exports are the exports one process runs, started by Start.
type Exports struct {
	set      Settings
	paths    *CallPaths
	pipeline *Pipeline
	sink     meter.Sink
	csvOK    bool // the CSV and .meta paths passed checkPath
	pprofOK  bool

	mu        sync.Mutex
	remote    Remote // the registered OTLP export, once started
	running   bool   // Run was called: the engine is wired
	otlpTried bool
	checked   bool
	closed    bool
	checkLate *time.Timer // runs Check for a program whose main does not
}

// Remote is an export to a collector that an opt-in package registers,
// such as the otlp module.
type Remote interface {
	// SpanExporter returns where traces go; nil when traces are switched
	// off (OTEL_TRACES_EXPORTER=none).
	SpanExporter() SpanExporter
	// Shutdown sends the model one last time and closes the connections.
	// It is called after the traces are drained and the files written.
	Shutdown(ctx context.Context) error
}

// RemoteSettings is what a Remote is started with.
type RemoteSettings struct {
	Interval time.Duration         // push the model every Interval; 0: only at Shutdown
	Traces   bool                  // the process will hand spans to SpanExporter
	Stderr   io.Writer             // for problems, one line each
	Model    func() meter.Snapshot // reads the model
}

// Labeler sets pprof labels on goroutines inside traces: the pproflabels
// package registers one.
type Labeler interface {
	// Started runs on g as it enters a trace whose first firing is of root.
	Started(g *meter.Goroutine, root *meter.Probe)
	// Ended runs when the final part of the trace is handed over: on the
	// traced goroutine as it leaves the trace, or on another goroutine for
	// one that has blocked.
	Ended(trace uint64)
}

var registry struct {
	mu     sync.Mutex
	otlp   func(RemoteSettings) (Remote, error)
	active *Exports
}

type labelerBox struct{ l Labeler }

var labeler atomic.Pointer[labelerBox]

// RegisterOTLP is called by the otlp module's init. A program asks for
// OTLP with a blank import of github.com/meterio/meter/otlp; package
// initialisation order does not tell whether that init runs before or
// after the first probe registration, so exports that are running already
// get the exporter now, with the traces they queued in between.
func RegisterOTLP(start func(RemoteSettings) (Remote, error)) {
	registry.mu.Lock()
	registry.otlp = start
	e := registry.active
	registry.mu.Unlock()
	if e != nil {
		e.startOTLP(start)
	}
}

// RegisterLabels is called by the pproflabels package's init; from then
// on, with METER_PPROF_LABELS=true, traced goroutines carry labels.
func RegisterLabels(l Labeler) { labeler.Store(&labelerBox{l}) }

// Start checks the export paths (one line on Stderr for each that cannot
// be written: the export is then off), and starts the trace pipeline if the
// settings ask for one. Its Sink is what the engine hands traces to; wire
// the engine with it, then call Run.
//
// The trace pipeline runs when there are traces to export: a trace gate
// is on and METER_EXPORT_PPROF or METER_EXPORT_OTLP is set. Its queue
// holds at least one trace of TraceMax spans.
func Start(s Settings) *Exports {
	if s.Stderr == nil {
		s.Stderr = os.Stderr
	}
	if s.Model == nil {
		s.Model = meter.Take
	}
	e := &Exports{set: s}
	if s.CSV != "" {
		e.csvOK = e.checkFile("METER_EXPORT_CSV", s.CSV, "the model is not written") &&
			e.checkFile("METER_EXPORT_CSV", s.CSV+schema.MetaSuffix, "the model is not written") &&
			e.checkFile("METER_EXPORT_CSV", s.CSV+schema.StatsSuffix, "the model is not written")
	}
	if s.Pprof != "" {
		e.pprofOK = e.checkFile("METER_EXPORT_PPROF", s.Pprof, "the profile is not written")
	}
	if s.Traces && (e.pprofOK || s.OTLP || s.Paths) {
		c := config{queueSize: queueFor(s.TraceMax), stderr: s.Stderr, dropReport: s.Interval, hold: s.OTLP}
		if e.pprofOK || s.Paths {
			e.paths = newCallPaths()
			c.paths = e.paths
		}
		e.pipeline = newPipeline(c)
		e.sink = e.pipeline
	}
	if s.Traces && s.Labels {
		e.sink = labelSink{e.sink}
	}
	return e
}

// Run starts what reads the model on goroutines of its own (the OTLP
// metrics), now if the otlp module is registered or when it registers.
// Call it once the engine is wired with Sink, so that those goroutines
// start after the engine's configuration.
func (e *Exports) Run() {
	e.mu.Lock()
	e.running = true
	e.mu.Unlock()
	registry.mu.Lock()
	registry.active = e
	start := registry.otlp
	registry.mu.Unlock()
	if e.set.OTLP && start != nil {
		e.startOTLP(start)
	}
	if e.set.OTLP && start == nil || e.set.Traces && e.set.Labels && labeler.Load() == nil {
		// Generated code calls Check at the start of main; a program
		// wired by hand may not, and a pipeline holding spans for an
		// exporter that never comes would fill and drop.
		e.mu.Lock()
		e.checkLate = time.AfterFunc(defaultScheduleDelay, e.Check)
		e.mu.Unlock()
	}
}

// queueFor sizes the queue for a trace maximum: at least the default and
// one whole trace, and then whatever the ring's power of two leaves over.
func queueFor(traceMax int) int {
	size := max(defaultQueueSize, traceMax)
	const inFlight = defaultMaxExportBatches * defaultBatchSize
	return ringSize(size, inFlight) - inFlight
}

func (e *Exports) checkFile(property, path, consequence string) bool {
	if err := checkPath(path); err != nil {
		fmt.Fprintf(e.set.Stderr, "meter: %s: %v; %s\n", property, err, consequence)
		return false
	}
	return true
}

func (e *Exports) startOTLP(start func(RemoteSettings) (Remote, error)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.set.OTLP || !e.running || e.otlpTried || e.closed {
		return
	}
	e.otlpTried = true
	r, err := start(RemoteSettings{Interval: e.set.Interval, Traces: e.pipeline != nil, Stderr: e.set.Stderr, Model: e.set.Model})
	if err != nil {
		fmt.Fprintf(e.set.Stderr, "meter: METER_EXPORT_OTLP: %v; nothing is sent over OTLP\n", err)
	}
	e.remote = r
	if e.pipeline != nil {
		var se SpanExporter
		if r != nil {
			se = r.SpanExporter()
		}
		e.pipeline.attach(se)
	}
}

// Files returns the paths the model and the profile are written to: ""
// for one not asked for, or whose path could not be written when the
// exports started (Start reported it then).
func (e *Exports) Files() (csv, pprof string) {
	if e.csvOK {
		csv = e.set.CSV
	}
	if e.pprofOK {
		pprof = e.set.Pprof
	}
	return csv, pprof
}

// AtExit reports whether anything is written or sent when the program
// ends: a model or a profile whose path could be written, or OTLP.
func (e *Exports) AtExit() bool { return e.csvOK || e.pprofOK || e.set.OTLP }

// Sink returns what the engine hands traces to; nil when nothing wants
// them.
func (e *Exports) Sink() meter.Sink { return e.sink }

// CallPaths returns the call paths collected so far, or nil when none are
// (no trace gate, or neither a profile nor Paths asked for).
func (e *Exports) CallPaths() *CallPaths { return e.paths }

// Pipeline returns the trace pipeline, or nil when none runs.
func (e *Exports) Pipeline() *Pipeline { return e.pipeline }

// Check reports, once, each export the properties ask for whose package
// the program does not link: one line each on Stderr, saying how to add
// it. Call it once every package's init has run (generated code calls it
// at the start of main); Close calls it too, for a program that did not.
func (e *Exports) Check() {
	e.mu.Lock()
	if e.checked {
		e.mu.Unlock()
		return
	}
	e.checked = true
	otlpMissing := e.set.OTLP && !e.otlpTried
	e.mu.Unlock()
	if otlpMissing {
		fmt.Fprintln(e.set.Stderr, `meter: METER_EXPORT_OTLP=true, but this program is built without OTLP: add import _ "github.com/meterio/meter/otlp" to its main package (or run meterinject with -otlp)`)
		if e.pipeline != nil {
			e.pipeline.attach(nil) // stop holding spans for an exporter that will not come
		}
	}
	if e.set.Labels && e.set.Traces && labeler.Load() == nil {
		fmt.Fprintln(e.set.Stderr, `meter: METER_PPROF_LABELS=true, but this program is built without pprof labels: add import _ "github.com/meterio/meter/export/pproflabels" to its main package`)
	}
}

// WriteFiles writes the model as CSV (and its .meta and .stats) and the profile, as
// the settings ask; each failure is one line on Stderr.
func (e *Exports) WriteFiles() {
	var paths *CallPaths
	if e.pprofOK && e.paths != nil {
		paths = e.paths.Frozen() // before the model: see CallPaths.Frozen
	}
	if !e.csvOK && !e.pprofOK {
		return
	}
	s := e.set.Model()
	if e.csvOK {
		if err := writeCSVFile(e.set.CSV, s); err != nil {
			fmt.Fprintf(e.set.Stderr, "meter: METER_EXPORT_CSV: %v\n", err)
		} else if err := writeMetaFile(e.set.CSV+schema.MetaSuffix, s); err != nil {
			fmt.Fprintf(e.set.Stderr, "meter: METER_EXPORT_CSV: %v\n", err)
		} else if err := writeStatsFile(e.set.CSV+schema.StatsSuffix, s); err != nil {
			fmt.Fprintf(e.set.Stderr, "meter: METER_EXPORT_CSV: %v\n", err)
		}
	}
	if e.pprofOK {
		if err := writePprofFile(e.set.Pprof, s, paths); err != nil {
			fmt.Fprintf(e.set.Stderr, "meter: METER_EXPORT_PPROF: %v\n", err)
		}
	}
}

// StopTraces exports what the trace pipeline holds and stops it, within
// ctx; spans that end later are dropped and counted.
func (e *Exports) StopTraces(ctx context.Context) {
	if e.pipeline == nil {
		return
	}
	if err := e.pipeline.Shutdown(ctx); err != nil {
		fmt.Fprintf(e.set.Stderr, "meter: exporting traces at exit: %v\n", err)
	}
}

// Close sends the model over OTLP one last time and closes the
// connections, within ctx. Call it after StopTraces and the last
// WriteFiles, so that the model it sends counts every dropped span.
func (e *Exports) Close(ctx context.Context) {
	e.mu.Lock()
	if e.checkLate != nil {
		e.checkLate.Stop()
	}
	e.mu.Unlock()
	e.Check()
	e.mu.Lock()
	e.closed = true
	r := e.remote
	e.mu.Unlock()
	if r != nil {
		if err := r.Shutdown(ctx); err != nil {
			fmt.Fprintf(e.set.Stderr, "meter: sending the model over OTLP at exit: %v\n", err)
		}
	}
	registry.mu.Lock()
	if registry.active == e {
		registry.active = nil
	}
	registry.mu.Unlock()
}

// labelSink gives traced goroutines pprof labels, through the registered
// Labeler, and hands the spans on to next (which may be nil).
type labelSink struct{ next meter.Sink }

func (s labelSink) TraceStarted(g *meter.Goroutine, root *meter.Probe) {
	if b := labeler.Load(); b != nil {
		b.l.Started(g, root)
	}
	if s.next != nil {
		s.next.TraceStarted(g, root)
	}
}

func (s labelSink) TraceSpans(trace uint64, spans []meter.Span, final, truncated bool) {
	if s.next != nil {
		s.next.TraceSpans(trace, spans, final, truncated)
	}
	if final {
		if b := labeler.Load(); b != nil {
			b.l.Ended(trace)
		}
	}
}
