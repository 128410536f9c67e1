// Command irnop splits a callgrind profile's instruction count into the
// program's instructions and the NOPs among them:
//
//	irnop BINARY CALLGRIND.OUT   → "total N nop M"
//
// The profile must come from valgrind --tool=callgrind --dump-instr=yes.
// The Go assembler pads code with NOPs so that no jump crosses or ends on a
// 32-byte boundary, so a change anywhere in a binary moves the padding of
// unrelated loops, and callgrind counts those NOPs as executed
// instructions: two builds that run the same instructions can differ by a
// percent. bench/inject-figures.sh reports both counts.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: irnop BINARY CALLGRIND.OUT")
		os.Exit(2)
	}
	nops, err := nopAddrs(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "irnop:", err)
		os.Exit(1)
	}
	total, nop, err := count(os.Args[2], nops)
	if err != nil {
		fmt.Fprintln(os.Stderr, "irnop:", err)
		os.Exit(1)
	}
	fmt.Printf("total %d nop %d\n", total, nop)
}

// nopAddrs returns the addresses of the NOP instructions in a Go binary,
// from go tool objdump's listing (file:line, address, bytes, instruction,
// separated by tabs).
func nopAddrs(bin string) (map[uint64]bool, error) {
	out, err := exec.Command("go", "tool", "objdump", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool objdump %s: %v", bin, err)
	}
	nops := map[uint64]bool{}
	for _, line := range bytes.Split(out, []byte("\n")) {
		var f []string
		for _, s := range strings.Split(string(line), "\t") {
			if s != "" {
				f = append(f, s)
			}
		}
		if len(f) < 4 || !strings.HasPrefix(f[1], "0x") || !strings.HasPrefix(f[3], "NOP") {
			continue
		}
		if a, err := strconv.ParseUint(f[1][2:], 16, 64); err == nil {
			nops[a] = true
		}
	}
	if len(nops) == 0 {
		return nil, fmt.Errorf("no NOP found in %s: not a Go binary?", bin)
	}
	return nops, nil
}

// count sums the Ir of every cost line of the profile, and of those at a
// NOP's address. Cost lines read "position line Ir"; a position is an
// address, or +n / -n relative to the last one, or * for the same. The line
// after calls= is the call's inclusive cost, counted at the callee already.
func count(path string, nops map[uint64]bool) (total, nop int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var addr uint64
	call, instr := false, false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "positions:") {
			instr = strings.Contains(line, "instr")
			continue
		}
		if strings.HasPrefix(line, "calls=") {
			call = true
			continue
		}
		if line == "" || !strings.ContainsRune("0123456789+-*", rune(line[0])) {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			continue
		}
		if a, ok := position(fields[0], addr); ok {
			addr = a
		}
		if call {
			call = false
			continue
		}
		ir, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil {
			continue
		}
		total += ir
		if nops[addr] {
			nop += ir
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if !instr {
		return 0, 0, fmt.Errorf("%s has no instruction positions: run callgrind with --dump-instr=yes", path)
	}
	return total, nop, nil
}

func position(s string, last uint64) (uint64, bool) {
	num := func(s string) (uint64, bool) {
		base := 10
		if strings.HasPrefix(s, "0x") {
			s, base = s[2:], 16
		}
		v, err := strconv.ParseUint(s, base, 64)
		return v, err == nil
	}
	switch {
	case s == "*":
		return last, true
	case s[0] == '+':
		v, ok := num(s[1:])
		return last + v, ok
	case s[0] == '-':
		v, ok := num(s[1:])
		return last - v, ok
	}
	return num(s)
}
