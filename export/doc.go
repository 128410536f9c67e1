// Package export writes what meter measured: the performance model as CSV
// (with its .meta beside it) and as a pprof profile, and traces through a
// lock-free queue to a span exporter. It uses the standard library only:
// every instrumented program links it. What needs more is opt-in and
// registers here when linked: the otlp module (RegisterOTLP) and the
// pproflabels package (RegisterLabels).
//
// The probe package starts the exports the METER_* properties ask for with
// Start, hands the engine the Sink it returns, writes the files with
// WriteFiles (at each METER_EXPORT_INTERVAL and at exit), and at exit
// calls StopTraces and then Close.
//
// # Traces
//
// A Pipeline is the meter.Sink. The engine hands over a trace's spans, in
// one part or several (meter.Sink), and the pipeline copies them into a
// bounded lock-free multi-producer single-consumer queue (queue.go): one
// compare-and-swap claims room for the whole part, each span is a 48-byte
// copy (no pointers: the ring is never scanned by the garbage collector,
// and written without write barriers), one atomic store publishes the
// claim and one atomic add counts its spans. TraceSpans never blocks, never takes a lock and never allocates.
// Spans that do not fit are dropped, counted in Stats and in the model
// (meter.AddDropped), and reported on standard error at most once per
// interval; the producer that finds the queue full yields its processor,
// so that an exporter waiting for one runs.
//
// One exporter goroutine sleeps until a full batch (512 spans) is published
// or the schedule delay (5 s) has passed. Producers do not signal it per
// span: the consumer sets the published count at which it wants to wake,
// and exactly one producer's add reaches it and sends one non-blocking
// wake-up (signal batching, after DoorDash's study of the OpenTelemetry
// batch span processor). It takes up to four batches at once when more
// wait, reads them where they lie in the queue (the ring has room for the
// queue's capacity plus what is taken, so producers fill the whole capacity
// meanwhile), adds them to the call paths of the pprof profile, and
// converts them into a buffer of Spans it owns for the SpanExporter: a
// batch allocates nothing. The export call's context is reused from call
// to call until one times out.
//
// A failed export call starts a back-off (1 s, doubling up to 30 s, each
// wait drawn between half and all of it): no call is made until it ends,
// and meanwhile, unless the call paths want them, producers drop their
// spans at once. So a collector that is down costs one connection attempt
// per back-off, not one per batch.
//
// The queue holds at least one trace of METER_TRACE_MAX spans (Start sizes
// it so; internal/env bounds the property).
//
// The queue is written here rather than taken from xsync's MPMCQueueOf,
// which takes one compare-and-swap per item where a trace here takes one
// per part.
//
// NewPipeline builds a pipeline for a program that wires the engine by
// hand with an exporter of its own; its time (schedule, deadlines,
// back-off) comes from a Clock, which tests move by hand.
//
// # Files
//
// WriteFiles writes the model as CSV, with the columns docs/design.md
// fixes, and its .meta and .stats sidecars beside it, and the model and
// the traced call paths as a pprof profile (profile.proto encoded here,
// uncompressed) with the sample types count, inclusive and inherent.
// Package schema names the columns, labels, sidecar keys and profile
// fields, which package report reads back. WriteCSV and WriteProfile write
// the same to any writer (the live page's). Every file is written by
// WriteFile: only over a regular file or as a new one, through a temporary
// file in the same folder and a rename; Start checks each path once, so
// that a bad one is reported at start.
//
// Nothing here may block, lock or allocate on a traced goroutine.
package export
