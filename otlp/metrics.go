package otlp

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
)

// Metric names of the performance model over OTLP. Each is a cumulative
// sum; the per-probe ones carry the probe's name in the attribute
// meter.probe.
const (
	MetricCount         = "meter.probe.count"          // metered firings
	MetricTotal         = "meter.probe.total"          // ns, inclusive
	MetricInherentTotal = "meter.probe.inherent_total" // ns, inherent
	MetricDropped       = "meter.spans.dropped"        // spans lost on the way to an exporter
	MetricTraces        = "meter.traces"               // traces ended
	AttrProbe           = "meter.probe"
)

// modelExporter pushes the model as OTLP metrics through an OpenTelemetry
// metric exporter: every interval, and at shutdown. The data is built from
// the snapshot directly; no meter provider, instruments or callbacks.
type modelExporter struct {
	exp      sdkmetric.Exporter
	res      *resource.Resource
	start    time.Time // of every cumulative sum: when the exporter started
	interval time.Duration
	model    func() meter.Snapshot
	stderr   io.Writer

	mu     sync.Mutex // one push at a time
	ctx    context.Context
	cancel context.CancelFunc // ends a periodic push in flight at shutdown
	stop   chan struct{}
	done   chan struct{}
}

func newModelExporter(ctx context.Context, proto string, res *resource.Resource, s export.RemoteSettings) (*modelExporter, error) {
	var (
		exp sdkmetric.Exporter
		err error
	)
	if proto == ProtocolGRPC {
		exp, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false}))
	} else {
		exp, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
	}
	if err != nil {
		return nil, err
	}
	m := &modelExporter{exp: exp, res: res, start: time.Now(), interval: s.Interval, model: s.Model, stderr: s.Stderr,
		stop: make(chan struct{}), done: make(chan struct{})}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if m.interval > 0 {
		go m.run()
	} else {
		close(m.done)
	}
	return m, nil
}

// pushTimeout bounds a periodic push, unless the interval is longer.
const pushTimeout = 10 * time.Second

// run pushes the model every interval until shutdown. A push that fails
// is one line on stderr, so at most one per interval (a push that takes
// longer than the interval delays the next).
func (m *modelExporter) run() {
	defer close(m.done)
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			ctx, cancel := context.WithTimeout(m.ctx, max(m.interval, pushTimeout))
			if err := m.push(ctx); err != nil && m.ctx.Err() == nil { // not cut off by shutdown
				fmt.Fprintf(m.stderr, "meter: sending the model over OTLP failed: %v\n", err)
			}
			cancel()
		case <-m.stop:
			return
		}
	}
}

func (m *modelExporter) shutdown(ctx context.Context) error {
	close(m.stop)
	m.cancel()
	<-m.done
	err := m.push(ctx)
	if serr := m.exp.Shutdown(ctx); err == nil {
		err = serr
	}
	return err
}

// push sends the model as it is now.
func (m *modelExporter) push(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rm := m.metrics(m.model(), time.Now())
	return m.exp.Export(ctx, rm)
}

// metrics turns a snapshot into OTLP metric data.
func (m *modelExporter) metrics(s meter.Snapshot, now time.Time) *metricdata.ResourceMetrics {
	sum := func(name, unit, desc string, points []metricdata.DataPoint[int64]) metricdata.Metrics {
		return metricdata.Metrics{Name: name, Unit: unit, Description: desc, Data: metricdata.Sum[int64]{
			DataPoints: points, Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}}
	}
	point := func(v int64, attrs attribute.Set) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attrs, StartTime: m.start, Time: now, Value: v}
	}
	count := make([]metricdata.DataPoint[int64], 0, len(s.Rows))
	total := make([]metricdata.DataPoint[int64], 0, len(s.Rows))
	inh := make([]metricdata.DataPoint[int64], 0, len(s.Rows))
	for _, r := range s.Rows {
		set := attribute.NewSet(attribute.String(AttrProbe, r.Probe))
		count = append(count, point(r.Count, set))
		total = append(total, point(r.Total, set))
		inh = append(inh, point(r.InherentTotal, set))
	}
	var none attribute.Set
	return &metricdata.ResourceMetrics{
		Resource: m.res,
		ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope: instrumentation.Scope{Name: ScopeName},
			Metrics: []metricdata.Metrics{
				sum(MetricCount, "{firing}", "metered firings of the probe", count),
				sum(MetricTotal, "ns", "inclusive time of the probe's metered firings", total),
				sum(MetricInherentTotal, "ns", "inherent time of the probe's metered firings", inh),
				sum(MetricDropped, "{span}", "spans lost on the way to an exporter", []metricdata.DataPoint[int64]{point(s.Dropped, none)}),
				sum(MetricTraces, "{trace}", "traces ended", []metricdata.DataPoint[int64]{point(s.Traces, none)}),
			},
		}},
	}
}
