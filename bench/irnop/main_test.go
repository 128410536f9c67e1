package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A profile in callgrind's compressed form: absolute, relative and repeated
// positions, and a call whose inclusive cost must not be counted again.
const profile = `version: 1
positions: instr line
events: Ir
fn=(1) main.f
0x1000 10 5
+4 11 7
* * 1
calls=2 0x2000 20
+2 12 1000
+2 13 3
fn=(2) main.g
0x2000 20 40
-0x1000 10 2
`

func TestCount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cg.out")
	if err := os.WriteFile(path, []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	// NOPs at 0x1004 (7 + 1, the * line) and 0x1000 (5, and 2 in g).
	total, nop, err := count(path, map[uint64]bool{0x1004: true, 0x1000: true})
	if err != nil {
		t.Fatal(err)
	}
	if total != 5+7+1+3+40+2 || nop != 7+1+5+2 {
		t.Fatalf("total %d nop %d, want %d %d", total, nop, 5+7+1+3+40+2, 7+1+5+2)
	}
}

func TestCountNeedsInstructions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cg.out")
	if err := os.WriteFile(path, []byte("positions: line\nevents: Ir\nfn=(1) f\n10 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := count(path, nil); err == nil {
		t.Fatal("a profile without instruction positions was accepted")
	}
}
