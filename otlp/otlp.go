package otlp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/meterio/meter/export"
)

func init() { export.RegisterOTLP(start) }

// OTLP protocols, as OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	ProtocolGRPC     = "grpc"
	ProtocolHTTP     = "http/protobuf"
	ProtocolHTTPJSON = "http/json"
)

// ScopeName names the instrumentation scope of spans and metrics.
const ScopeName = "github.com/meterio/meter"

// Per-process halves of every trace and span id, drawn once.
var (
	traceSalt = rand.Uint64()
	spanSalt  = rand.Uint32() | 1
)

// TraceID returns the OTLP trace id of the meter trace id trace.
func TraceID(trace uint64) [16]byte {
	var id [16]byte
	binary.BigEndian.PutUint64(id[:8], traceSalt)
	binary.BigEndian.PutUint64(id[8:], trace)
	return id
}

// SpanID returns the OTLP span id of the span at index in its trace.
func SpanID(index int32) [8]byte {
	var id [8]byte
	binary.BigEndian.PutUint32(id[:4], spanSalt)
	binary.BigEndian.PutUint32(id[4:], uint32(index)+1)
	return id
}

// lookup reads the environment; tests replace it.
var lookup = os.Getenv

// protocol returns the OTLP protocol for a signal ("TRACES" or
// "METRICS"): OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else
// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf, the specification's
// default. A value it does not know is reported on w and the default is
// used.
func protocol(signal string, w io.Writer) string {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		v := strings.TrimSpace(lookup(k))
		switch v {
		case "":
			continue
		case ProtocolGRPC, ProtocolHTTP, ProtocolHTTPJSON:
			return v
		}
		fmt.Fprintf(w, "meter: %s=%q: want grpc, http/protobuf or http/json; using the default, http/protobuf\n", k, v)
		return ProtocolHTTP
	}
	return ProtocolHTTP
}

// enabled reads OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER: a
// comma-separated list of exporters, of which this module is "otlp" (the
// default); "none" switches the signal off. Anything else is reported on
// w, and OTLP is used.
func enabled(name string, w io.Writer) bool {
	v := strings.TrimSpace(lookup(name))
	if v == "" {
		return true
	}
	on, other := false, ""
	for _, e := range strings.Split(v, ",") {
		switch e = strings.TrimSpace(strings.ToLower(e)); e {
		case "none":
			return false
		case "otlp":
			on = true
		default:
			other = e
		}
	}
	if !on && other != "" {
		fmt.Fprintf(w, "meter: %s=%q: meter sends otlp or none; using otlp\n", name, v)
	}
	return true
}

// remote is what start returns to the runtime: the span exporter and the
// model's metrics, each nil when switched off.
type remote struct {
	traces  *traceExporter
	metrics *modelExporter
}

func (r *remote) SpanExporter() export.SpanExporter {
	if r.traces == nil {
		return nil
	}
	return r.traces
}

// Shutdown sends the model one last time and closes the metrics
// connection; the pipeline shuts the span exporter down itself.
func (r *remote) Shutdown(ctx context.Context) error {
	if r.metrics == nil {
		return nil
	}
	return r.metrics.shutdown(ctx)
}

func start(s export.RemoteSettings) (export.Remote, error) {
	ctx := context.Background()
	r := &remote{}
	res := processResource(ctx)
	var errs []error
	if s.Traces && enabled("OTEL_TRACES_EXPORTER", s.Stderr) {
		t, err := newTraceExporter(ctx, protocol("TRACES", s.Stderr), res)
		if err != nil {
			errs = append(errs, fmt.Errorf("traces: %w", err))
		}
		r.traces = t
	}
	if enabled("OTEL_METRICS_EXPORTER", s.Stderr) {
		m, err := newModelExporter(ctx, protocol("METRICS", s.Stderr), res, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("metrics: %w", err))
		}
		r.metrics = m
	}
	if r.traces == nil && r.metrics == nil {
		return nil, errors.Join(errs...)
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(s.Stderr, "meter: OTLP: %v\n", err)
	}
	return r, nil
}

// processResource describes the process to OTLP receivers: the SDK's
// defaults (service.name unknown_service:<executable>, telemetry.sdk.*)
// overridden by OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func processResource(ctx context.Context) *resource.Resource {
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
