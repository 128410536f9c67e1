package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommand builds the command and runs it as a user would: -n on a
// small module prints a diff and the summary, writes nothing; a bad flag
// fails with a message.
func TestCommand(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "meterinject")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	src := "package p\n\nfunc F(x int) int {\n\tprintln(x)\n\treturn x\n}\n"
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644)

	cmd := exec.Command(exe, "-n", "-all", "./...")
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("meterinject -n: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "+\tif meter__probes[0].On() {") {
		t.Errorf("no diff on stdout:\n%s", stdout.String())
	}
	if want := "meterinject: 1 packages, 1 files, 1 functions instrumented"; !strings.Contains(stderr.String(), want) {
		t.Errorf("summary: got %q, want %q", stderr.String(), want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "p.go")); string(b) != src {
		t.Error("-n wrote p.go")
	}

	cmd = exec.Command(exe, "-shape", "bogus")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "-shape") {
		t.Errorf("a bad -shape: err %v, output %s", err, out)
	}
}
