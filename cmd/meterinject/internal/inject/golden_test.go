package inject

import (
	"bytes"
	"flag"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// repoRoot is the runtime module, for the generated code's import: this
// checkout, or $METERINJECT_TEST_RUNTIME (a checkout of another version).
func repoRoot(t testing.TB) string {
	if d := os.Getenv("METERINJECT_TEST_RUNTIME"); d != "" {
		return d
	}
	d, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// runtimeGoLine is the runtime's go line: test modules declare it, the
// lowest that meterinject accepts.
func runtimeGoLine(t testing.TB) string {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := goLineOf("go.mod", b)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// readTree returns the files under dir, by relative path.
func readTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			t.Fatal(err)
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = strings.TrimSuffix(rel, ".txt")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m[rel] = b
		return nil
	})
	return m
}

// writeTree writes m under dir; with suffix ".txt", as testdata keeps
// Go files that gofmt must not see.
func writeTree(t testing.TB, dir string, m map[string][]byte, suffix string) {
	t.Helper()
	os.RemoveAll(dir)
	for rel, b := range m {
		p := filepath.Join(dir, rel+suffix)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func compareTree(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for rel, w := range want {
		g, ok := got[rel]
		if !ok {
			t.Errorf("%s: %s missing", what, rel)
			continue
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s: %s differs:\n--- got\n%s\n--- want\n%s", what, rel, g, w)
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			t.Errorf("%s: unexpected file %s:\n%s", what, rel, got[rel])
		}
	}
}

// caseOptions reads a case's flags file: one flag a line.
func caseOptions(t *testing.T, dir string) *Options {
	o := &Options{All: true}
	b, _ := os.ReadFile(filepath.Join(dir, "flags"))
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(l), "=")
		switch k {
		case "":
		case "-default":
			o.All = false
		case "-tests":
			o.Tests = true
		case "-small-max":
			n, _ := strconv.Atoi(v)
			o.SmallMax = n
		case "-shape":
			o.Shape = Shape(v)
		case "-otlp":
			o.OTLP = true
		case "-live":
			o.Live = true
		case "-include":
			o.Include = regexp.MustCompile(v)
		case "-exclude":
			o.Exclude = regexp.MustCompile(v)
		case "-goos":
			// handled by TestGolden: vet for these platforms too
		case "-model":
			o.Model = filepath.Join(dir, v)
		default:
			t.Fatalf("flags: unknown %q", l)
		}
	}
	return o
}

// TestGolden runs each case under testdata: in/ is instrumented into the
// expected out/, a second run changes nothing, the result vets against the
// real runtime, and -remove gives in/ back, byte for byte.
// vetReports runs go vet in dir (for goos, "" for this platform) and
// returns its reports, sorted, one a line; a failure that is not a report
// fails the test.
func vetReports(t *testing.T, dir, goos string) string {
	t.Helper()
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if goos != "" {
		cmd.Env = append(cmd.Env, "GOOS="+goos, "CGO_ENABLED=0")
	}
	out, err := cmd.CombinedOutput()
	if err == nil {
		return ""
	}
	var reports []string
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case vetReport.MatchString(l):
			reports = append(reports, l)
		case l != "" && !strings.HasPrefix(l, "# "):
			t.Fatalf("GOOS=%s go vet: %v\n%s", goos, err, out)
		}
	}
	sort.Strings(reports)
	return strings.Join(reports, "\n")
}

// vetReport matches a line of go vet's that reports a finding.
var vetReport = regexp.MustCompile(`^(\./)?[^ :]+\.go:\d+:\d+: `)

func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/in")
	if err != nil {
		t.Fatal(err)
	}
	root := repoRoot(t)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range cases {
		dir := filepath.Dir(in)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			input := readTree(t, in)
			work := t.TempDir()
			writeTree(t, work, input, "")
			gomod := "module example.com/golden\n\ngo " + runtimeGoLine(t) + "\n"
			os.WriteFile(filepath.Join(work, "go.mod"), []byte(gomod), 0o644)
			o := caseOptions(t, dir)
			o.Dir = work
			o.Runtime = root
			o.Patterns = []string{"./..."}
			o.Stderr = &bytes.Buffer{}
			if _, err := Run(o); err != nil {
				t.Fatal(err)
			}
			got := readTree(t, work)
			delete(got, "go.mod")
			if *update {
				writeTree(t, filepath.Join(dir, "out"), got, ".txt")
			}
			compareTree(t, "instrument", got, readTree(t, filepath.Join(dir, "out")))

			// What it adds is gofmt-clean, and every token of the input
			// keeps its position.
			for rel, b := range input {
				if !strings.HasSuffix(rel, ".go") {
					continue
				}
				if isGofmt(b) && !isGofmt(got[rel]) {
					t.Errorf("%s: gofmt-clean input, output is not", rel)
				}
				checkPositions(t, filepath.Join(work, rel), b, got[rel])
			}
			// The files it writes are gofmt-clean too.
			for rel, b := range got {
				if _, ok := input[rel]; !ok && strings.HasSuffix(rel, ".go") && !isGofmt(b) {
					t.Errorf("%s: written, not gofmt-clean", rel)
				}
			}

			// Idempotent.
			if _, err := Run(o); err != nil {
				t.Fatal(err)
			}
			again := readTree(t, work)
			delete(again, "go.mod")
			compareTree(t, "second run", again, got)

			// It compiles and vets against the runtime, and vet reports
			// what it reports of the input, no more, no less (a loop
			// variable captured in a file before go 1.22, say).
			plain := t.TempDir()
			writeTree(t, plain, input, "")
			os.WriteFile(filepath.Join(plain, "go.mod"), []byte(gomod), 0o644)
			want := vetReports(t, plain, "")
			mod := gomod + "\nrequire " + runtimeModule + " v0.0.0-00010101000000-000000000000\n\nreplace " + runtimeModule + " => " + root + "\n"
			os.WriteFile(filepath.Join(work, "go.mod"), []byte(mod), 0o644)
			os.WriteFile(filepath.Join(work, "go.sum"), gosum, 0o644)
			// Files excluded here must compile where they are built: "" is
			// this platform, then each GOOS the case names.
			for _, goos := range append([]string{""}, caseGOOS(dir)...) {
				got := vetReports(t, work, goos)
				if goos == "" && got != want {
					t.Errorf("go vet reports\n%s\nwhere of the input it reports\n%s", got, want)
				} else if goos != "" && got != "" {
					t.Errorf("GOOS=%s go vet:\n%s", goos, got)
				}
			}
			if o.Tests {
				// go test checks what vet does not: an example's output
				// comment is the last comment of its body.
				cmd := exec.Command("go", "test", "-count=1", "-run", "^$", "./...")
				cmd.Dir = work
				cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("go test: %v\n%s", err, out)
				}
			}
			os.WriteFile(filepath.Join(work, "go.mod"), []byte(gomod), 0o644)
			os.Remove(filepath.Join(work, "go.sum"))

			o.Remove = true
			if _, err := Run(o); err != nil {
				t.Fatal(err)
			}
			removed := readTree(t, work)
			delete(removed, "go.mod")
			compareTree(t, "remove gives the input back", removed, input)
		})
	}
}

