package inject

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A program instrumented with -all must behave as the plain one: these
// tests build both from the same sources (the instrumented one through
// -overlay) and compare what they print.

// writeFiles writes a module: files by relative path, and a go.mod on the
// runtime's go line.
func writeFiles(t *testing.T, module string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module " + module + "\n\ngo " + runtimeGoLine(t) + "\n"
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// buildBoth builds the main package in dir plain and instrumented (the
// options' overlay), with extra go build flags, and returns the two
// binaries.
func buildBoth(t *testing.T, dir string, o *Options, flags ...string) (plain, inst string) {
	t.Helper()
	bin := t.TempDir()
	plain, inst = filepath.Join(bin, "plain"), filepath.Join(bin, "inst")
	o.Dir = dir
	o.Overlay = filepath.Join(bin, "overlay.json")
	o.Cache = filepath.Join(bin, "cache")
	o.Runtime = repoRoot(t)
	o.Stderr = &bytes.Buffer{}
	if o.Patterns == nil {
		o.Patterns = []string{"./..."}
	}
	if _, err := Run(o); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		append(append([]string{"build", "-o", plain}, flags...), "."),
		append(append([]string{"build", "-overlay", o.Overlay, "-o", inst}, flags...), "."),
	} {
		cmd := exec.Command("go", c...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	return plain, inst
}

// run runs a binary with environment additions; it returns its combined
// output and exit code.
func run(t *testing.T, exe string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// The variants an instrumented program is run in: every probe disabled,
// default properties (probes start enabled, so the first firings are
// metered), every firing metered.
var propertySets = [][]string{
	{"METER_ENABLED=false"},
	nil,
	{"METER_HOTSPOT_ENABLED=false", "METER_HOTSPOT_UNTIMED=0"},
}

// stackProgram reads its own stack every way a program can, from
// functions of every shape; calc's functions carry line directives.
var stackProgram = map[string]string{
	"main.go": `package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"example.com/stack/calc"
)

func base(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// where reports the caller skip frames up, as loggers do.
func where(skip int) string {
	_, file, line, _ := runtime.Caller(skip)
	return fmt.Sprintf("%s:%d", base(file), line)
}

func logf(l *log.Logger, s string) { l.Output(2, s) }

func frames() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(1, pcs)
	fr := runtime.CallersFrames(pcs[:n])
	var b strings.Builder
	for {
		f, more := fr.Next()
		if !strings.HasPrefix(f.Function, "runtime.") {
			fmt.Fprintf(&b, "  %s %s:%d\n", f.Function, base(f.File), f.Line)
		}
		if !more {
			break
		}
	}
	return b.String()
}

// normalize keeps function names and file:line of a stack dump.
func normalize(st []byte) string {
	var b strings.Builder
	for _, l := range strings.Split(string(st), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "goroutine "), l == "":
		case strings.Contains(l, ".go:") || strings.Contains(l, ".y:"):
			if i := strings.Index(l, " +0x"); i >= 0 {
				l = l[:i]
			}
			fmt.Fprintf(&b, "  %s\n", base(l))
		default:
			if i := strings.LastIndex(l, "("); i > 0 {
				l = l[:i]
			}
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String()
}

func a(n int) (string, error) {
	if n == 0 {
		return where(2) + "\n" + frames(), nil
	}
	s, err := b(n - 1)
	return s, err
}

func b(n int) (string, error) { return a(n) }

type T struct{ n int }

func (t *T) M() string {
	return where(1) + " " + where(2)
}

func recovered() (s string) {
	defer func() {
		r := recover()
		s = fmt.Sprint(r) + "\n" + normalize(debug.Stack())
	}()
	calc.Check(1000)
	return ""
}

func wrapped() error {
	return fmt.Errorf("wrapped: %w", errors.New(where(1)))
}

// scan returns from its loop past a condition that calls: a call exit.
func scan(ws []string) string {
	for i, w := range ws {
		if i > 0 && strings.HasPrefix(w, "#") {
			return where(1) + " " + w + "\n" + frames()
		}
	}
	return ""
}

func main() {
	l := log.New(os.Stdout, "", log.Lshortfile)
	logf(l, "from main")
	l.Println("println")
	s, _ := a(3)
	fmt.Println(s)
	fmt.Println((&T{}).M())
	fmt.Println(func() string { return where(1) + "\n" + frames() }())
	fmt.Println(wrapped())
	fmt.Println(scan([]string{"a", "#b"}))
	fmt.Println(recovered())
	v, err := calc.Parse("12x")
	fmt.Println(v, err)
	if len(os.Args) > 1 {
		calc.Check(2000) // an uncaught panic: the runtime prints the trace
	}
}
`,
	"calc/calc.go": `// Package calc is written as parser generators write Go.
package calc

import "fmt"

//line calc.y:12
func Parse(s string) (int, error) {
	n := 0
//line calc.y:20
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad %q", c)
		}
		n = n*10 + int(c-'0')
	}
//line calc.y:30
	return Check(n), nil
}

//line calc.y:40:5
func Check(n int) int {
	if n > 100 {
		panic(fmt.Sprint("too big: ", n))
	}
	return n
}
`,
}

// TestStackReaders: runtime.Caller at any skip, log's calldepth,
// runtime.Callers, debug.Stack in a recover handler and an uncaught panic
// see the same functions, files and lines in the instrumented program as
// in the plain one, metered or not, line directives included.
func TestStackReaders(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime")
	}
	dir := writeFiles(t, "example.com/stack", copyMap(stackProgram))
	plain, inst := buildBoth(t, dir, &Options{All: true})
	for _, args := range [][]string{nil, {"panic"}} {
		want, wantCode := run(t, plain, nil, args...)
		if !strings.Contains(want, "calc.y:") || !strings.Contains(want, "main.go:") {
			t.Fatalf("the plain program does not show its stack:\n%s", want)
		}
		for _, env := range propertySets {
			got, code := run(t, inst, env, args...)
			got, want := stripGoroutineIDs(got), stripGoroutineIDs(want)
			if got != want || code != wantCode {
				t.Errorf("%v %v: instrumented output (exit %d) differs from plain (exit %d):\n%s", env, args, code, wantCode, lineDiff(want, got))
			}
		}
	}
}

func copyMap(m map[string]string) map[string]string {
	c := map[string]string{}
	for k, v := range m {
		c[k] = v
	}
	return c
}

var traceNoise = regexp.MustCompile(`goroutine \d+|\s*\+0x[0-9a-f]+|\((?:\.\.\.|\{?0x[^)]*)\)`)

// stripGoroutineIDs takes out what differs between two builds of one
// program in a panic's trace: goroutine numbers, PC offsets, argument
// words (or "..." where the call was inlined: a probe can keep a function
// from being inlined).
func stripGoroutineIDs(s string) string { return traceNoise.ReplaceAllString(s, "") }

func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out.WriteString("- " + x + "\n+ " + y + "\n")
		}
	}
	return out.String()
}

