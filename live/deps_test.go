package live

import (
	"strings"
	"testing"
)

const withoutLive = `package main

import "github.com/meterio/meter/probe"

var probes [1]probe.Probe

func init() { probe.Register(probes[:], "example.com/plain.main") }

func main() {
	probe.Main()
	f := probes[0].Unmetered()
	_ = probes[0].On() && probes[0].Begin(&f)
	_ = f != 0 && probes[0].End(&f)
	probe.Shutdown()
}
`

const withLive = `package main

import (
	_ "github.com/meterio/meter/live"
	"github.com/meterio/meter/probe"
)

var probes [1]probe.Probe

func init() { probe.Register(probes[:], "example.com/plain.main") }

func main() {
	f := probes[0].Unmetered()
	_ = probes[0].On() && probes[0].Begin(&f)
	_ = f != 0 && probes[0].End(&f)
	probe.Shutdown()
}
`

// skipWhileExportLinksGRPC skips while the export package still links the
// OpenTelemetry SDK and gRPC: they bring net/http and html/template into
// every program, which the export re-layer removes. This check then never
// fires.
func skipWhileExportLinksGRPC(t *testing.T, deps map[string]bool) {
	if deps["google.golang.org/grpc"] {
		t.Skip("export still links gRPC (and with it net/http and html/template) into every program; this holds once it does not")
	}
}

// net/http is linked only into a program that imports the live page.
func TestNetHTTPOnlyWithLive(t *testing.T) {
	plain := newProgram(t, withoutLive).deps(t)
	skipWhileExportLinksGRPC(t, plain)
	for _, pkg := range []string{"net/http", "net", "html/template", "text/template"} {
		if plain[pkg] {
			t.Errorf("a program without the live page links %s", pkg)
		}
	}
	live := newProgram(t, withLive).deps(t)
	if !live["net/http"] {
		t.Fatal("the live page's program does not link net/http: the test is not testing")
	}
	// The page is built without templates, which reach reflect's
	// MethodByName and stop the linker's dead-code elimination.
	for _, pkg := range []string{"html/template", "text/template"} {
		if live[pkg] {
			t.Errorf("the live page links %s", pkg)
		}
	}
	if m := reflectMethods(t, newProgram(t, withLive)); len(m) > 0 {
		t.Errorf("the live page's program reaches reflect's Method by name, which stops dead-code elimination: %q", m)
	}
}

// What the page adds (report, net/http, encoding/json) keeps the linker's
// dead-code elimination, whatever the rest of the runtime links.
func TestPageKeepsDeadCodeElimination(t *testing.T) {
	if m := reflectMethods(t, newProgram(t, pageServer)); len(m) > 0 {
		t.Fatalf("functions that call reflect's Method by name: %q", m)
	}
}

const pageServer = `package main

import (
	"encoding/json"
	"net/http"
	"os"

	"github.com/meterio/meter/report"
)

func main() {
	http.ListenAndServe(os.Getenv("ADDR"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, _ := report.Load(r.URL.Query().Get("model"), "")
		json.NewEncoder(os.Stderr).Encode(m.Meta)
		report.WriteHTML(w, m)
	}))
}
`

// reflectMethods builds the program and returns the functions the linker
// marks as calling reflect's Method or MethodByName with an argument it
// cannot see: one of them keeps every exported method of every type.
func reflectMethods(t *testing.T, p *program) []string {
	t.Helper()
	out := p.goCmd(t, "build", "-ldflags=-dumpdep", "-o", p.bin, ".")
	var marked []string
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, " <ReflectMethod>"); i > 0 && !seen[line[:i]] {
			seen[line[:i]] = true
			marked = append(marked, line[:i])
		}
	}
	return marked
}

// The page's own packages import neither net/http (report, which the
// meter command shares) nor templates, and the live page adds no
// template to what the runtime links, whatever that is.
func TestReportPackagesAreLean(t *testing.T) {
	p := newProgram(t, withoutLive)
	list := func(pkgs ...string) map[string]bool {
		deps := map[string]bool{}
		for _, line := range strings.Split(p.goCmd(t, append([]string{"list", "-deps"}, pkgs...)...), "\n") {
			deps[line] = true
		}
		return deps
	}
	page := list("github.com/meterio/meter/report", "github.com/meterio/meter/cmd/meter")
	for _, pkg := range []string{"net/http", "html/template", "text/template"} {
		if page[pkg] {
			t.Errorf("report or cmd/meter links %s", pkg)
		}
	}
	runtime, live := list("github.com/meterio/meter/probe"), list("github.com/meterio/meter/live")
	for _, pkg := range []string{"html/template", "text/template"} {
		if live[pkg] && !runtime[pkg] {
			t.Errorf("the live page brings in %s", pkg)
		}
	}
}
