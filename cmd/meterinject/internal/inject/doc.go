// Package inject is meterinject's rewriter: it puts one probe into each
// chosen function of the packages, writes one registration file per
// package, and takes all of it out again.
//
// It splices text into the original bytes instead of printing a syntax
// tree, so code it did not add keeps its exact bytes (real modules are not
// always gofmt-clean) and Remove gives every byte back. What it adds is
// gofmt-clean. It must never write a file half-way, nor write anything
// when an error is found: every new text is computed first, then written
// by rename.
//
// # What a program can observe
//
// Nothing but time. In particular:
//
//   - No frame is added: stack readers (runtime.Caller with any skip, log's
//     calldepth, errors that capture stacks, assertion libraries) see the
//     same frames. See "The shape".
//   - Every token of the user's keeps its position (file, line, column) for
//     the compiler, panics, runtime.Caller, coverage and vet: each insertion
//     is followed by a //line or /*line */ directive that gives the next
//     original byte the position the compiler gave it before, computed as
//     the compiler does, so line directives already in a file keep their
//     meaning (position.go).
//   - Generated identifiers start with "meter__", or with "meterx__",
//     "meterxx__", … in a package where some identifier starts with it
//     (chooseNames): no name the user wrote can clash.
//   - The exports are written before the process ends through os.Exit or
//     log.Fatal* in instrumented code, and main starts with probe.Main;
//     signal.Notify, NotifyContext, Stop, Reset and Ignore go through
//     probe's SignalNotify, SignalNotifyContext, SignalStop, SignalReset
//     and SignalIgnore (calls.go).
//
// # The shape
//
// A function gets the "End before return" shape:
//
//	func F(a int) (meter__r0 int, meter__r1 error) {
//		meter__f := meter__probes[3].Unmetered()
//		_ = meter__probes[3].On() && meter__probes[3].Begin(&meter__f)
//		...
//		_ = meter__f != 0 && meter__probes[3].End(&meter__f)
//		return x, nil                       // returns without a call keep their text
//		...
//		meter__r0, meter__r1 = g(a), nil    // results that call (or receive, or
//		_ = meter__f != 0 && meter__probes[3].End(&meter__f)
//		return                              // allocate) are computed first, so the
//		                                    // time of g is inside the firing
//	}
//
// A function without results gets End before its closing brace too,
// unless its last statement is terminating. Unnamed results are named
// (meter__r0, …) only in a function that has a return that computes; a
// user's result names are used as they are. On, Begin and End are
// inlined: a disabled probe costs On's compare and branch, and a compare
// and a branch at each exit. The firing is a variable of its own
// (declared with Unmetered, which is nil: naming its type would take a
// type alias, which go lines before 1.9 lack) whose address Begin and End
// take, so that it stays in memory: kept in a register across the body, as
// f := Begin() kept it, it cost the loops of large functions a register
// (docs/meterinject.md, "Figures").
//
// No instruction of the tests is an inline mark's NOP (the call exit
// below has one, on its exit's path only), and the firing is
// never loaded when it is nil. The compiler marks each inlined call with
// an instruction of the caller's that has the call's line, or else a NOP.
// The tests are the caller's own expressions, so their branches, on the
// statements' lines, stand for On's and End's marks: BeginAt(&f), a
// shape before, held its test in its own body and left a NOP in every
// firing. At the exit, f != nil compares memory with nil; End(f), before,
// loaded the firing and tested it (the engine's End, which End calls, is
// not inlined, so that no load of the firing is shared with the test).
// Expressions, not if statements, so that coverage sees no block of the
// probe's own.
//
// One kind of exit ends with End alone, End(&f), whose test of the firing
// is inside the engine: an exit reached straight (through statements that
// do not branch) from a branch, evaluated in a loop, on a boolean that
// merges paths: && or || whose right operand calls a function, or a bool
// variable assigned more than once (for again { … }),
//
//	for {
//		if s.unread < 1 && !fill(s, 1) {
//			meter__probes[3].End(&meter__f)
//			return false
//		}
//
// A branch there would cost the compiler its short circuit of the user's
// condition, each time it is evaluated; the call costs about 10
// instructions more than the test, only when the exit is taken (exits.go
// has why and when; docs/meterinject.md the figures).
//
// A root (below: a request handler, a function a go statement starts)
// with a context.Context parameter, or a handler's http.ResponseWriter and
// *http.Request, hands them to the trace its firing starts, after Begin
// said the firing is metered, so that a firing that is not pays nothing
// more than that test:
//
//	_ = meter__probes[3].On() && meter__probes[3].Begin(&meter__f) && meter__probes[3].Serving(meter__f, w, r)
//
// (Within(meter__f, ctx) for a context; in the conditional defer's block,
// before the defer). Unnamed or blank parameters are not handed on.
//
// Sources instrumented with an older shape are still taken out by Remove:
// f := Begin() and End(f); BeginAt(&f) and End(f) or EndAt(&f); On() &&
// Start(&f) and f != nil && Stop(&f) or EndAt(&f); f != nil && End(&f),
// from before the firing became a number; the conditional defer
// if f := Begin(); f.Active() { defer End(f) }; and the metered twins of
// the first versions (legacy.go). The runtime no longer has those names.
//
// The conditional defer shape,
//
//	meter__f := meter__probes[4].Unmetered()
//	if meter__probes[4].On() && meter__probes[4].Begin(&meter__f) {
//		defer meter__probes[4].End(&meter__f)
//	}
//
// defers End only for a firing that Begin says has one to do, so that a
// disabled probe costs On's compare and branch; the compiler open-codes
// the defer, and the firing stays on the stack. It is used for main, for
// functions with a defer statement of their own (they may recover, and
// their deferred calls belong to their time), for functions that call
// runtime.Goexit, or testing's FailNow, Fatal, Fatalf, SkipNow, Skip or
// Skipf, themselves (Goexit skips the returns and runs the deferred
// calls: End then runs as the goroutine ends), for functions that return
// from inside the body of a range over an iterator function (the body runs
// inside the iterator's calls: an End there would run before they
// return), for functions with no exit
// (no return, a terminating end), where a result name is blank or
// shadowed at a return that computes, where the layout gives End no line
// of its own (a return after other code on its line), and for examples
// with an output comment (go test wants it last in the body). Option
// ShapeDefer uses it everywhere. Firings that a panic, or a Goexit
// deeper down, unwinds before End are the engine's to discard.
//
// A body written on one line, "{ S }" or "{}", is split into lines (gofmt
// would do the same once it holds more than one statement). Other
// one-line layouts are left alone.
//
// # Selection
//
// Everything with a body, but, by default (Options.All turns both off):
//
//   - a function the compiler can inline (a probe would stop the inlining),
//   - a small one: at most SmallMax statements, no loop, goto, select or
//     channel operation (isSmall),
//
// unless it calls something whose cost is not bounded by what is
// instrumented (callsOut: the standard library, a driver, an interface
// method, a function value); an inlinable one whose calls out never wait
// is left out all the same where it runs only inlined (inlinedOnly: not a
// method, not exported from a library, never used as a value), its time
// being its instrumented callers'. Request handlers (net/http's shape, and
// methods of gRPC services: grpcServices) and the functions go statements
// start are always kept, and registered as roots: where traces start.
//
// Packages that the runtime itself imports are left out, with one line
// each saying why: instrumenting them would make an import cycle.
//
// The selection of a package reads the rest of its module as the user
// wrote it, whatever else the run holds, so that every route picks the
// same functions: the whole module at once, or one package at a time as
// //go:generate lines run (module.go).
//
// # Overlay, the go subcommand and the cache
//
// With Options.Overlay, nothing of the user's is written. Copies go under
// a cache directory, content-addressed (overlay.go), so that two overlays
// never share files of different content. The overlaid go.mod requires
// and replaces the runtime. What a run makes of each package is kept in
// the cache by a key of everything it depends on (cache.go): a later run
// instruments again only the packages whose key changed. Go (meterinject
// go build|test|run|install|vet) is such a run over the main module, then
// the go command with the overlay (gocmd.go).
//
// # Go lines
//
// A main module whose go line is below the runtime's (or that has none)
// gets the runtime's line, the old line's GODEBUG defaults, and in every
// .go file a //go:build header that keeps the file's old language
// version; -remove gives all of it back (golines.go).
//
// The package never imports the runtime, and user files get no import:
// they name only the registration file's array and helpers.
package inject