// namesProgram names its functions at run time: the probe names must be
// what the toolchain says, with the package path escaped as in symbols.
var namesProgram = map[string]string{
	"main.go": `package main

import (
	"fmt"
	"sort"

	lib "example.com/names/lib.v2"
)

func main() {
	names := lib.Run()
	sort.Strings(names)
	for _, n := range names {
		fmt.Println(n)
	}
}
`,
	"lib.v2/lib.go": `package lib

import "runtime"

var seen = map[string]bool{}

func rec() {
	pc, _, _, _ := runtime.Caller(1)
	seen[runtime.FuncForPC(pc).Name()] = true
}

var glob = func() int {
	rec()
	return 1
}()

func init() {
	rec()
	func() { rec() }()
}

type List[T any] struct{ items []T }

func (l *List[T]) Push(v T) {
	rec()
	func() { rec() }()
}

func (l List[T]) Len() int {
	rec()
	return len(l.items)
}

type V struct{}

func (V) Value() { rec() }

func (*V) Pointer() { rec() }

func Gen[X any](x X) X {
	rec()
	return x
}

func Outer() {
	f := func() {
		rec()
		func() {
			rec()
			func() { rec() }()
		}()
	}
	f()
}

func Run() []string {
	(&List[int]{}).Push(1)
	List[string]{}.Len()
	V{}.Value()
	(&V{}).Pointer()
	Gen(1)
	Outer()
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	return out
}
`,
}

