package meter

import "runtime"

// Generated code calls probe.Probe.Begin, which the compiler inlines, so
// that the engine finds the instrumented function as Begin's caller. In a
// closure made by a function that was itself inlined (a middleware
// factory: func trim(next http.Handler) http.Handler { return
// http.HandlerFunc(func(…) { … }) }), the Go 1.26 compiler leaves every
// call as a call (golang/go#81380): Begin runs as a function of its own,
// and the engine's caller is Begin. Its place stands for the function's,
// and the engine looks one frame further: where Begin's frame pointer
// links to, and the return address there. Without that, a firing of such a
// closure would sit one frame deeper than the function's own place, at the
// depth of the closure's next callee, and that callee's firing would take
// it for unwound.

// shimLo and shimSize are where the code of probe.Probe.Begin lies, as
// compiled on its own; 0 until NoteBeginShim.
var shimLo, shimSize uintptr

const beginShimName = "github.com/meterio/meter/probe.(*Probe).Begin"

// NoteBeginShim tells the engine where the code of probe.Probe.Begin is:
// pc is its entry. The probe package calls it once, at initialisation; a
// pc of another function is ignored.
func NoteBeginShim(pc uintptr) {
	f := runtime.FuncForPC(pc)
	if f == nil || f.Name() != beginShimName {
		return
	}
	lo := f.Entry()
	// The function's code is contiguous: its end is the first address
	// from which FuncForPC names another.
	n, step := uintptr(1), uintptr(1<<12)
	for ; step > 0; step >>= 1 {
		if g := runtime.FuncForPC(lo + n + step - 1); g != nil && g.Entry() == lo {
			n += step
		}
	}
	shimLo, shimSize = lo, n
}

// inShim reports whether pc is in probe.Probe.Begin's own code.
func inShim(pc uintptr) bool { return pc-shimLo < shimSize }
