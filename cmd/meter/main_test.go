package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const model = `probe,count,total_ns,avg_ns,inherent_total_ns,inherent_avg_ns,min_ns,max_ns,label
example.com/app.handle,4,4000000,1000000,2000000,500000,800000,1200000,hotspot
example.com/app.small,1000,900000,900,900000,900,100,5000,disabled
`

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func meter(args ...string) (code int, stdout, stderr string) {
	var o, e strings.Builder
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	csv := write(t, filepath.Join(dir, "model.csv"), model)
	write(t, csv+".meta", "taken: 2026-11-23T10:00:02Z\nclock: tsc\nextensions: hotspot(threshold=10000ns inherent=2000ns initial=1000)\n")

	code, out, errs := meter("report", csv)
	page := filepath.Join(dir, "model.html")
	if code != 0 || out != page+"\n" || errs != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"example.com/</span>app.<wbr>handle", "app.small", `<tr data-key="clock"><td>clock</td>`, `<p id="flame-none">No profile.`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if want, ok := newFileMode(); ok {
		if fi, _ := os.Stat(page); fi.Mode().Perm() != want {
			t.Errorf("page mode %v, want %v (0644 less the umask)", fi.Mode().Perm(), want)
		}
	}

	// Flags after the file, as the usage line has them; an existing
	// file keeps its mode; no temporary file is left behind.
	other := write(t, filepath.Join(dir, "other.html"), "old")
	os.Chmod(other, 0o600)
	if code, out, errs := meter("report", csv, "-o", other); code != 0 || out != other+"\n" || errs != "" {
		t.Fatalf("-o after the file: exit %d, %q, %q", code, out, errs)
	}
	if fi, _ := os.Stat(other); fi.Mode().Perm() != 0o600 || fi.Size() < 1000 {
		t.Errorf("replaced page: mode %v size %d", fi.Mode().Perm(), fi.Size())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}

	// -o - writes the page to standard output.
	if code, out, _ := meter("report", "-o", "-", csv); code != 0 || !strings.HasPrefix(out, "<!DOCTYPE html>") {
		t.Fatalf("-o -: exit %d, %.40q", code, out)
	}
}

// A path that is not a regular file is never replaced; a link to a
// regular file is written through.
func TestReportOutputPaths(t *testing.T) {
	dir := t.TempDir()
	csv := write(t, filepath.Join(dir, "model.csv"), model)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	devLink := filepath.Join(dir, "null.html")
	os.Symlink(os.DevNull, devLink)
	for path, want := range map[string]string{
		sub:     "meter: cannot write " + sub + ": it is a directory, not a regular file\n",
		devLink: "meter: cannot write " + devLink + ": a symbolic link to " + os.DevNull + ", which is not a regular file\n",
	} {
		if code, _, errs := meter("report", "-o", path, csv); code != 1 || errs != want {
			t.Errorf("-o %s: exit %d, stderr %q, want %q", path, code, errs, want)
		}
	}
	if fi, err := os.Lstat(devLink); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link to the device was replaced")
	}

	target := write(t, filepath.Join(dir, "target.html"), "old")
	link := filepath.Join(dir, "link.html")
	os.Symlink(target, link)
	if code, _, errs := meter("report", "-o", link, csv); code != 0 {
		t.Fatalf("through a link: exit %d, %s", code, errs)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link became a file")
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), "app.handle") {
		t.Error("the link's target was not written")
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	csv := write(t, filepath.Join(dir, "model.csv"), model)
	bad := write(t, filepath.Join(dir, "bad.csv"), model+"a.f,one,1,1,1,1,1,1,\n")
	badMeta := write(t, filepath.Join(dir, "m2.csv"), model)
	write(t, badMeta+".meta", "clock: tsc\nnot a field\n")
	notProfile := write(t, filepath.Join(dir, "x.pprof"), "hello")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", bad}, 1, "meter: " + bad + `:4: count "one" is not a whole number of at least 0` + "\n"},
		{[]string{"report", badMeta}, 1, "meter: " + badMeta + `.meta:2: "not a field": want key: value` + "\n"},
		{[]string{"report", filepath.Join(dir, "none.csv")}, 1, "meter: " + filepath.Join(dir, "none.csv") + ": no such file or directory\n"},
		{[]string{"report", csv, "-pprof", filepath.Join(dir, "none.pprof")}, 1, "meter: " + filepath.Join(dir, "none.pprof") + ": no such file or directory\n"},
		{[]string{"report", "-pprof", notProfile, csv}, 1, "meter: " + notProfile + ": not a pprof profile"},
		{[]string{"report"}, 2, "meter: report takes one model CSV, got 0\nusage:"},
		{[]string{"report", csv, csv}, 2, "meter: report takes one model CSV, got 2\n"},
		{[]string{"report", "-x", csv}, 2, "flag provided but not defined: -x"},
		{[]string{"frobnicate"}, 2, `meter: unknown command "frobnicate"`},
		{nil, 2, "usage:\n  meter report"},
	} {
		code, _, errs := meter(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("meter %q: exit %d, stderr %q; want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.html")); err == nil {
		t.Error("a page was written for a model that could not be read")
	}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	old := write(t, filepath.Join(dir, "old.csv"), model)
	cur := write(t, filepath.Join(dir, "new.csv"), strings.Replace(model, "4,4000000,1000000", "5,4000000,800000", 1))
	code, out, errs := meter("compare", old, cur)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := "probe                   calls        delta    inclusive/call   delta    inherent/call    delta    label\n" +
		"example.com/app.handle  4 → 5        +25.00%  1.00ms → 800µs   -20.00%  500µs → 400µs    -20.00%  hotspot\n" +
		"example.com/app.small   1000 → 1000  ±0.00%   900ns → 900ns    ±0.00%   900ns → 900ns    ±0.00%   disabled\n" +
		"geomean                                       30.0µs → 26.8µs  -10.56%  21.2µs → 19.0µs  -10.56%\n" +
		"one run a side: no significance can be given, only the changes; the order is the old model's. " +
		"Give each side a directory of models from several runs (5 or more) for p-values across runs\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}

	badHeader := write(t, filepath.Join(dir, "bad.csv"), "probe,count\n")
	if code, _, errs := meter("compare", old, badHeader); code != 1 || errs != "meter: "+badHeader+`:1: header "probe,count": want `+
		"probe,count,total_ns,avg_ns,inherent_total_ns,inherent_avg_ns,min_ns,max_ns,label\n" {
		t.Fatalf("bad header: exit %d, %q", code, errs)
	}
	write(t, old+".meta", "no colon here\n")
	if code, _, errs := meter("compare", old, cur); code != 1 || !strings.HasPrefix(errs, "meter: "+old+".meta:1: ") {
		t.Fatalf("bad .meta: exit %d, %q", code, errs)
	}
	if code, _, _ := meter("compare", old); code != 2 {
		t.Fatalf("one file: exit %d", code)
	}
	for _, args := range [][]string{{"-test", "ttest"}, {"-alpha", "0"}, {"-alpha", "1.5"}} {
		if code, _, errs := meter(append([]string{"compare"}, append(args, old, cur)...)...); code != 2 || !strings.Contains(errs, args[0]) {
			t.Errorf("compare %v: exit %d, %q", args, code, errs)
		}
	}
}