// TestProbeNames: every function the program names at run time
// (runtime.FuncForPC, as in stack traces and pprof) has a probe of that
// name, in a package whose path ends in "lib.v2" (lib%2ev2 in symbols).
func TestProbeNames(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime")
	}
	dir := writeFiles(t, "example.com/names", copyMap(namesProgram))
	o := &Options{All: true}
	_, inst := buildBoth(t, dir, o, "-gcflags=example.com/names/...=-l")
	out, code := run(t, inst, nil)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	b, _ := os.ReadFile(o.Overlay)
	var ov struct{ Replace map[string]string }
	if err := json.Unmarshal(b, &ov); err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadFile(ov.Replace[filepath.Join(dir, "lib.v2", "meter_probes_gen.go")])
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range strings.Fields(out) {
		n++
		if !strings.Contains(string(gen), `"`+name+`"`) {
			t.Errorf("the toolchain names %s; the registration file has no such probe:\n%s", name, gen)
		}
	}
	if n < 12 || !strings.Contains(out, "example.com/names/lib%2ev2.") {
		t.Errorf("only %d names, or no escaped path:\n%s", n, out)
	}
}

// exitProgram ends through os.Exit or log.Fatal, after work in
// instrumented functions.
var exitProgram = map[string]string{
	"main.go": `package main

import (
	"fmt"
	"log"
	"os"
)

func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i
	}
	fmt.Println("work", s)
	return s
}

func code() int { return work(10) % 7 }

func main() {
	log.SetFlags(0) // no time stamps: plain and instrumented runs are compared byte for byte
	work(100)
	switch os.Args[1] {
	case "exit":
		os.Exit(3)
	case "exitcall":
		os.Exit(code())
	case "fatal":
		log.Fatal("fatal ", work(5))
	case "fatalf":
		log.Fatalf("fatalf %d", 7)
	}
}
`,
}

// withoutRuntimeLines drops the lines the runtime itself prints ("meter:
// …", on standard error, where an export is configured).
func withoutRuntimeLines(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "meter: ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestExitWritesModel: a program that ends through os.Exit or log.Fatal
// in instrumented code writes its model first, with the same output and
// exit status as plain.
func TestExitWritesModel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime")
	}
	dir := writeFiles(t, "example.com/exits", copyMap(exitProgram))
	plain, inst := buildBoth(t, dir, &Options{All: true})
	for _, how := range []string{"exit", "exitcall", "fatal", "fatalf"} {
		want, wantCode := run(t, plain, nil, how)
		csv := filepath.Join(t.TempDir(), "model.csv")
		got, code := run(t, inst, []string{"METER_EXPORT_CSV=" + csv}, how)
		got = withoutRuntimeLines(got)
		if got != want || code != wantCode {
			t.Errorf("%s: output (exit %d) %q, plain (exit %d) %q", how, code, got, wantCode, want)
		}
		b, err := os.ReadFile(csv)
		if err != nil || !strings.Contains(string(b), "main.work,") {
			t.Errorf("%s: no model with main.work written before the end: %v\n%s", how, err, b)
		}
	}
}

