// Package runinst builds an adversarial program instrumented by
// meterinject and runs it, for tests that hold its model to the calls the
// program counted itself (bench/adversarial/internal/truth).
package runinst

import (
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Run is one run of an instrumented program: its model's rows and its true
// calls, by function, and its .meta file.
type Run struct {
	Rows, Calls map[string]int64
	Meta        string
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// Root is the repository's root, from a program's folder under
// bench/adversarial.
const Root = "../../.."

// meterinject builds cmd/meterinject once per test binary.
func meterinject(t *testing.T, root string) string {
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "runinst")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "meterinject"), ".")
		cmd.Dir = filepath.Join(root, "cmd", "meterinject")
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &exec.ExitError{Stderr: out}
		}
	})
	if buildErr != nil {
		t.Fatalf("building meterinject: %v", buildErr)
	}
	return filepath.Join(binDir, "meterinject")
}

// Instrumented instruments the program in bench/adversarial/name with
// meterinject (with -all if all), builds it through -overlay, and runs it
// with env added to its environment and args: its model and its truth are
// read back.
func Instrumented(t *testing.T, name string, all bool, env []string, args ...string) Run {
	t.Helper()
	if testing.Short() {
		t.Skip("builds meterinject and the program")
	}
	root, err := filepath.Abs(Root)
	if err != nil {
		t.Fatal(err)
	}
	mi := meterinject(t, root)
	dir := t.TempDir()
	overlay := filepath.Join(dir, "overlay.json")
	pkg := "./bench/adversarial/" + name
	flags := []string{"-overlay", overlay, "-cache", filepath.Join(dir, "cache"), "-runtime", root, pkg}
	if all {
		flags = append([]string{"-all"}, flags...)
	}
	run(t, root, mi, flags...)
	bin := filepath.Join(dir, name)
	run(t, root, "go", "build", "-overlay", overlay, "-o", bin, pkg)
	model, truth := filepath.Join(dir, "m.csv"), filepath.Join(dir, "truth.csv")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), env...), "METER_EXPORT_CSV="+model, "ADVERSARIAL_TRUTH="+truth)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	meta, err := os.ReadFile(model + ".meta")
	if err != nil {
		t.Fatal(err)
	}
	return Run{Rows: readCalls(t, model), Calls: readCalls(t, truth), Meta: string(meta)}
}

// CheckCounts fails t for each row whose count is not its function's true
// calls, and, if whole, for each function with no row.
func (r Run) CheckCounts(t *testing.T, whole bool) {
	t.Helper()
	if len(r.Rows) == 0 {
		t.Fatal("no rows in the model")
	}
	for probe, n := range r.Rows {
		if want, ok := r.Calls[probe]; !ok || n != want {
			t.Errorf("%s: %d calls in the model, %d true", probe, n, want)
		}
	}
	if whole {
		for fn := range r.Calls {
			if _, ok := r.Rows[fn]; !ok {
				t.Errorf("%s: no row", fn)
			}
		}
	}
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// readCalls reads the first two columns of a model or a truth file:
// function, calls; lines starting with # are left out.
func readCalls(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]int64{}
	for _, rec := range recs[1:] {
		if len(rec) < 2 || strings.HasPrefix(rec[0], "#") {
			continue
		}
		n, err := strconv.ParseInt(rec[1], 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[rec[0]] = n
	}
	return out
}
