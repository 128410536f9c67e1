package inject

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.26\n"
	for name, src := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestErrorLeavesFilesAlone: a file that does not parse stops the run
// with file:line:col, and no file is written.
func TestErrorLeavesFilesAlone(t *testing.T) {
	good := "package p\n\nfunc F(x int) int {\n\tprintln(x)\n\treturn x\n}\n"
	bad := "package p\n\nfunc G( {\n"
	dir := writeModule(t, map[string]string{"a.go": good, "b.go": bad})
	_, err := Run(&Options{Dir: dir, All: true, Stderr: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "b.go:3:") {
		t.Fatalf("want an error at b.go:3:col, got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(b) != good {
		t.Errorf("a.go was written:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "meter_probes_gen.go")); err == nil {
		t.Error("the generated file was written")
	}
}

// TestDryRun prints a diff and writes nothing.
func TestDryRun(t *testing.T) {
	src := "package p\n\nfunc F(x int) int {\n\tprintln(x)\n\treturn x\n}\n"
	dir := writeModule(t, map[string]string{"a.go": src})
	var out bytes.Buffer
	sum, err := Run(&Options{Dir: dir, All: true, DryRun: true, Stdout: &out, Stderr: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "+\tif meter__probes[0].On() {") || !strings.Contains(out.String(), "meter_probes_gen.go") {
		t.Errorf("diff lacks the probe or the generated file:\n%s", out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(b) != src {
		t.Error("a.go was written")
	}
	if sum.Instrumented != 1 || !strings.Contains(sum.String(), "1 functions instrumented") {
		t.Errorf("summary: %s", sum)
	}
}

// TestRefuseModCache: in place, a dependency in the module cache is refused.
func TestRefuseModCache(t *testing.T) {
	err := refuseModCache([]*pkgJob{{dir: "/mod/x@v1", module: nil}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestParseModel(t *testing.T) {
	csv := "probe,count,total_ns,avg_ns,inherent_total_ns,inherent_avg_ns,min_ns,max_ns,label\n" +
		"a.F,1,1,1,1,1,1,1,hotspot\n" +
		"a.G,1,1,1,1,1,1,1,disabled\n" +
		"\"a.(*T).M\",1,1,1,1,1,1,1,budget\n" +
		"a.H,1,1,1,1,1,1,1,\n"
	m, err := parseModel(strings.NewReader(csv), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || !m["a.G"] || !m["a.(*T).M"] {
		t.Errorf("got %v", m)
	}
	if _, err := parseModel(strings.NewReader("x,y\n"), "m.csv"); err == nil {
		t.Error("a CSV without probe and label columns was accepted")
	}
}

func TestSummary(t *testing.T) {
	s := &Summary{Packages: 2, Files: 3, Instrumented: 4, Skipped: map[string]int{skipInline: 5, skipGenerated: 1}}
	want := "meterinject: 2 packages, 3 files, 4 functions instrumented; skipped: 1 generated file, 5 inlinable"
	if s.String() != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

func TestIsRuntime(t *testing.T) {
	for path, want := range map[string]bool{
		"github.com/meterio/meter/probe":      true,
		"github.com/meterio/meter":            true,
		"github.com/meterio/meter/example":    false,
		"github.com/meterio/meterx":           false,
		"github.com/yuin/goldmark/parser":     false,
		"github.com/meterio/meter/meter/deep": true,
	} {
		if isRuntime(path) != want {
			t.Errorf("isRuntime(%s) = %v", path, !want)
		}
	}
}