// signalProgram handles signals itself, through both os/signal calls, then
// stops handling them (Stop, NotifyContext's stop, Reset, Ignore) and dies
// of SIGINT.
var signalProgram = map[string]string{
	"main.go": `package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1, syscall.SIGINT)
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	fmt.Println("got", <-c)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGUSR2, syscall.SIGINT)
	defer stop()
	syscall.Kill(os.Getpid(), syscall.SIGUSR2)
	<-ctx.Done()
	fmt.Println("done", context.Cause(ctx) != nil)
	all := make(chan os.Signal, 1)
	signal.Notify(all)
	signal.Reset(syscall.SIGINT)
	signal.Ignore(syscall.SIGHUP)
	signal.Stop(c)
	stop()
	fmt.Println("no longer handled")
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	time.Sleep(time.Minute)
	fmt.Println("still alive")
}
`,
}

// TestSignalsStillHandled: a program that handles its signals through
// os/signal still gets them when its calls go through probe's, and dies of
// them again once it no longer handles them.
func TestSignalsStillHandled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime")
	}
	dir := writeFiles(t, "example.com/signals", copyMap(signalProgram))
	plain, inst := buildBoth(t, dir, &Options{All: true})
	want, wantCode := run(t, plain, nil)
	if !strings.HasSuffix(want, "no longer handled\n") || wantCode != -1 {
		t.Fatalf("plain: %q (exit %d), want death by SIGINT", want, wantCode)
	}
	for _, env := range propertySets {
		if got, code := run(t, inst, env); got != want || code != wantCode {
			t.Errorf("%v: %q (exit %d), plain %q (exit %d)", env, got, code, want, wantCode)
		}
	}
}

// TestBeginEndInlined: the compiler inlines Begin and End into every
// instrumented function, so that a disabled probe costs no call.
func TestBeginEndInlined(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime")
	}
	dir := writeFiles(t, "example.com/stack", copyMap(stackProgram))
	o := &Options{All: true}
	buildBoth(t, dir, o)
	cmd := exec.Command("go", "build", "-overlay", o.Overlay, "-gcflags=example.com/stack/...=-m", "-o", os.DevNull, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// One line per place a call was inlined: a function inlined into
	// another reports its calls again, at the same place.
	unique := func(re string) map[string]bool {
		m := map[string]bool{}
		for _, l := range regexp.MustCompile(`(?m)^.*: `+re+`$`).FindAll(out, -1) {
			m[string(l)] = true
		}
		return m
	}
	ons := unique(`inlining call to probe\.\(\*Probe\)\.On`)
	begins := unique(`inlining call to probe\.\(\*Probe\)\.Begin`)
	ends := unique(`inlining call to probe\.\(\*Probe\)\.End`)
	// Every probe's On and Begin, and at least one End per probe, are
	// inlined: at the exits, and where the defer shape defers End.
	probes := 0
	for _, f := range []string{"meter_probes_gen.go", "calc/meter_probes_gen.go"} {
		b, err := os.ReadFile(overlayTarget(t, o.Overlay, filepath.Join(dir, f)))
		if err != nil {
			t.Fatal(err)
		}
		probes += strings.Count(string(b), "\n\t\t\"")
	}
	if probes == 0 || len(ons) < probes || len(begins) < probes || len(ends) < probes {
		t.Errorf("%d probes; On inlined %d times, Begin %d times, End %d times", probes, len(ons), len(begins), len(ends))
	}
	// End calls the engine's End, whose test of the firing is its own.
	if calls := unique(`inlining call to meter\.\(\*Probe\)\.End`); len(calls) > 0 {
		t.Errorf("the engine's End inlined: %v", calls)
	}
	if moved := unique(`moved to heap: meter__f`); len(moved) > 0 {
		t.Errorf("firing variables on the heap: %v", moved)
	}
}