func isGofmt(b []byte) bool {
	f, err := format.Source(b)
	return err == nil && bytes.Equal(f, b)
}

// caseGOOS returns the platforms a case's flags file lists with -goos=.
func caseGOOS(dir string) []string {
	b, _ := os.ReadFile(filepath.Join(dir, "flags"))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "-goos="); ok {
			return strings.Split(v, ",")
		}
	}
	return nil
}

// Sources instrumented by an earlier meterinject, whose functions hold
// f := Begin() and End(f), BeginAt(&f) and EndAt(&f), or BeginAt(&f) and
// End(f), are still given back byte for byte.
func TestStripOlderShape(t *testing.T) {
	for _, c := range []struct{ instrumented, plain, shape string }{
		{"instrumented.go.txt", "plain.go.txt", "meter__f := meter__probes[0].Begin()"},
		{"endat.go.txt", "endat-plain.go.txt", ".EndAt(&meter__f)"},
		{"beginat.go.txt", "beginat-plain.go.txt", "meter__probes[0].BeginAt(&meter__f)"},
		{"beginat-oneline.go.txt", "beginat-oneline-plain.go.txt", ".BeginAt(&meter__f)"},
	} {
		t.Run(c.instrumented, func(t *testing.T) { stripOlderShape(t, c.instrumented, c.plain, c.shape) })
	}
}

func stripOlderShape(t *testing.T, instrumented, plain, shape string) {
	src, err := os.ReadFile("testdata/oldshape/" + instrumented)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/oldshape/" + plain)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte(shape)) {
		t.Fatalf("testdata/oldshape/%s does not hold the older shape", instrumented)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "basic.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got, err := strip(fset, f, src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("stripped:\n%s\nwant:\n%s", got, want)
	}
}

// Trees instrumented by an earlier meterinject (testdata/oldshape/TREE/
// CASE/out, next to the plain in/) are given back byte for byte by
// -remove, registration files deleted whole. startstop holds what the
// version before the probe's methods were renamed wrote: On and Start at
// the top, Stop or EndAt at the exits, the defer shape's Active test, and
// the registration file's calls of probe.Notify and the like; twins, what
// the versions with metered twins wrote (legacy.go); panicking, the
// Panicking line called first, not deferred.
func TestRemoveOlderTrees(t *testing.T) {
	cases, err := filepath.Glob("testdata/oldshape/*/*/out")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no trees under testdata/oldshape")
	}
	// What the trees must hold between them, so that each older form is
	// taken out by a case.
	older := map[string]bool{
		".Start(&meter__f)": false, ".Stop(&meter__f)": false, ".EndAt(&meter__f)": false,
		".Active() {": false, "meter__probe.Notify\n": false, "meter__probe.Stop\n": false,
		twinMarker: false, "_ = meter__probes[0].Panicking()": false,
	}
	for _, out := range cases {
		for _, b := range readTree(t, out) {
			for k := range older {
				if bytes.Contains(b, []byte(k)) {
					older[k] = true
				}
			}
		}
	}
	for k, found := range older {
		if !found {
			t.Errorf("no tree under testdata/oldshape holds %q", k)
		}
	}
	for _, out := range cases {
		dir := filepath.Dir(out)
		name, _ := filepath.Rel("testdata/oldshape", dir)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			writeTree(t, work, readTree(t, out), "")
			os.WriteFile(filepath.Join(work, "go.mod"), []byte("module example.com/golden\n\ngo "+runtimeGoLine(t)+"\n"), 0o644)
			o := caseOptions(t, dir)
			o.Dir = work
			o.Runtime = repoRoot(t)
			o.Patterns = []string{"./..."}
			o.Stderr = &bytes.Buffer{}
			o.Remove = true
			if _, err := Run(o); err != nil {
				t.Fatal(err)
			}
			removed := readTree(t, work)
			delete(removed, "go.mod")
			compareTree(t, "remove gives the input back", removed, readTree(t, filepath.Join(dir, "in")))
		})
	}
}
