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

// onFlush, when set (tests), is called after each periodic write.
var onFlush func()

var (
	config  env.Config
	wired   meter.Chain // the chain setup wired, for a test that rewires the engine to restore
	stderr  io.Writer   = os.Stderr
	stopped             = make(chan struct{})
	ticker  sync.WaitGroup
	flushMu sync.Mutex
	shut    sync.Once
)

// setup reads the properties and wires the chain, once, at the first
// registration.
func setup() {
	config = env.Load(os.LookupEnv, stderr)
	env.Unknown(os.Environ(), stderr)
	if !config.Enabled {
		// Nothing is timed: the TSC's calibration (about 5 ms of the
		// program's start) would be for nothing.
		config.Clock = "mono"
	}
	if err := clock.Setup(config.Clock); err != nil {
		fmt.Fprintf(stderr, "meter: METER_CLOCK=%s: %v; using the monotonic clock\n", config.Clock, err)
		clock.Setup("mono")
	}
	ch := chain(config)
	ch.Sink = startExports(config, ch) // export.go
	wired = ch
	meter.Configure(ch)
	runExports()
	configureLive(config.HTTP) // live.go
	if config.Enabled && config.SamplerInterval > 0 {
		// In test binaries too: its thread is no goroutine, and nothing
		// a program sees of its own.
		meter.StartSampler(time.Duration(config.SamplerInterval))
	}
	if config.ExportInterval > 0 && (config.ExportCSV != "" || config.ExportPprof != "") {
		ticker.Add(1)
		go periodic(config.ExportInterval)
	}
}

// chain builds the extensions the configuration asks for.
func chain(c env.Config) meter.Chain {
	ch := meter.Chain{Enabled: c.Enabled, TraceMax: int32(c.TraceMax)}
	if c.HotspotEnabled {
		ch.Hotspot = &hotspot.Rule{
			Threshold:         c.HotspotThreshold,
			ThresholdInherent: c.HotspotThresholdInherent,
			Initial:           c.HotspotInitial,
			Sample:            c.HotspotSample,
			SampleShare:       c.HotspotSampleShare,
			Cost:              c.HotspotCost,
			Untimed:           c.HotspotUntimed,
		}
	} else {
		// Every firing metered; calls too short to time are still untimed.
		ch.Untimed = &hotspot.Rule{ThresholdInherent: c.HotspotThresholdInherent, Untimed: c.HotspotUntimed}
	}
	if c.TracepointEnabled {
		ch.Tracepoint = &tracepoint.Rule{Sample: c.TracepointSample, Include: c.TracepointInclude}
	}
	if c.FlowcheckEnabled {
		ch.Flowcheck = &flowcheck.Rule{Lower: c.FlowcheckLower, Upper: c.FlowcheckUpper}
	}
	if c.BudgetEnabled {
		ch.Budget = &budget.Rule{Percent: c.BudgetPercent, Unit: c.BudgetUnit}
	}
	if c.SpotcheckEnabled {
		ch.Spotcheck = &spotcheck.Rule{
			Interval:          c.SpotcheckInterval,
			Threshold:         c.HotspotThreshold,
			ThresholdInherent: c.HotspotThresholdInherent,
		}
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
			if onFlush != nil {
				onFlush()
			}
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

// Shutdown writes the exports one last time and stops the periodic writer
// and the exporters. Generated code calls it when main returns, and before
// the program leaves through os.Exit or log.Fatal; the first call does the
// work, later ones return at once.
func Shutdown() {
	shut.Do(func() {
		close(stopped)
		ticker.Wait()
		final.Store(true)
		stopExports(flush) // drains traces, flushes, pushes metrics
	})
}

// Snapshot returns the current performance model.
func Snapshot() meter.Snapshot { return meter.Take() }