// Directories of runs: five runs a side, one probe 25% slower in each run
// of the new side; it is flagged, first, with its p-value (2/252: U = 0,
// one test, as its calls never change and its inclusive time is its
// inherent time).
func TestCompareDirectories(t *testing.T) {
	dir := t.TempDir()
	sides := [2]string{filepath.Join(dir, "old"), filepath.Join(dir, "new")}
	for s, side := range sides {
		if err := os.Mkdir(side, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, f := range []float64{1.00, 1.02, 0.99, 1.01, 0.98} {
			slow := f
			if s == 1 {
				slow *= 1.25
			}
			text := fmt.Sprintf("probe,count,total_ns,avg_ns,inherent_total_ns,inherent_avg_ns,min_ns,max_ns,label\n"+
				"example.com/app.handle,100,%d,0,%d,0,0,0,hotspot\n"+
				"example.com/app.store,100,%d,0,%d,0,0,0,\n"+
				"example.com/app.tick,5000,0,0,0,0,0,0,untimed\n",
				int(100e6*f), int(50e6*f), int(20e6*slow), int(20e6*slow))
			write(t, filepath.Join(side, fmt.Sprintf("run%d.csv", i)), text)
		}
	}
	write(t, filepath.Join(sides[0], "README"), "five runs of make load")
	code, out, errs := meter("compare", sides[0], sides[1])
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[1], "example.com/app.store   100 → 100    ~ (p=1.000)  200µs → 250µs    +25.00% (p=0.008)  200µs → 250µs  +25.00% (p=0.008)") ||
		!strings.Contains(out, "example.com/app.tick    5000 → 5000  ~ (p=1.000)  untimed") ||
		!strings.Contains(out, "old: "+sides[0]+", 5 runs; new: "+sides[1]+", 5 runs\n") {
		t.Fatalf("got\n%s", out)
	}
	if code, out, _ := meter("compare", "-test", "welch", sides[0], sides[1]); code != 0 || !strings.Contains(out, "+25.00% (p=0.000)") {
		t.Fatalf("welch: exit %d\n%s", code, out)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if code, _, errs := meter("compare", sides[0], empty); code != 1 || errs != "meter: "+empty+": no model CSV (*.csv) in this directory\n" {
		t.Fatalf("empty directory: exit %d, %q", code, errs)
	}
}
