package probe

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/internal/env"
	"github.com/meterio/meter/meter"
)

// shutdownTimeout bounds how long Shutdown waits for queued spans and the
// last OTLP push to go out.
const shutdownTimeout = 5 * time.Second

// exports are the exports setup started (see export.Start).
var exports *export.Exports

// startExports starts the exports c asks for and returns the sink to wire
// into ch (nil: none).
func startExports(c env.Config, ch meter.Chain) meter.Sink {
	exports = export.Start(export.Settings{
		CSV:      c.ExportCSV,
		Pprof:    c.ExportPprof,
		OTLP:     c.ExportOTLP,
		Labels:   c.PprofLabels,
		Interval: c.ExportInterval,
		TraceMax: int(c.TraceMax),
		Traces:   ch.Tracepoint != nil || ch.Flowcheck != nil,
		Paths:    c.HTTP != "",
		Stderr:   stderr,
		Model:    model,
	})
	return exports.Sink()
}

// final is set when Shutdown writes the last model of the run.
var final atomic.Bool

// model is the snapshot the exports write: final once Shutdown runs.
func model() meter.Snapshot {
	s := meter.Take()
	s.Final = final.Load()
	return s
}

// runExports starts what the exports run on goroutines of their own, once
// the engine is wired with the sink startExports returned.
func runExports() { exports.Run() }

// checkExports reports, once, each export the properties ask for whose
// package the program does not link (METER_EXPORT_OTLP without the otlp
// import, say). Call it once every package's init has run: at the start
// of main.
func checkExports() {
	if exports != nil {
		exports.Check()
	}
}

// flushExports writes the export files. Called under flushMu.
func flushExports() {
	if exports != nil {
		exports.WriteFiles()
	}
}

// stopExports drains the trace queue, then, after the last model files
// are written (flush), pushes the model over OTLP one last time. Once.
func stopExports(flush func()) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if exports != nil {
		exports.StopTraces(ctx)
	}
	flush()
	if exports != nil {
		exports.Close(ctx)
	}
}
