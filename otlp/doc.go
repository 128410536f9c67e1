// Package otlp sends meter's traces and performance model over OTLP. It is
// opt-in: a program links it with one blank import in its main package,
//
//	import _ "github.com/meterio/meter/otlp"
//
// (meterinject adds it when asked), and switches it on with
// METER_EXPORT_OTLP=true. Everything OpenTelemetry, gRPC and protobuf lives
// in this module, so a program without the import links the standard
// library only on meter's account. The module's go line is that of the
// OpenTelemetry modules it requires, above the runtime's: a program that
// imports it needs that Go version too.
//
// Its init registers with the runtime (export.RegisterOTLP). Package
// initialisation order does not say whether that happens before or after
// the first probe registration; traces that end in between wait in the
// export queue, and go out once the exporter is attached.
//
// # Configuration
//
// Only the standard OpenTelemetry variables:
//
//   - OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_METRICS_PROTOCOL,
//     then OTEL_EXPORTER_OTLP_PROTOCOL: grpc, http/protobuf (the default, as
//     the specification says) or http/json;
//   - endpoint, headers, TLS, compression and timeout from the other
//     OTEL_EXPORTER_OTLP_* variables, which the OpenTelemetry transport
//     clients (otlptracegrpc, otlptracehttp, otlpmetricgrpc,
//     otlpmetrichttp) read themselves;
//   - OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES for the resource; without
//     them service.name is unknown_service:<executable>;
//   - OTEL_TRACES_EXPORTER=none and OTEL_METRICS_EXPORTER=none switch that
//     half off, as in the OpenTelemetry SDKs. Jaeger, which has no metrics
//     service, wants OTEL_METRICS_EXPORTER=none.
//
// # Traces
//
// Spans are built as OTLP protobuf messages directly from the batches the
// export pipeline hands over, with no SDK span in between: the messages,
// ids and attributes of a batch live in buffers the exporter reuses, so a
// batch allocates only what the transport itself does. One span per metered
// firing in a trace; the firing that started the trace is the root, and
// every other span's parent is its nearest metered ancestor. Name: the
// probe's; kind internal; start and end in wall-clock time, end − start
// being the firing's inclusive time; attributes meter.inherent_ns and, on
// spans of a truncated part of a trace, meter.truncated; scope
// github.com/meterio/meter.
//
// Ids are deterministic, so nothing is drawn at random per span: a trace id
// is 8 random bytes drawn once per process followed by the meter trace id
// (big-endian), a span id 4 random bytes drawn once per process followed by
// 1 + the span's index in its trace (TraceID, SpanID). A trace's goroutines
// share its ids: a goroutine started inside a trace joins it (package meter).
//
// # Under the caller's span
//
// The package's init registers a meter.RootHook. A trace started by a root
// whose function has a context.Context or *http.Request parameter (which
// meterinject hands to the probe) becomes a child of the caller's span: the
// context's valid span context, else the request's W3C traceparent header
// or a gRPC method's incoming metadata. The trace then takes the caller's
// trace id, its root span's parent is the caller's span, and its span ids'
// first 4 bytes mix in the meter trace id. The root span carries the
// request, under OpenTelemetry's semantic conventions: http.request.method,
// url.path, http.route and http.response.status_code (read from the
// http.ResponseWriter as the root's firing ends) for a net/http handler;
// rpc.system, rpc.service and rpc.method for a gRPC method; it is of kind
// server when it stands for the request in this process. Only traced
// requests reach the hook; the last 4096 are kept for the exporter.
//
// The transport clients' own retries are off: the export pipeline backs off
// itself, with jitter, and drops spans at the queue while it does, so that
// a collector that is down costs one attempt per back-off.
//
// # Metrics
//
// The model, read at every METER_EXPORT_INTERVAL and at exit, as
// cumulative sums: per probe (attribute meter.probe) meter.probe.count,
// meter.probe.total and meter.probe.inherent_total (ns); for the process
// meter.traces and meter.spans.dropped, the spans lost on the way to an
// exporter.
package otlp
