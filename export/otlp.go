package export

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/meterio/meter/meter"
)

// OTLP protocols, as OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// Protocol returns the OTLP protocol for a signal ("TRACES" or "METRICS"):
// OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else http/protobuf, the specification's default. A value it does not know
// is reported on standard error and the default is used.
func Protocol(signal string) string {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		v := strings.TrimSpace(os.Getenv(k))
		switch v {
		case "":
			continue
		case ProtocolGRPC, ProtocolHTTP:
			return v
		}
		fmt.Fprintf(os.Stderr, "meter: %s=%q: want grpc or http/protobuf; using the default, http/protobuf\n", k, v)
		return ProtocolHTTP
	}
	return ProtocolHTTP
}

// Resource describes the process to OTLP receivers: the SDK's defaults
// (service.name unknown_service:<executable>, telemetry.sdk.*) overridden by
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES as they are now.
func Resource(ctx context.Context) *resource.Resource {
	env, err := resource.New(ctx, resource.WithFromEnv())
	if err != nil {
		return resource.Default()
	}
	r, err := resource.Merge(resource.Default(), env)
	if err != nil {
		return env
	}
	return r
}

// otlpTraces is an OTLP span exporter that knows the resource its spans
// carry.
type otlpTraces struct {
	sdktrace.SpanExporter
	res *resource.Resource
}

func (e otlpTraces) resource() *resource.Resource { return e.res }

// CopiesSpans: the OTLP exporters turn spans into protobuf messages before
// ExportSpans returns.
func (otlpTraces) CopiesSpans() {}

// NewOTLPTraceExporter returns the OpenTelemetry OTLP span exporter the
// standard variables ask for: otlptracegrpc or otlptracehttp by
// Protocol("TRACES"); endpoint, headers, TLS, compression and timeout from
// OTEL_EXPORTER_OTLP_*, which the exporters read themselves. It does not
// connect until the first export.
func NewOTLPTraceExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	var (
		e   sdktrace.SpanExporter
		err error
	)
	if Protocol("TRACES") == ProtocolGRPC {
		e, err = otlptracegrpc.New(ctx)
	} else {
		e, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("export: OTLP traces: %w", err)
	}
	return otlpTraces{e, Resource(ctx)}, nil
}

// Metric names of the performance model over OTLP. Each is a cumulative sum
// per probe, with the probe's name in the attribute meter.probe.
const (
	MetricCount         = "meter.probe.count"          // metered firings
	MetricTotal         = "meter.probe.total"          // ns, inclusive
	MetricInherentTotal = "meter.probe.inherent_total" // ns, inherent
	MetricDropped       = "meter.spans.dropped"        // spans the export path dropped
	MetricTraces        = "meter.traces"               // traces ended
	AttrProbe           = "meter.probe"
)

// Metrics pushes the performance model as OTLP metrics through the
// OpenTelemetry metric SDK: at each interval, and at Flush and Shutdown.
type Metrics struct {
	provider *sdkmetric.MeterProvider
}

// NewOTLPMetrics builds the OTLP metric exporter the standard variables ask
// for (Protocol("METRICS")) and a periodic reader that pushes the model every
// interval; interval 0 pushes only at Flush and Shutdown. take reads the
// model (meter.Take in production).
func NewOTLPMetrics(ctx context.Context, interval time.Duration, take func() meter.Snapshot) (*Metrics, error) {
	var (
		e   sdkmetric.Exporter
		err error
	)
	if Protocol("METRICS") == ProtocolGRPC {
		e, err = otlpmetricgrpc.New(ctx)
	} else {
		e, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("export: OTLP metrics: %w", err)
	}
	return NewMetrics(ctx, e, interval, take)
}

// NewMetrics is NewOTLPMetrics with the exporter given.
func NewMetrics(ctx context.Context, e sdkmetric.Exporter, interval time.Duration, take func() meter.Snapshot) (*Metrics, error) {
	if interval <= 0 {
		interval = 1 << 62 // never on its own: Flush and Shutdown push
	}
	mp := sdkmetric.NewMeterProvider(
		sdkmetric.WithResource(Resource(ctx)),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(e, sdkmetric.WithInterval(interval))),
	)
	m := mp.Meter(Scope.Name)
	count, err1 := m.Int64ObservableCounter(MetricCount, metric.WithUnit("{firing}"), metric.WithDescription("metered firings of the probe"))
	total, err2 := m.Int64ObservableCounter(MetricTotal, metric.WithUnit("ns"), metric.WithDescription("inclusive time of the probe's metered firings"))
	inh, err3 := m.Int64ObservableCounter(MetricInherentTotal, metric.WithUnit("ns"), metric.WithDescription("inherent time of the probe's metered firings"))
	dropped, err4 := m.Int64ObservableCounter(MetricDropped, metric.WithUnit("{span}"), metric.WithDescription("spans the export path dropped"))
	traces, err5 := m.Int64ObservableCounter(MetricTraces, metric.WithUnit("{trace}"), metric.WithDescription("traces ended"))
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			mp.Shutdown(ctx)
			return nil, fmt.Errorf("export: OTLP metrics: %w", err)
		}
	}
	_, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := take()
		for _, r := range s.Rows {
			set := metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrProbe, r.Probe)))
			o.ObserveInt64(count, r.Count, set)
			o.ObserveInt64(total, r.Total, set)
			o.ObserveInt64(inh, r.InherentTotal, set)
		}
		o.ObserveInt64(dropped, s.Dropped)
		o.ObserveInt64(traces, s.Traces)
		return nil
	}, count, total, inh, dropped, traces)
	if err != nil {
		mp.Shutdown(ctx)
		return nil, fmt.Errorf("export: OTLP metrics: %w", err)
	}
	return &Metrics{provider: mp}, nil
}

// Flush pushes the model now.
func (m *Metrics) Flush(ctx context.Context) error { return m.provider.ForceFlush(ctx) }

// Shutdown pushes the model one last time and stops the reader.
func (m *Metrics) Shutdown(ctx context.Context) error { return m.provider.Shutdown(ctx) }