// TestNoStackObjects: an instrumented function's frame has the stack
// objects of the plain one. The firing variable's address is taken (Begin
// and End take it); were it a pointer, it would be a stack object, which
// every copy of a growing stack and every scan of it by the collector
// must find and adjust. (The conditional defer's shape, for functions
// with defers of their own, and the registration's init are left out
// here: their defer records and name lists are stack objects of their
// own.)
func TestNoStackObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime")
	}
	dir := writeFiles(t, "example.com/objects", map[string]string{"main.go": `package main

import (
	"fmt"
	"os"
	"strings"
)

type walker struct{ seen map[string]int }

func (w *walker) walk(n int, path []string) int {
	if n == 0 {
		w.seen[strings.Join(path, "/")]++
		return 1
	}
	s := 0
	for i := 0; i < 2; i++ {
		s += w.walk(n-1, append(path, fmt.Sprint(i)))
	}
	return s
}

func parse(s string) (int, error) {
	var n int
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad digit %q", c)
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

func grow(n int) int {
	var buf [64]int
	for i := range buf {
		buf[i] = n + i
	}
	if n == 0 {
		return buf[63]
	}
	return grow(n-1) + buf[n%64]
}

func main() {
	w := &walker{seen: map[string]int{}}
	n, err := parse(os.Args[0][:0] + "12")
	if err != nil {
		panic(err)
	}
	apply := func(f func(int) int) int { return f(n) }
	fmt.Println(w.walk(3, nil), apply(grow), len(w.seen))
}
`})
	o := &Options{All: true}
	buildBoth(t, dir, o)
	objects := func(args ...string) []string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"build"}, append(args, "-gcflags=example.com/objects=-S", "-o", os.DevNull, ".")...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var fns []string
		for _, m := range regexp.MustCompile(`(?m)^(\S+)\.stkobj SRODATA`).FindAllSubmatch(out, -1) {
			if fn := string(m[1]); !strings.Contains(fn, ".init.") {
				fns = append(fns, fn)
			}
		}
		return fns
	}
	plain, inst := objects(), objects("-overlay", o.Overlay)
	if len(inst) > len(plain) {
		t.Errorf("functions with stack objects: instrumented %v, plain %v", inst, plain)
	}
}

// overlayTarget returns what an overlay file maps path to.
func overlayTarget(t *testing.T, overlay, path string) string {
	b, err := os.ReadFile(overlay)
	if err != nil {
		t.Fatal(err)
	}
	var ov struct{ Replace map[string]string }
	if err := json.Unmarshal(b, &ov); err != nil {
		t.Fatal(err)
	}
	return ov.Replace[path]
}

