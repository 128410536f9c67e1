// Command unreachable measures what a collector that is down costs the
// program that exports to it: the program's work per CPU-second with
// METER_EXPORT_OTLP=true and the endpoint a loopback port where nothing
// listens, over HTTP and over gRPC, against the same program without
// OTLP.
//
//	go run ./unreachable       # from bench/export
//
// The program: -producers goroutines run traced requests flat out, each a
// root firing with -spans-1 nested firings, every firing doing a fixed
// amount of work (-work rounds of a multiply-add chain). Work per
// CPU-second is requests made divided by the process's CPU time (user +
// system). Runs alternate between the configurations, -rounds times; the
// ratios use the median of each.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meterio/meter/bench/export/internal/harness"
	"github.com/meterio/meter/clock"
	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
	_ "github.com/meterio/meter/otlp"
)

var (
	flagDuration  = flag.Duration("duration", 3*time.Second, "run per configuration and round")
	flagRounds    = flag.Int("rounds", 3, "rounds of all configurations, alternated")
	flagProducers = flag.Int("producers", 2, "goroutines running requests")
	flagSpans     = flag.Int("spans", 8, "firings per request")
	flagWork      = flag.Int("work", 200, "rounds of work per firing")
)

var sink atomic.Uint64

//go:noinline
func work(n int) {
	x := sink.Load() | 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink.Store(x)
}

type config struct {
	name  string
	proto string // "" for no OTLP
}

// run runs the program for d in one configuration and returns requests
// per CPU-second, and what the export path counted.
func run(c config, addr string, d time.Duration) (float64, export.Stats, string) {
	var lines strings.Builder
	set := export.Settings{Traces: true, TraceMax: 10000, Stderr: &lines}
	if c.proto != "" {
		os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
		os.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.proto)
		os.Setenv("OTEL_METRICS_EXPORTER", "none")
		set.OTLP = true
	}
	e := export.Start(set)
	tr := harness.NewTraffic(*flagSpans)
	tr.Configure(e.Sink())
	e.Run()
	var stop atomic.Bool
	var made atomic.Int64
	var wg sync.WaitGroup
	runtime.GC()
	cpu0 := harness.ProcessCPU()
	for range *flagProducers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := int64(0)
			for !stop.Load() {
				f := tr.Root.Begin()
				work(*flagWork)
				for i := 1; i < *flagSpans; i++ {
					child(tr)
				}
				tr.Root.End(&f)
				k++
			}
			made.Add(k)
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	cpu := time.Duration(harness.ProcessCPU() - cpu0)
	var st export.Stats
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	e.StopTraces(ctx)
	e.Close(ctx)
	cancel()
	if p := e.Pipeline(); p != nil {
		st = p.Stats()
	}
	meter.Configure(meter.Chain{})
	return float64(made.Load()) / cpu.Seconds(), st, lines.String()
}

func main() {
	flag.Parse()
	if err := clock.Setup("auto"); err != nil {
		clock.Setup("mono")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "unreachable:", err)
		os.Exit(1)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	configs := []config{{"no OTLP", ""}, {"OTLP http/protobuf", "http/protobuf"}, {"OTLP grpc", "grpc"}}
	fmt.Printf("%s, GOMAXPROCS=%d, %d producers, %d firings per request, work %d, %v per run, %d rounds, clock %s, %s\n",
		runtime.Version(), runtime.GOMAXPROCS(0), *flagProducers, *flagSpans, *flagWork, *flagDuration, *flagRounds, clock.Source(), time.Now().Format("2006-01-02"))
	fmt.Printf("endpoint %s: nothing listens\n\n", addr)
	res := make([][]float64, len(configs))
	stats := make([]export.Stats, len(configs))
	lines := make([]string, len(configs))
	for range *flagRounds {
		for i, c := range configs {
			v, st, out := run(c, addr, *flagDuration)
			res[i] = append(res[i], v)
			stats[i].Errors += st.Errors
			stats[i].Dropped += st.Dropped
			stats[i].Failed += st.Failed
			lines[i] = out
		}
	}
	base := median(res[0])
	fmt.Printf("%-20s %-22s %-8s %-24s %s\n", "configuration", "requests/CPU-second", "ratio", "export calls per run", "runs (requests/CPU-s)")
	for i, c := range configs {
		m := median(res[i])
		fmt.Printf("%-20s %-22.0f %-8.3f %-24.1f %v\n", c.name, m, m/base, float64(stats[i].Errors)/float64(*flagRounds), rounded(res[i]))
	}
	for i, c := range configs {
		if lines[i] != "" {
			fmt.Printf("\nstderr of the last %s run:\n", c.name)
			io.WriteString(os.Stdout, lines[i])
		}
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func rounded(v []float64) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// child is one nested firing, in a function of its own as generated code
// has it.
func child(tr *harness.Traffic) {
	g := tr.Child.Begin()
	work(*flagWork)
	tr.Child.End(&g)
}
