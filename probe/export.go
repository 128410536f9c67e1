package probe

import (
	"context"
	"fmt"
	"time"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/internal/env"
	"github.com/meterio/meter/meter"
)

// shutdownTimeout bounds how long Shutdown waits for queued spans and the
// last metrics push to go out.
const shutdownTimeout = 5 * time.Second

// exports are the export paths beyond CSV that setup started.
var exports struct {
	pipeline *export.Pipeline  // traces: OTLP and call paths
	paths    *export.CallPaths // for METER_EXPORT_PPROF
	metrics  *export.Metrics   // the model over OTLP
}

// startExports starts the trace pipeline and the OTLP metrics that c asks
// for, and returns the sink to wire into ch (nil: none). A program that
// traces without exporting traces still gets the pprof labels.
func startExports(c env.Config, ch meter.Chain) meter.Sink {
	ctx := context.Background()
	var opts []export.Option
	if c.ExportPprof != "" {
		exports.paths = export.NewCallPaths()
		opts = append(opts, export.WithCallPaths(exports.paths))
	}
	if c.ExportOTLP {
		if e, err := export.NewOTLPTraceExporter(ctx); err != nil {
			fmt.Fprintf(stderr, "meter: %v; traces are not exported\n", err)
		} else {
			opts = append(opts, export.WithSpanExporter(e))
		}
		if m, err := export.NewOTLPMetrics(ctx, c.ExportInterval, meter.Take); err != nil {
			fmt.Fprintf(stderr, "meter: %v; the model is not exported over OTLP\n", err)
		} else {
			exports.metrics = m
		}
	}
	if len(opts) == 0 {
		if ch.Tracepoint != nil || ch.Flowcheck != nil {
			return export.NewLabelSink()
		}
		return nil
	}
	if c.ExportInterval > 0 {
		opts = append(opts, export.WithDropReport(c.ExportInterval))
	}
	opts = append(opts, export.WithStderr(stderr))
	exports.pipeline = export.NewPipeline(opts...)
	return exports.pipeline
}

// flushExports writes the pprof profile. Called under flushMu.
func flushExports() {
	if config.ExportPprof == "" {
		return
	}
	var paths *export.CallPaths
	if exports.paths != nil {
		paths = exports.paths.Frozen() // before the model: see CallPaths.Frozen
	}
	if err := export.WritePprofFile(config.ExportPprof, meter.Take(), paths); err != nil {
		fmt.Fprintf(stderr, "meter: %v\n", err)
	}
}

// stopExports drains the trace queue, then, after the last model files
// are written (flush), pushes the model over OTLP one last time. Once.
func stopExports(flush func()) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if exports.pipeline != nil {
		if err := exports.pipeline.Shutdown(ctx); err != nil {
			fmt.Fprintf(stderr, "meter: exporting traces at exit: %v\n", err)
		}
	}
	flush()
	if exports.metrics != nil {
		if err := exports.metrics.Shutdown(ctx); err != nil {
			fmt.Fprintf(stderr, "meter: exporting the model over OTLP at exit: %v\n", err)
		}
	}
}
