package probe

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/extensions/budget"
	"github.com/meterio/meter/extensions/flowcheck"
	"github.com/meterio/meter/extensions/hotspot"
	"github.com/meterio/meter/extensions/spotcheck"
	"github.com/meterio/meter/extensions/tracepoint"
	"github.com/meterio/meter/internal/env"
	"github.com/meterio/meter/meter"
)

var (
	config  env.Config
	stderr  io.Writer = os.Stderr
	stopped           = make(chan struct{})
	ticker  sync.WaitGroup
	flushMu sync.Mutex
	shut    sync.Once
)

// setup reads the properties and wires the chain, once, at the first
// registration.
func setup() {
	config = env.Load(os.LookupEnv, stderr)
	if err := clock.Setup(config.Clock); err != nil {
		fmt.Fprintf(stderr, "meter: METER_CLOCK=%s: %v; using the monotonic clock\n", config.Clock, err)
		clock.Setup("mono")
	}
	ch := chain(config)
	ch.Sink = startExports(config, ch) // export.go
	meter.Configure(ch)
	runExports()
	if config.ExportInterval > 0 && (config.ExportCSV != "" || config.ExportPprof != "") {
		ticker.Add(1)
		go periodic(config.ExportInterval)
	}
}

// chain builds the extensions the configuration asks for, in chain order:
// hotspot, the trace gates (tracepoint, flowcheck), budget; spotcheck sits
// beside them, on disabled probes' firings.
func chain(c env.Config) meter.Chain {
	ch := meter.Chain{Enabled: c.Enabled, TraceMax: int32(c.TraceMax)}
	var spot *spotcheck.Spotcheck
	if c.SpotcheckEnabled {
		// First among the judges: it must see a spot check's probe still
		// disabled, before hotspot and budget judge the same firing.
		spot = spotcheck.New(c.SpotcheckInterval, c.HotspotThreshold, c.HotspotThresholdInherent)
		ch.Spotter, ch.KeepGates = spot, true
		ch.Judges = append(ch.Judges, spot)
	}
	if c.HotspotEnabled {
		h := hotspot.New(c.HotspotThreshold, c.HotspotThresholdInherent, c.HotspotInitial)
		ch.Judges = append(ch.Judges, h)
		ch.Labelers = append(ch.Labelers, h)
		ch.Extensions = append(ch.Extensions, h)
	}
	if c.TracepointEnabled {
		t := tracepoint.New(c.TracepointSample, c.TracepointInclude)
		ch.Gates = append(ch.Gates, t)
		ch.Extensions = append(ch.Extensions, t)
	}
	if c.FlowcheckEnabled {
		f := flowcheck.New(c.FlowcheckLower, c.FlowcheckUpper)
		ch.Gates = append(ch.Gates, f)
		ch.Extensions = append(ch.Extensions, f)
	}
	if c.BudgetEnabled {
		b := budget.New(c.BudgetPercent, c.BudgetUnit)
		ch.Allowance = b
		ch.Judges = append(ch.Judges, b)
		ch.Extensions = append(ch.Extensions, b)
	}
	if spot != nil {
		ch.Extensions = append(ch.Extensions, spot)
	}
	return ch
}

func periodic(every time.Duration) {
	defer ticker.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			flush()
		case <-stopped:
			return
		}
	}
}

// flush writes every configured export of the model. Errors are reported
// on standard error: the user's program goes on.
func flush() {
	flushMu.Lock()
	defer flushMu.Unlock()
	flushExports()
}

// Shutdown writes the exports one last time and stops the periodic writer.
// Generated code calls it when main returns; calling it more than once is
// harmless, and later calls only write the model again.
func Shutdown() {
	first := false
	shut.Do(func() {
		close(stopped)
		ticker.Wait()
		first = true
	})
	if first {
		stopExports(flush) // drains traces, flushes, pushes metrics
		return
	}
	flush()
}

// Snapshot returns the current performance model.
func Snapshot() meter.Snapshot { return meter.Take() }
