package probe

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meterio/meter/meter"
)

// The end-to-end tests run this test binary again as an instrumented
// program, configured only by environment variables, as a user's would be.
const childEnv = "PROBE_E2E_CHILD"

var e2eProbes [3]Probe

// e2eProgram is the instrumented program: main → work → leaf, five times.
func e2eProgram() {
	Register(e2eProbes[:], "example.com/e2e.main", "example.com/e2e.work", "example.com/e2e.leaf")
	checkExports() // what generated code does at the start of main
	main := func() {
		f := e2eProbes[0].Unmetered()
		_ = e2eProbes[0].On() && e2eProbes[0].Begin(&f)
		for range 2 {
			func() {
				w := e2eProbes[1].Unmetered()
				_ = e2eProbes[1].On() && e2eProbes[1].Begin(&w)
				func() {
					l := e2eProbes[2].Unmetered()
					_ = e2eProbes[2].On() && e2eProbes[2].Begin(&l)
					_ = l != 0 && e2eProbes[2].End(&l)
				}()
				time.Sleep(100 * time.Microsecond)
				_ = w != 0 && e2eProbes[1].End(&w)
			}()
		}
		_ = f != 0 && e2eProbes[0].End(&f)
	}
	first := e2eProbes[0].Unmetered()
	_ = e2eProbes[0].On() && e2eProbes[0].Begin(&first)
	e2eProbes[0].End(&first) // a probe starts traces once a firing of it has ended
	for range 5 {
		main()
	}
	Shutdown()
	json.NewEncoder(os.Stdout).Encode(meter.Take())
}

func runE2E(t *testing.T, env ...string) (model meter.Snapshot, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExportsEndToEnd$", "-test.count=1")
	// Every firing of main outside a trace starts one.
	cmd.Env = append(os.Environ(), append(env, childEnv+"=1", "METER_HOTSPOT_ENABLED=false", "METER_TRACEPOINT_ENABLED=true",
		"METER_TRACEPOINT_SAMPLE=1", "METER_TRACEPOINT_INCLUDE=^example.com/e2e.main$")...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the program failed: %v\n%s\n%s", err, out, errb.String())
	}
	i := strings.LastIndex(string(out), "{\"Taken\"")
	if i < 0 {
		t.Fatalf("no model in the output:\n%s", out)
	}
	if err := json.NewDecoder(strings.NewReader(string(out[i:]))).Decode(&model); err != nil {
		t.Fatal(err)
	}
	return model, errb.String()
}

// TestExportsEndToEnd: METER_EXPORT_PPROF and METER_EXPORT_CSV set; at
// Shutdown the profile holds the traced call paths (read with go tool
// pprof), and the CSV and its .meta are written. The otlp module runs the
// same program with OTLP.
func TestExportsEndToEnd(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		e2eProgram()
		return
	}
	dir := t.TempDir()
	prof, csvPath := filepath.Join(dir, "meter.pprof"), filepath.Join(dir, "meter.csv")
	model, stderr := runE2E(t, "METER_EXPORT_PPROF="+prof, "METER_EXPORT_CSV="+csvPath)
	if stderr != "" {
		t.Errorf("stderr: %q", stderr)
	}
	rows := map[string]meter.Row{}
	for _, rw := range model.Rows {
		rows[rw.Probe] = rw
	}
	if rows["example.com/e2e.work"].Count != 10 || rows["example.com/e2e.leaf"].Count != 10 || rows["example.com/e2e.main"].Count != 6 {
		t.Fatalf("model: %+v", model.Rows)
	}
	if csv := readModel(t, csvPath); csv["example.com/e2e.leaf"][1] != "10" {
		t.Errorf("CSV: %v", csv)
	}
	meta, err := os.ReadFile(csvPath + ".meta")
	if err != nil || !strings.Contains(string(meta), "\ndropped_spans: 0\n") || !strings.Contains(string(meta), "\ntraces: 5\n") {
		t.Errorf("meta: %v\n%s", err, meta)
	}
	out, err := exec.Command("go", "tool", "pprof", "-traces", "-sample_index=count", "-tagfocus=source=trace", prof).CombinedOutput()
	want := fmt.Sprintf("10   example.com/e2e.leaf\n%[1]sexample.com/e2e.work\n%[1]sexample.com/e2e.main\n", strings.Repeat(" ", 13))
	if err != nil || !strings.Contains(string(out), want) {
		t.Errorf("go tool pprof -traces: %v\n%s\nwant a sample\n%s", err, out, want)
	}
}

// TestOTLPWithoutTheModule: METER_EXPORT_OTLP=true in a program built
// without the otlp module is one line on stderr saying how to add it; the
// program runs on, and its other exports are written.
func TestOTLPWithoutTheModule(t *testing.T) {
	csvPath := filepath.Join(t.TempDir(), "meter.csv")
	_, stderr := runE2E(t, "METER_EXPORT_OTLP=true", "METER_EXPORT_CSV="+csvPath)
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `import _ "github.com/meterio/meter/otlp"`) {
		t.Errorf("stderr %q: want one line saying how to add OTLP", stderr)
	}
	if _, err := os.Stat(csvPath); err != nil {
		t.Error(err)
	}
}

// TestBadExportPathsAtStart: a pprof path that is a directory, and a CSV
// path whose folder does not exist, are each one line, at start, with the
// user's path; nothing is replaced, and nothing more is said at exit.
func TestBadExportPathsAtStart(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "missing", "m.csv")
	_, stderr := runE2E(t, "METER_EXPORT_PPROF="+dir, "METER_EXPORT_CSV="+csvPath)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(stderr, "METER_EXPORT_PPROF: cannot write "+dir+": it is a directory") ||
		!strings.Contains(stderr, "METER_EXPORT_CSV: cannot write "+csvPath+": the folder "+filepath.Dir(csvPath)+" does not exist") {
		t.Errorf("stderr %q", stderr)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("the directory given as the profile's path: %v %v", fi, err)
	}
}
