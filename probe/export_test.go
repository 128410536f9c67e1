package probe

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/internal/otlpreceiver"
	"github.com/meterio/meter/meter"
)

// The end-to-end test runs this test binary again as an instrumented
// program, configured only by environment variables, as a user's would be.
const childEnv = "METER_EXPORT_E2E_CHILD"

var e2eProbes [3]Probe

// gate starts a trace at every firing of root: it stands in for the
// tracepoint and flowcheck extensions, which chain() wires when they exist.
type gate struct{ root *meter.Probe }

func (g gate) Start(_ *meter.Goroutine, p *meter.Probe) bool { return p == g.root }
func (gate) Ended(*meter.Goroutine)                          {}

// e2eProgram is the instrumented program: main → work → leaf, five times.
func e2eProgram() {
	Register(e2eProbes[:], "example.com/e2e.main", "example.com/e2e.work", "example.com/e2e.leaf")
	meter.Configure(meter.Chain{Enabled: true, Gates: []meter.Gate{gate{e2eProbes[0].m}}, Sink: exports.pipeline})
	e2eProbes[0].Begin().End() // a probe starts traces once a firing of it has ended
	for range 5 {
		f := e2eProbes[0].Begin()
		for range 2 {
			w := e2eProbes[1].Begin()
			e2eProbes[2].Begin().End()
			time.Sleep(100 * time.Microsecond)
			w.End()
		}
		f.End()
	}
	Shutdown()
	json.NewEncoder(os.Stdout).Encode(meter.Take())
}

// TestExportsEndToEnd: METER_EXPORT_OTLP, METER_EXPORT_PPROF and
// METER_EXPORT_CSV set; traces and the model reach a real OTLP receiver at
// Shutdown, and the profile and the CSV are written.
func TestExportsEndToEnd(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		e2eProgram()
		return
	}
	r, err := otlpreceiver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExportsEndToEnd$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1",
		"METER_EXPORT_OTLP=true",
		"METER_EXPORT_PPROF="+filepath.Join(dir, "meter.pprof"),
		"METER_EXPORT_CSV="+filepath.Join(dir, "meter.csv"),
		"METER_HOTSPOT_ENABLED=false",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+r.GRPCAddr,
		"OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_SERVICE_NAME=e2e")
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the program failed: %v\n%s", err, out)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the program took %v", took)
	}
	i := strings.LastIndex(string(out), "{\"Taken\"")
	if i < 0 {
		t.Fatalf("no model in the output:\n%s", out)
	}
	var model meter.Snapshot
	if err := json.NewDecoder(strings.NewReader(string(out[i:]))).Decode(&model); err != nil {
		t.Fatal(err)
	}
	rows := map[string]meter.Row{}
	for _, rw := range model.Rows {
		rows[rw.Probe] = rw
	}
	if rows["example.com/e2e.work"].Count != 10 || rows["example.com/e2e.leaf"].Count != 10 || rows["example.com/e2e.main"].Count != 5 {
		t.Fatalf("model: %+v", model.Rows)
	}

	spans := r.Spans()
	if len(spans) != 25 {
		t.Errorf("received %d spans, want 25", len(spans))
	}
	ids := map[string]string{} // span id → name
	for _, s := range spans {
		ids[string(s.TraceId)+string(s.SpanId)] = s.Name
		if s.Resource["service.name"] != "e2e" {
			t.Errorf("service.name %q", s.Resource["service.name"])
		}
	}
	want := map[string]string{"example.com/e2e.main": "", "example.com/e2e.work": "example.com/e2e.main", "example.com/e2e.leaf": "example.com/e2e.work"}
	for _, s := range spans {
		parent := ""
		if len(s.ParentSpanId) > 0 {
			parent = ids[string(s.TraceId)+string(s.ParentSpanId)]
		}
		if parent != want[s.Name] {
			t.Errorf("%s: parent %q, want %q", s.Name, parent, want[s.Name])
		}
	}
	for name, rw := range rows {
		if got, ok := r.Sum(export.MetricCount, export.AttrProbe, name); !ok || got != rw.Count {
			t.Errorf("%s{%s} = %d (%v), the model says %d", export.MetricCount, name, got, ok, rw.Count)
		}
		if got, ok := r.Sum(export.MetricInherentTotal, export.AttrProbe, name); !ok || got != rw.InherentTotal {
			t.Errorf("%s{%s} = %d (%v), the model says %d", export.MetricInherentTotal, name, got, ok, rw.InherentTotal)
		}
	}

	b, err := os.ReadFile(filepath.Join(dir, "meter.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profile.ParseData(b)
	if err != nil {
		t.Fatal(err)
	}
	var leafCount int64
	for _, s := range prof.Sample {
		if len(s.Location) == 3 && s.Location[0].Line[0].Function.Name == "example.com/e2e.leaf" &&
			s.Location[2].Line[0].Function.Name == "example.com/e2e.main" {
			leafCount += s.Value[0]
		}
	}
	if leafCount != 10 {
		t.Errorf("the profile has %d firings of main;work;leaf, want 10", leafCount)
	}
	if _, err := os.Stat(filepath.Join(dir, "meter.csv")); err != nil {
		t.Error(err)
	}
}