// TestExportFlags: -otlp and -live link the exports into main's
// registration file; a runtime without them is a clear error.
func TestExportFlags(t *testing.T) {
	rt := repoRoot(t)
	for _, c := range []struct {
		flag func(*Options)
		pkg  string
		dir  string
	}{
		{func(o *Options) { o.OTLP = true }, otlpPkg, "otlp"},
		{func(o *Options) { o.Live = true }, livePkg, "live"},
	} {
		dir := writeFiles(t, "example.com/exp", map[string]string{"main.go": exitProgram["main.go"], "lib/lib.go": simpleSrc})
		// The export's module may need a higher go line than the runtime.
		if b, err := os.ReadFile(filepath.Join(rt, c.dir, "go.mod")); err == nil {
			if l, err := goLineOf("go.mod", b); err == nil && l != runtimeGoLine(t) {
				if _, err := goCmd(dir, "mod", "edit", "-go="+l); err != nil {
					t.Fatal(err)
				}
			}
		}
		o := &Options{Dir: dir, Runtime: rt, Overlay: filepath.Join(t.TempDir(), "o.json"), Cache: t.TempDir(), Stderr: &bytes.Buffer{}, Patterns: []string{"./..."}}
		c.flag(o)
		_, err := Run(o)
		if _, statErr := os.Stat(filepath.Join(rt, c.dir)); statErr != nil {
			if err == nil || !strings.Contains(err.Error(), c.pkg) {
				t.Errorf("%s: the runtime has none, want an error naming it, got %v", c.pkg, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		main, _ := os.ReadFile(overlayTarget(t, o.Overlay, filepath.Join(dir, "meter_probes_gen.go")))
		lib, _ := os.ReadFile(overlayTarget(t, o.Overlay, filepath.Join(dir, "lib", "meter_probes_gen.go")))
		if !strings.Contains(string(main), `_ "`+c.pkg+`"`) || strings.Contains(string(lib), c.pkg) {
			t.Errorf("%s: main's registration file must import it, the library's not:\n%s\n%s", c.pkg, main, lib)
		}
		cmd := exec.Command("go", "build", "-overlay", o.Overlay, "-o", os.DevNull, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: build: %v\n%s", c.pkg, err, out)
		}
	}
}

// TestOTLPModuleOwnProgram: -otlp on a program of the otlp module itself
// ends, with that module's packages left out as the runtime's; it once
// had the go command look for the main module among its own requirements
// for ever.
func TestOTLPModuleOwnProgram(t *testing.T) {
	rt := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(rt, "otlp", "go.mod"))
	if err != nil {
		t.Skip("no otlp module in this runtime")
	}
	dir := writeFiles(t, otlpPkg, map[string]string{"cmd/prog/main.go": exitProgram["main.go"]})
	if l, err := goLineOf("go.mod", b); err == nil {
		if _, err := goCmd(dir, "mod", "edit", "-go="+l); err != nil {
			t.Fatal(err)
		}
	}
	o := &Options{Dir: dir, Runtime: rt, Overlay: filepath.Join(t.TempDir(), "o.json"), Cache: t.TempDir(), Stderr: &bytes.Buffer{},
		Patterns: []string{"./cmd/prog"}, OTLP: true}
	done := make(chan error, 1)
	go func() {
		_, err := Run(o)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("meterinject -otlp on the otlp module's own program has not ended in 2 minutes")
	}
}

// TestGenerated: the registration file of a program imports what it is
// asked to, marks its roots, and declares the helpers its files call.
func TestGenerated(t *testing.T) {
	g := &group{pkgName: "main", names: newNames(basePrefix, "")}
	f := &fileJob{group: g}
	main := &site{name: "main.main", isMain: true, isProgramMain: true, index: 0, body: &ast.BlockStmt{}}
	h := &site{name: "main.handle", root: true, index: 1, body: &ast.BlockStmt{}}
	f.sites = []*site{main, h}
	f.calls = []*rewriteCall{{helper: hExit}, {helper: hNotifyCtx}}
	g.files, g.sites = []*fileJob{f}, f.sites
	f.src = []byte("package main\nfunc main() {\n}\n")
	f.lines = newLines(f.src, nil)
	fset := token.NewFileSet()
	pf, _ := parser.ParseFile(fset, "m.go", f.src, 0)
	f.fset, f.file = fset, pf
	main.body = pf.Decls[0].(*ast.FuncDecl).Body
	h.body = main.body
	out := string(g.generated(&Options{OTLP: true, Live: true}))
	for _, want := range []string{
		`_ "github.com/meterio/meter/otlp"`, `_ "github.com/meterio/meter/live"`,
		"meter__probe.Roots(meter__probes[:], 1)", "func meter__main() { meter__probe.Main() }",
		"func meter__shutdown() { meter__probe.Shutdown() }", "func meter__exit(code int) int {",
		"func meter__notifyctx(func(meter__context.Context, ...meter__os.Signal) (meter__context.Context, meter__context.CancelFunc))",
		"\treturn meter__probe.SignalNotifyContext\n",
		`meter__context "context"`, `meter__os "os"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("registration file lacks %q:\n%s", want, out)
		}
	}
	// Generated code calls no method of the engine's types: the engine
	// need not be imported for Begin and End to be inlined.
	if strings.Contains(out, `"github.com/meterio/meter/meter"`) {
		t.Errorf("registration file imports the engine:\n%s", out)
	}
	if _, err := format.Source([]byte(out)); err != nil || !isGofmt([]byte(out)) {
		t.Errorf("not gofmt-clean (%v):\n%s", err, out)
	}
}

// TestGRPCHandlers: a method of a real gRPC service (grpc's own health
// service, generated by protoc-gen-go-grpc) is a request handler: kept
// however small, and a root; other methods of the same type are not.
func TestGRPCHandlers(t *testing.T) {
	if testing.Short() {
		t.Skip("needs google.golang.org/grpc from the module proxy")
	}
	dir := writeFiles(t, "example.com/svc", map[string]string{
		"svc.go": `package svc

import (
	"context"

	"google.golang.org/grpc/health/grpc_health_v1"
)

type health struct {
	grpc_health_v1.UnimplementedHealthServer
	n int
}

func (h *health) Check(ctx context.Context, r *grpc_health_v1.HealthCheckRequest) (*grpc_health_v1.HealthCheckResponse, error) {
	return &grpc_health_v1.HealthCheckResponse{Status: grpc_health_v1.HealthCheckResponse_SERVING}, nil
}

func (h *health) count() int { return h.n }

var _ grpc_health_v1.HealthServer = (*health)(nil)
var _ = (*health).count
`,
	})
	for _, args := range [][]string{{"mod", "edit", "-require=google.golang.org/grpc@v1.85.0"}, {"mod", "tidy"}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
	o := &Options{Dir: dir, Runtime: repoRoot(t), Overlay: filepath.Join(t.TempDir(), "o.json"), Cache: t.TempDir(), Stderr: &bytes.Buffer{}}
	if _, err := Run(o); err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadFile(overlayTarget(t, o.Overlay, filepath.Join(dir, "meter_probes_gen.go")))
	if err != nil {
		t.Fatal(err)
	}
	s := string(gen)
	if !strings.Contains(s, `"example.com/svc.(*health).Check"`) || strings.Contains(s, "count") || !strings.Contains(s, "Roots(meter__probes[:], 0)") {
		t.Errorf("Check must be kept and a root, count left out:\n%s", s)
	}
}

// panicProgram crashes in a goroutine that a goroutine's function starts:
// with tracepoint on, inside a trace, which the crashing goroutine joined.
var panicProgram = map[string]string{
	"main.go": `package main

import (
	"fmt"
	"os"
	"strconv"
)

func work(n int) string {
	s := 0
	for i := 0; i < n*100; i++ {
		s += i * i
	}
	return fmt.Sprint(s)
}

func crash(n, at int) {
	if n == at {
		panic(fmt.Sprint("crash at ", n))
	}
	_ = work(n)
}

func handle(n, at int, done chan struct{}) {
	_ = work(n)
	inner := make(chan struct{})
	go func() {
		crash(n, at)
		close(inner) // not deferred: main must not return while the panic prints
	}()
	<-inner
	close(done)
}

func main() {
	at, _ := strconv.Atoi(os.Args[1])
	for i := 0; i < 20; i++ {
		done := make(chan struct{})
		go handle(i, at, done)
		<-done
	}
}
`,
}

// TestPanicInATracedGoroutine: a panic in a goroutine that joined a trace
// prints the same message, stack and "created by" lines as the plain
// program, its profiler labels too (GODEBUG=tracebacklabels=1).
func TestPanicInATracedGoroutine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime")
	}
	dir := writeFiles(t, "example.com/crash", copyMap(panicProgram))
	plain, inst := buildBoth(t, dir, &Options{All: true})
	traced := []string{"METER_TRACEPOINT_ENABLED=true", "METER_TRACEPOINT_SAMPLE=1"}
	for _, env := range [][]string{nil, {"GODEBUG=tracebacklabels=1"}} {
		want, wantCode := run(t, plain, env, "12")
		if !strings.Contains(want, "created by main.handle") || !strings.Contains(want, "panic: crash at 12") {
			t.Fatalf("the plain program does not crash as it should:\n%s", want)
		}
		for _, props := range [][]string{traced, nil} {
			got, code := run(t, inst, append(append([]string{}, env...), props...), "12")
			got, want := stripGoroutineIDs(got), stripGoroutineIDs(want)
			if got != want || code != wantCode {
				t.Errorf("%v %v: instrumented output (exit %d) differs from plain (exit %d):\n%s", env, props, code, wantCode, lineDiff(want, got))
			}
		}
	}
}
