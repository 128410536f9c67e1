package otlp

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/meterio/meter/otlp/otlptest"
)

// TestService is the README's service, as a user runs it: the example
// HTTP service instrumented by meterinject with -otlp, driven by its own
// load generator with tracepoint on and no other setting, and stopped the
// way services are, with SIGTERM. It checks that the model has the request
// handlers in it; that every trace reaches a real OTLP receiver rooted at
// a handler, one per sampled request; and that SIGTERM ends the program as
// it would the plain one: a graceful one returns from main with status 0,
// the other dies of the signal, and both write their model.
func TestService(t *testing.T) {
	if testing.Short() {
		t.Skip("instruments and builds a program")
	}
	svc, example, r := buildExample(t, "./service")
	tmp := t.TempDir()
	load := filepath.Join(tmp, "load")
	run(t, example, "go", "build", "-o", load, "./service")

	const requests, sample = 2000, 10
	handlers := map[string]bool{
		"main.(*api).getItem": true, "main.(*api).putItem": true,
		"main.(*api).search": true, "main.health.ServeHTTP": true,
	}
	for _, graceful := range []bool{true, false} {
		t.Run(fmt.Sprintf("graceful=%v", graceful), func(t *testing.T) {
			model := filepath.Join(tmp, fmt.Sprintf("model-%v.csv", graceful))
			before := len(r.Spans())
			args := []string{}
			if graceful {
				args = append(args, "-graceful")
			}
			cmd, url, stderr := startTraced(t, svc, args, r.GRPCAddr, sample, "OTEL_SERVICE_NAME=service", "METER_EXPORT_CSV="+model)
			got := run(t, example, load, "-load", url, "-n", fmt.Sprint(requests), "-c", "4")
			if !strings.HasPrefix(got, fmt.Sprintf("%d requests, 0 errors", requests)) {
				t.Errorf("load: %q", got)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var exit *exec.ExitError
			switch {
			case graceful && err != nil:
				t.Errorf("graceful service after SIGTERM: %v, want status 0; stderr:\n%s", err, stderr.String())
			case !graceful && !(errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM):
				t.Errorf("service after SIGTERM: %v, want killed by SIGTERM as the plain one is; stderr:\n%s", err, stderr.String())
			}

			rows := readModel(t, model)
			for h := range handlers {
				if rows[h] == "" {
					t.Errorf("no row for handler %s in the model", h)
				}
			}
			if meta, err := os.ReadFile(model + ".meta"); err != nil || !strings.Contains(string(meta), "final: true") {
				t.Errorf("model's .meta: %v, want final: true:\n%s", err, meta)
			}

			// Traces: grouped by id, each with exactly one span that has
			// no parent, a handler.
			spans := r.Spans()[before:]
			roots := map[string]string{}
			perTrace := map[string]int{}
			for _, s := range spans {
				id := fmt.Sprintf("%x", s.TraceId)
				perTrace[id]++
				if len(s.ParentSpanId) == 0 {
					if prev, dup := roots[id]; dup {
						t.Fatalf("trace %s has two roots: %s and %s", id, prev, s.Name)
					}
					roots[id] = s.Name
				}
			}
			byHandler := map[string]int{}
			for id := range perTrace {
				name, ok := roots[id]
				if !ok {
					t.Fatalf("trace %s has no root span", id)
				}
				if !handlers[name] {
					t.Errorf("trace %s rooted at %s, not at a request handler", id, name)
				}
				byHandler[name]++
			}
			// One in every SAMPLE firings of each handler starts a trace:
			// per handler, whole rounds of SAMPLE are exact; the stripes
			// of the count may hold up to one round each. The engine's
			// count says how many started; the receiver gets them all,
			// unless the export queue dropped some for want of room (the
			// receiver, under the race detector, can be slower than the
			// service), which the model's .meta counts.
			total := 0
			for _, n := range byHandler {
				total += n
			}
			meta, _ := os.ReadFile(model + ".meta")
			started, dropped := metaNumber(string(meta), "traces"), metaNumber(string(meta), "dropped_spans")
			lo, hi := int64(requests/sample-len(handlers)*8), int64(requests/sample)
			if started < lo || started > hi {
				t.Errorf("%d traces started, want %d to %d for %d requests at 1 in %d; the model's .meta:\n%s", started, lo, hi, requests, sample, meta)
			}
			if received := int64(total); received > started || dropped == 0 && received != started {
				t.Errorf("%d traces received (%v) of %d started, %d spans dropped", received, byHandler, started, dropped)
			}
			if byHandler["main.(*api).search"] == 0 || perTrace == nil {
				t.Errorf("no trace of the search handler: %v", byHandler)
			}
			deep := 0
			for id, n := range perTrace {
				if roots[id] == "main.(*api).search" && n > 1 {
					deep++
				}
			}
			if deep == 0 {
				t.Errorf("no trace of the search handler holds its callees")
			}
			t.Logf("%d spans in %d traces, by root: %v; %d search traces with callees", len(spans), total, byHandler, deep)
		})
	}
}

// metaNumber returns the number a .meta file gives key, or -1.
func metaNumber(meta, key string) int64 {
	for _, line := range strings.Split(meta, "\n") {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// run runs a command in dir and returns its standard output; it fails the
// test with the output when the command fails.
// buildExample instruments the example module's package pkg (./name) with
// meterinject -otlp through an overlay and builds it into a temporary
// folder, and starts a loopback OTLP receiver, closed when the test ends.
// It returns the binary, the example module's folder and the receiver.
func buildExample(t *testing.T, pkg string) (string, string, *otlptest.Receiver) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	example := filepath.Join(root, "example")
	mi, bin := filepath.Join(tmp, "meterinject"), filepath.Join(tmp, filepath.Base(pkg))
	overlay := filepath.Join(tmp, "overlay.json")
	run(t, filepath.Join(root, "cmd", "meterinject"), "go", "build", "-o", mi, ".")
	run(t, example, mi, "-otlp", "-overlay", overlay, "-cache", filepath.Join(tmp, "cache"), "-runtime", root, pkg)
	run(t, example, "go", "build", "-overlay", overlay, "-o", bin, pkg)
	r, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return bin, example, r
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

var csvRow = regexp.MustCompile(`^("[^"]*"|[^,]*),`)

// readModel returns the CSV model's rows by probe name.
func readModel(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("model: %v", err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		if m := csvRow.FindStringSubmatch(line); m != nil {
			rows[strings.Trim(m[1], `"`)] = line
		}
	}
	return rows
}

// tracedEnv is the environment of an instrumented program run with
// tracepoint on at 1 in sample, its traces sent over gRPC to the receiver
// at grpcAddr, and no metrics.
func tracedEnv(grpcAddr string, sample int) []string {
	return append(os.Environ(), "METER_EXPORT_OTLP=true",
		"METER_TRACEPOINT_ENABLED=true", fmt.Sprintf("METER_TRACEPOINT_SAMPLE=%d", sample),
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+grpcAddr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_METRICS_EXPORTER=none")
}

// startTraced starts the service bin with args, tracepoint on at one in
// sample and OTLP to a receiver at grpcAddr, and env more; it returns it
// once it has printed "listening on URL", with that URL and its standard
// error as it goes.
func startTraced(t *testing.T, bin string, args []string, grpcAddr string, sample int, env ...string) (*exec.Cmd, string, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(tracedEnv(grpcAddr, sample), env...)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("first line %q (%v), want the address; stderr:\n%s", line, err, stderr.String())
	}
	return cmd, url, stderr
}
