// Package export writes what meter measured: the performance model as CSV,
// as OTLP metrics and as a pprof profile, and traces as OTLP spans.
//
// # Traces
//
// A Pipeline is the meter.Sink. When a trace ends, the traced goroutine
// copies its spans into a bounded lock-free multi-producer single-consumer
// queue (queue.go): one compare-and-swap claims room for the whole trace,
// then each span is a 64-byte copy and an atomic store, and one atomic add
// counts the trace's spans as published. TraceEnded never blocks, never
// takes a lock and never allocates; spans that do not fit are dropped,
// counted in Stats and in the model (meter.AddDropped), and reported on
// standard error at most once per interval.
//
// One exporter goroutine sleeps until a full batch (512 spans) is published
// or the schedule delay (5 s) has passed. Producers do not signal it per
// span: the consumer sets the published count at which it wants to wake,
// and exactly one producer's add reaches it and sends one non-blocking
// wake-up (signal batching, after DoorDash's study of the OpenTelemetry
// batch span processor). A producer that finds the queue full while the
// woken exporter has not run yet yields its processor, so that the exporter
// gets one. The exporter hands the records to an OpenTelemetry span
// exporter (otlptracegrpc or otlptracehttp, NewOTLPTraceExporter) and to
// the call paths of the pprof profile where they lie in the queue, as
// sdktrace.ReadOnlySpan views (spans.go). The ring has room for the
// queue's capacity plus one batch, so producers can fill the whole capacity
// while a batch is exported in place. For a SpanCopier the views are fixed,
// one per slot, so a batch costs the exporter goroutine no work per span;
// other exporters, which may keep the spans, get copies per batch. The
// export call's context is reused from call to call until one times out.
//
// The queue is written here rather than taken from xsync/v3: its
// MPMCQueueOf takes one compare-and-swap per item, where a trace of n spans
// here takes one per trace. BenchmarkQueue measures both (2 to 5 ns per
// span against 8 to 17 with 8-span traces, 2 cores).
//
// Span and trace ids are deterministic: a trace id is 8 random bytes drawn
// once per process and the goroutine's meter trace id; a span id is 4
// random bytes drawn once per process and 1 + the span's index in its trace.
//
// While a goroutine is inside a trace, it carries the pprof labels
// meter.trace_id and meter.root (labels.go), set when the trace starts and
// put back to what they were when it ends.
//
// # Model
//
// WriteCSV and WriteCSVFile write the model as DESIGN.md fixes it.
// NewOTLPMetrics pushes it through the OpenTelemetry metric SDK.
// WriteProfile and WritePprofFile write the model and the traced call paths
// as a pprof profile with the sample types count, inclusive and inherent.
//
// Nothing here may block, lock or allocate on a traced goroutine, except
// TraceStarted's pprof labels (a few small allocations per trace, not per
// firing).
package export
