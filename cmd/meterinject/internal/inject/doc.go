// Package inject is meterinject's rewriter: it adds one probe statement to
// the top of each function body of the chosen packages, writes one
// registration file per package, and takes all of it out again.
//
// It splices text into the original bytes instead of printing a syntax
// tree, so code it did not add keeps its exact bytes (real modules are not
// always gofmt-clean) and Remove gives every byte back. What it adds is
// gofmt-clean.
//
// Packages are loaded with golang.org/x/tools/go/packages. The twins'
// signatures are syntax trees built with github.com/dave/dst: the
// function's signature decorated, renamed, given the firing as its first
// parameter, and printed by dst's restorer. dst is not used to print user
// files: its restorer prints a whole file the gofmt way, and a file that
// was not gofmt-clean (gopkg.in/yaml.v3 is one) would not come back byte
// for byte from -remove.
//
// # Selection
//
// By default a function the compiler can inline is left out (a probe
// would stop the inlining), and so is a small one: a body of at most
// SmallMax statements with no loop, goto, select or channel operation,
// whose own work is bounded as an inlined function's is (see isSmall).
// Options.All instruments both.
//
// # Generated shape
//
// A function or method whose parameters all have names gets a metered twin:
//
//	func F(a int) int {
//		if meter__probes[3].On() {
//			if meter__f := meter__probes[3].Begin(); meter__f.Active() {
//	//line :12:1
//				return metered__F(meter__f, a)
//			}
//		}
//	//line :12:1
//		... original body ...
//	}
//	...
//	//meter:twins (end of file)
//	func metered__F(meter__f meter__firing, a int) int {
//		defer meter__f.End()
//		meter__f.Reenter()
//	//line :12:1
//		return F(a)
//	}
//
// so a disabled probe costs one load and one branch, and no defer frame;
// and a firing that the chain does not meter (outside a trace, while a
// trace gate is on) costs the call to Begin and a test, with no defer and
// no call to the twin. A metered firing calls the twin, which holds the
// defer and calls F again; Reenter makes that call's Begin return an
// inactive firing, so F runs its original body, once, measured by the
// twin's firing. The twin is four lines whatever the body's size: the body
// is compiled once. meter__firing is an alias of probe.Firing that the
// registration file declares.
//
// Function literals, functions whose parameters cannot be forwarded
// (unnamed or blank), init, a function whose parameter or result has its
// own name, bodies that call recover themselves (a function its caller
// defers recovers only when the deferred call is the function itself) and
// bodies that look at their callers (runtime.Caller, t.Helper: a metered
// firing adds two frames) get a conditional defer instead:
//
//	if meter__probes[4].On() {
//		if meter__f := meter__probes[4].Begin(); meter__f.Active() {
//			defer meter__f.End()
//		}
//	}
//
// The //line directives keep every original line at its original number,
// so panics and stack traces point to the user's code as it was written.
// docs/meterinject.md has the measurements behind the shape.
//
// It must never write a file half-way, nor write anything when an error
// is found: every new text is computed first, then written by rename.
//
// The package never imports the runtime: user files only refer to the
// package-level array that the generated file declares, and methods on its
// elements, so no import is ever added to a user's file.
package inject
