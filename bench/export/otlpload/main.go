// Command otlpload measures how many spans meter's export path delivers to
// an OTLP receiver on the same machine, and how many it drops on the way.
//
//	go run ./otlpload                      # from bench/export: gRPC and HTTP, flat out and at 200,000 spans/s
//	go run ./otlpload -rates 0,100000,300000 -protocols grpc
//
// The receiver (otlptest, which decodes every request with the official
// OTLP protobuf types and counts the spans) runs in a child process, as a
// collector on the same machine would. This process makes traces through
// the meter engine (a root firing and -spans-1 nested ones, on -producers
// goroutines, paced in 1 ms ticks, or flat out at rate 0) into the
// export pipeline that METER_EXPORT_OTLP=true starts, with the otlp module
// linked: everything as a user's program would run it, configured by the
// OTEL_EXPORTER_OTLP_* variables.
//
// For each protocol and rate it prints the spans made, and received, per
// second of the run; the spans dropped (queue full, or backing off) and
// failed, as a share of those made; and the CPU time of this process and
// of the receiver per second. Spans still queued when the producers stop
// are exported before the counts are read.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/meterio/meter/bench/export/internal/harness"
	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/export"
	_ "github.com/meterio/meter/otlp"
)

var (
	flagDuration  = flag.Duration("duration", 5*time.Second, "run per protocol and rate")
	flagRates     = flag.String("rates", "0,200000", "offered spans per second, in all; 0 is flat out")
	flagProtocols = flag.String("protocols", "grpc,http/protobuf", "OTLP protocols")
	flagProducers = flag.Int("producers", 2, "producer goroutines")
	flagSpans     = flag.Int("spans", 8, "spans per trace")
	flagWarmup    = flag.Duration("warmup", time.Second, "run at the rate before measuring, so that connections are made and the receiver warm; its drops are shown apart")
	flagProfile   = flag.String("cpuprofile", "", "write a CPU profile of this process (not the receiver) to this file")
)

type result struct {
	warmDropped                     int64
	made, received, dropped, failed int64
	seconds                         float64
	cpu, recvCPU                    time.Duration
	stderr                          string
}

func run(r *harness.Receiver, proto string, rate float64) result {
	addr := r.HTTPAddr
	if proto == "grpc" {
		addr = r.GRPCAddr
	}
	os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	os.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
	os.Setenv("OTEL_METRICS_EXPORTER", "none")
	var lines strings.Builder
	e := export.Start(export.Settings{OTLP: true, Traces: true, TraceMax: 10000, Stderr: &lines})
	tr := harness.NewTraffic(*flagSpans)
	tr.Configure(e.Sink())
	e.Run()
	rate0 := rate
	if rate0 <= 0 {
		rate0 = 200_000
	}
	harness.Produce(*flagProducers, rate0, *flagWarmup, *flagSpans, false, tr.Trace)
	e.Pipeline().Flush(context.Background())
	warm := e.Pipeline().Stats()
	runtime.GC()
	recv0, rcpu0 := r.Count()
	cpu0 := harness.ProcessCPU()
	start := time.Now()
	made := harness.Produce(*flagProducers, rate, *flagDuration, *flagSpans, false, tr.Trace)
	secs := time.Since(start).Seconds()
	recvAtEnd, _ := r.Count()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	e.StopTraces(ctx)
	e.Close(ctx)
	cancel()
	cpu := time.Duration(harness.ProcessCPU() - cpu0)
	recv1, rcpu1 := r.Count()
	st := e.Pipeline().Stats()
	_ = recv1
	return result{warmDropped: warm.Dropped, made: made, received: recvAtEnd - recv0, dropped: st.Dropped - warm.Dropped, failed: st.Failed - warm.Failed, seconds: secs,
		cpu: cpu, recvCPU: rcpu1 - rcpu0, stderr: lines.String()}
}

func main() {
	harness.ServeIfChild()
	flag.Parse()
	if err := clock.Setup("auto"); err != nil {
		clock.Setup("mono")
	}
	var rates []float64
	for _, f := range strings.Split(*flagRates, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 {
			fmt.Fprintf(os.Stderr, "otlpload: bad -rates %q\n", *flagRates)
			os.Exit(2)
		}
		rates = append(rates, v)
	}
	r, err := harness.StartReceiver()
	if err != nil {
		fmt.Fprintln(os.Stderr, "otlpload:", err)
		os.Exit(1)
	}
	defer r.Close()
	if *flagProfile != "" {
		f, err := os.Create(*flagProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "otlpload:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("%s, GOMAXPROCS=%d, %d producers, %d spans per trace, %v per run, clock %s, %s\n\n",
		runtime.Version(), runtime.GOMAXPROCS(0), *flagProducers, *flagSpans, *flagDuration, clock.Source(), time.Now().Format("2006-01-02"))
	fmt.Printf("%-14s %-10s %-10s %-12s %-9s %-9s %-12s %-18s %s\n", "protocol", "offered/s", "made/s", "received/s", "dropped", "failed", "CPU ms/s", "receiver CPU ms/s", "dropped in warm-up")
	for _, proto := range strings.Split(*flagProtocols, ",") {
		for _, rate := range rates {
			res := run(r, proto, rate)
			offered := "flat out"
			if rate > 0 {
				offered = fmt.Sprintf("%.0fk", rate/1000)
			}
			pct := func(n int64) string { return fmt.Sprintf("%.2f%%", 100*float64(n)/float64(max(res.made, 1))) }
			fmt.Printf("%-14s %-10s %-10s %-12s %-9s %-9s %-12.0f %-18.0f %d\n", proto, offered,
				fmt.Sprintf("%.0fk", float64(res.made)/res.seconds/1000), fmt.Sprintf("%.0fk", float64(res.received)/res.seconds/1000),
				pct(res.dropped), pct(res.failed), float64(res.cpu)/1e6/res.seconds, float64(res.recvCPU)/1e6/res.seconds, res.warmDropped)
			if res.stderr != "" {
				io.WriteString(os.Stdout, indent(res.stderr))
			}
		}
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}
