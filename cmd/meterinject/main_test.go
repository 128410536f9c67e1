package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runtimeDirForTest is the runtime checkout the tests build against.
func runtimeDirForTest(t *testing.T) string {
	if d := os.Getenv("METERINJECT_TEST_RUNTIME"); d != "" {
		return d
	}
	d, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// goLine returns the go line of the go.mod in dir.
func goLine(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("no go line")
	return ""
}

// TestCommand builds the command and runs it as a user would: -n on a
// small module prints a diff and the summary, writes nothing; a bad flag
// fails with a message; -h prints the usage with its examples.
func TestCommand(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "meterinject")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rt := runtimeDirForTest(t)
	dir := t.TempDir()
	src := "package p\n\nimport \"fmt\"\n\nfunc F(x int) int {\n\tfmt.Println(x)\n\treturn x\n}\n"
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo "+goLine(t, rt)+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644)

	cmd := exec.Command(exe, "-n", "-runtime", rt, "./...")
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("meterinject -n: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "+\t_ = meter__probes[0].On() && meter__probes[0].Start(&meter__f)") ||
		!strings.Contains(stdout.String(), "+\t_ = meter__f != nil && meter__probes[0].Stop(&meter__f)") {
		t.Errorf("no diff on stdout:\n%s", stdout.String())
	}
	if want := "meterinject: 1 package, 1 file, 1 function instrumented"; !strings.Contains(stderr.String(), want) {
		t.Errorf("summary: got %q, want %q", stderr.String(), want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "p.go")); string(b) != src {
		t.Error("-n wrote p.go")
	}

	for _, bad := range [][]string{{"-shape", "twin"}, {"-include", "("}} {
		cmd = exec.Command(exe, bad...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), bad[0]) {
			t.Errorf("%v: err %v, output %s", bad, err, out)
		}
	}

	cmd = exec.Command(exe, "-h")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("-h: %v", err)
	}
	for _, want := range []string{"//go:generate meterinject", "-overlay /tmp/o.json", "-model model.csv", "-otlp", "-live", "-shape"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("-h lacks %q:\n%s", want, out)
		}
	}
}
