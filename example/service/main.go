// Command service is a small HTTP service for trying meter as a service
// owner would: handlers that decode JSON, call a store and encode a reply,
// on the standard library's router, and a load generator to drive them.
//
//	service -addr 127.0.0.1:8080                  serve until SIGTERM or SIGINT
//	service -load http://127.0.0.1:8080 -n 20000  drive a running service
//
// It does not handle SIGTERM itself unless -graceful is given: then it
// drains its requests and returns from main.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to serve on (port 0: any free port)")
	graceful := flag.Bool("graceful", false, "handle SIGTERM and SIGINT: stop taking requests, drain, return")
	load := flag.String("load", "", "base `URL` of a running service: drive it with requests instead of serving")
	n := flag.Int("n", 10000, "requests to send, with -load")
	c := flag.Int("c", 8, "concurrent clients, with -load")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the serving to `file` (with -graceful: until the signal)")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "service:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if *load != "" {
		st, err := drive(*load, *n, *c)
		if err != nil {
			fmt.Fprintln(os.Stderr, "service:", err)
			os.Exit(1)
		}
		fmt.Println(st)
		return
	}
	if err := serve(*addr, *graceful); err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(1)
	}
}

// serve runs the service; it prints the address it listens on, one line,
// once it does.
func serve(addr string, graceful bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: newAPI(newStore(2000)).routes(), ReadHeaderTimeout: 5 * time.Second}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	if !graceful {
		return srv.Serve(ln)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(ln) }()
	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
