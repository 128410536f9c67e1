package probe

import (
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Properties are read once per process, so each case runs this test binary
// again as a child with its own environment.
func TestMain(m *testing.M) {
	if os.Getenv("PROBE_CHILD") != "" {
		child(os.Getenv("PROBE_CHILD"))
		return
	}
	os.Exit(m.Run())
}

var probes [3]Probe

func work(i int, d time.Duration, nested func()) {
	f := probes[i].Begin()
	defer probes[i].End(f)
	if d > 0 {
		time.Sleep(d)
	}
	if nested != nil {
		nested()
	}
}

func child(mode string) {
	defer Shutdown()
	Register(probes[:], "example.com/app.main", "example.com/app.(*Server).handle", "example.com/app.parse")
	switch mode {
	case "run":
		for i := 0; i < 3; i++ {
			work(0, 0, func() { work(1, 2*time.Millisecond, func() { work(2, 0, nil) }) })
		}
	case "interval":
		for i := 0; i < 5; i++ {
			work(1, 30*time.Millisecond, nil)
		}
	case "on":
		if probes[0].on.Load() == 0 || probes[0].Name() != "example.com/app.main" {
			os.Exit(3)
		}
	case "off":
		if probes[0].on.Load() != 0 {
			os.Exit(3)
		}
		work(0, 0, nil)
	}
}

func runChild(t *testing.T, mode string, env ...string) (stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, "PROBE_CHILD="+mode)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", mode, err, out)
	}
	return string(out)
}

func readModel(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, r := range recs[1:] {
		rows[r[0]] = r
	}
	return rows
}

func TestShutdownWritesTheModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.csv")
	if out := runChild(t, "run", "METER_EXPORT_CSV="+path, "METER_CLOCK=mono"); out != "" {
		t.Fatalf("unexpected output: %q", out)
	}
	rows := readModel(t, path)
	if len(rows) != 3 {
		t.Fatalf("rows: %v", rows)
	}
	h := rows["example.com/app.(*Server).handle"]
	if h[1] != "3" || h[8] != "hotspot" {
		t.Fatalf("handle row %v: want count 3, label hotspot", h)
	}
	if rows["example.com/app.parse"][1] != "3" || rows["example.com/app.main"][1] != "3" {
		t.Fatalf("rows: %v", rows)
	}
}

func TestIntervalWritesWhileRunning(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.csv")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROBE_CHILD=interval", "METER_EXPORT_CSV="+path, "METER_EXPORT_INTERVAL=20ms")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The model appears before the program ends (it runs for 150 ms).
	var seen bool
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && cmd.ProcessState == nil; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			seen = true
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Fatal("no model written during the run")
	}
	if r := readModel(t, path)["example.com/app.(*Server).handle"]; r == nil || r[1] != "5" {
		t.Fatalf("final model row %v, want count 5", r)
	}
}

func TestUnwritableModelPathIsReportedNotFatal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "model.csv")
	out := runChild(t, "run", "METER_EXPORT_CSV="+path)
	if !strings.Contains(out, "cannot write "+path) || strings.Count(out, "\n") != 1 {
		t.Fatalf("stderr %q: want one line naming the path", out)
	}
}

func TestBadPropertyKeepsRunning(t *testing.T) {
	out := runChild(t, "on", "METER_HOTSPOT_INITIAL=lots")
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "METER_HOTSPOT_INITIAL") {
		t.Fatalf("stderr %q", out)
	}
}

func TestMeterEnabledFalseTurnsEveryProbeOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.csv")
	runChild(t, "off", "METER_ENABLED=false", "METER_EXPORT_CSV="+path)
	if rows := readModel(t, path); len(rows) != 0 {
		t.Fatalf("metering off, yet rows: %v", rows)
	}
}

func TestUnregisteredProbeIsInert(t *testing.T) {
	var p Probe
	if p.on.Load() != 0 || p.Name() != "" {
		t.Fatal("zero Probe is on or named")
	}
	if f := p.Begin(); f.Active() {
		t.Fatal("a zero Probe began an active firing")
	}
	p.End(nil) // must not panic
}
