// Command fanout is an HTTP service whose handler fans its work out to
// three goroutines, the ways services do: a go statement it waits for, an
// errgroup, and a goroutine that outlives the request. It shows meter's
// traces across goroutines: instrumented with meterinject -otlp and served
// with METER_TRACEPOINT_ENABLED=true, each sampled request is one trace
// holding the spans of all four goroutines (docs/traces.md).
//
//	fanout -addr 127.0.0.1:8080   serve until SIGTERM or SIGINT, then drain and return
//	fanout -n 2000                serve 2000 requests in the process, through httptest,
//	                              one after another, and exit: what bench/traces-cost.sh
//	                              counts (its audits do not wait)
//	fanout -otelhttp              also wrap the router in otelhttp's handler, with an
//	                              OpenTelemetry SDK that sends its spans over OTLP
//	                              (the standard OTEL_EXPORTER_OTLP_* variables): each
//	                              meter trace is then a child of otelhttp's server span
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"golang.org/x/sync/errgroup"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to serve on (port 0: any free port)")
	withOTel := flag.Bool("otelhttp", false, "wrap the router in otelhttp's handler, with an SDK sending spans over OTLP")
	n := flag.Int("n", 0, "serve `N` requests in the process and exit")
	flag.Parse()
	if *n > 0 {
		inProcess(*n)
		return
	}
	if err := serve(*addr, *withOTel); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

// serve runs the service until SIGTERM or SIGINT; it prints the address it
// listens on, one line, once it does.
func serve(addr string, withOTel bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s := &server{audits: make(chan string, 1024), auditDelay: 2 * time.Millisecond}
	var h http.Handler = s.routes()
	if withOTel {
		exp, err := otlptracegrpc.New(ctx)
		if err != nil {
			return err
		}
		res, _ := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName("fanout-otel")))
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(200*time.Millisecond)), sdktrace.WithResource(res))
		defer tp.Shutdown(context.Background())
		otel.SetTracerProvider(tp)
		h = otelhttp.NewHandler(h, "GET /fan")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(ln) }()
	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	s.outliving.Wait() // the audits of the last requests
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

type server struct {
	audits     chan string    // what the audit goroutines wrote
	auditDelay time.Duration  // how long an audit waits before its work
	outliving  sync.WaitGroup // audit goroutines still running
}

// inProcess serves n requests through httptest, one after another.
func inProcess(n int) {
	s := &server{audits: make(chan string, 1024)}
	h := s.routes()
	for i := 0; i < n; i++ {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/fan?n=2", nil))
		if w.Code != http.StatusOK {
			fmt.Fprintln(os.Stderr, "fanout:", w.Code, w.Body.String())
			os.Exit(1)
		}
		select {
		case <-s.audits:
		default:
		}
	}
	s.outliving.Wait()
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /fan", s.fan)
	return mux
}

// fan answers with digests computed on three goroutines: one started by a
// go statement and waited for, one run by an errgroup, and an audit that
// goes on after the response is written.
func (s *server) fan(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	n = max(n, 1)
	var wg sync.WaitGroup
	var fetched string
	wg.Add(1)
	go func() {
		defer wg.Done()
		fetched = s.fetch(r.Context(), n)
	}()
	g, gctx := errgroup.WithContext(r.Context())
	var looked string
	g.Go(func() error {
		var err error
		looked, err = s.lookup(gctx, n)
		return err
	})
	s.outliving.Add(1)
	go s.audit(r.URL.Path, n)
	err := g.Wait()
	wg.Wait()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintf(w, "%s %s\n", fetched, looked)
}

// fetch stands for a call to another service: a few rounds of hashing.
func (s *server) fetch(ctx context.Context, n int) string {
	sum := []byte("fetch")
	for i := 0; i < 4*n; i++ {
		sum = digest(sum)
	}
	if ctx.Err() != nil {
		return ""
	}
	return hex.EncodeToString(sum[:4])
}

// lookup stands for a cache look-up, in two steps.
func (s *server) lookup(ctx context.Context, n int) (string, error) {
	key := s.key(n)
	sum := []byte(key)
	for i := 0; i < 3*n; i++ {
		sum = digest(sum)
	}
	return hex.EncodeToString(sum[:4]), ctx.Err()
}

// key builds the look-up's key.
func (s *server) key(n int) string {
	b := make([]byte, 0, 32)
	for i := 0; i < n; i++ {
		b = strconv.AppendInt(b, int64(i), 10)
	}
	return string(b)
}

// audit records the request after the response has gone: it waits, as a
// write to a slow log would, then hashes the record.
func (s *server) audit(path string, n int) {
	defer s.outliving.Done()
	time.Sleep(s.auditDelay)
	sum := []byte(path)
	for i := 0; i < 3*n; i++ {
		sum = digest(sum)
	}
	select {
	case s.audits <- hex.EncodeToString(sum[:4]):
	default:
	}
}

// digest is one round of the work: SHA-256 of b.
func digest(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}
