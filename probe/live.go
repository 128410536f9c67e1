package probe

import (
	"fmt"
	"io"
	"os"
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
	mu      sync.Mutex
	start   func(addr string) error // from package live; nil when not linked
	addr    string                  // METER_HTTP
	loaded  bool                    // the properties have been read
	started bool
}

// RegisterLive hands the runtime the function that starts the live page
// on an address. Package live calls it from its init; a program asks for
// the page by importing that package. start runs once, when METER_HTTP is
// set, after both this call and the first probe registration; an error it
// returns is reported on standard error and the program goes on.
func RegisterLive(start func(addr string) error) {
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
	if err := live.start(live.addr); err != nil {
		fmt.Fprintf(stderr, "meter: METER_HTTP=%s: %v; no live page\n", live.addr, err)
	}
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
