package probe

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/meterio/meter/export"
	"github.com/meterio/meter/meter"
)

// The live page (package live) is opt-in: it links net/http, which the
// runtime's own packages never import. Its init hands probe a start
// function; the page starts once that has happened and the properties
// have been read with METER_HTTP set, in whichever order package
// initialisation brings the two.
var live struct {
	mu       sync.Mutex
	start    LiveStart // from package live; nil when not linked
	addr     string    // METER_HTTP
	loaded   bool      // the properties have been read
	started  bool
	url      string // where the page is, once it listens
	loopback bool   // it listens on loopback only
}

// LiveStart starts the live page on addr (METER_HTTP) and returns the
// address to open it at, and whether it listens on loopback only.
type LiveStart func(addr string) (url string, loopback bool, err error)

// RegisterLive hands the runtime the function that starts the live page
// on an address. Package live calls it from its init; a program asks for
// the page by importing that package. start runs once, when METER_HTTP is
// set, after both this call and the first probe registration; an error it
// returns is reported on standard error and the program goes on. Where
// the page listens is in the start-up line (see Main).
func RegisterLive(start LiveStart) {
	live.mu.Lock()
	defer live.mu.Unlock()
	live.start = start
	startLive()
}

// configureLive passes METER_HTTP on once setup has read it.
func configureLive(addr string) {
	live.mu.Lock()
	defer live.mu.Unlock()
	live.addr, live.loaded = addr, true
	startLive()
}

// startLive starts the page when everything it needs is there. Called
// with live.mu held.
func startLive() {
	if live.started || !live.loaded || live.addr == "" || live.start == nil {
		return
	}
	live.started = true
	url, loopback, err := live.start(live.addr)
	if err != nil {
		fmt.Fprintf(stderr, "meter: METER_HTTP=%s: %v; no live page\n", live.addr, err)
		return
	}
	live.url, live.loopback = url, loopback
}

// livePage is the start-up line's part about the live page: where it is
// and, when it listens beyond loopback, that anyone who reaches it reads
// the model. "" when it does not run.
func livePage() string {
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.url == "" {
		return ""
	}
	if live.loopback {
		return "live page at " + live.url
	}
	port := live.addr[strings.LastIndexByte(live.addr, ':')+1:]
	return fmt.Sprintf("live page at %s (warning: METER_HTTP=%s listens beyond loopback and the page has no authentication: "+
		"anyone who can reach the port reads the model, which names the program's functions; METER_HTTP=127.0.0.1:%s keeps it to this machine)",
		live.url, live.addr, port)
}

// checkLive writes one line to w when METER_HTTP asks for the live page
// and the program does not link it. It can only know once every package's
// init has run, so the program's start (after init) calls it.
func checkLive(w io.Writer) {
	live.mu.Lock()
	defer live.mu.Unlock()
	addr := live.addr
	if !live.loaded {
		addr = os.Getenv("METER_HTTP")
	}
	if addr != "" && live.start == nil {
		fmt.Fprintf(w, "meter: METER_HTTP=%s: this program has no live page; add import _ \"github.com/meterio/meter/live\" "+
			"to package main, or instrument it with meterinject -live\n", addr)
	}
}

// WriteProfile writes the current model and the call paths traced so far
// as a pprof profile, as METER_EXPORT_PPROF does at exit. Call paths are
// collected while a trace gate is on and a profile or the live page is
// configured; otherwise the profile holds the model alone.
func WriteProfile(w io.Writer) error {
	var paths *export.CallPaths
	if exports != nil && exports.CallPaths() != nil {
		paths = exports.CallPaths().Frozen() // before the model: see CallPaths.Frozen
	}
	return export.WriteProfile(w, meter.Take(), paths)
}
