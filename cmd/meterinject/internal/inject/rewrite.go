package inject

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"go/types"
	"go/version"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Shape is how a probe is placed in a function.
type Shape string

const (
	// ShapeEnd begins the firing at the top of the body and ends it
	// before each return: no frame is added, and a disabled probe costs
	// Begin's test and End's. Functions that defer, main, and a few others
	// (see the package doc) get ShapeDefer.
	ShapeEnd Shape = "end"
	// ShapeDefer is a conditional, open-coded defer of End, everywhere.
	ShapeDefer Shape = "defer"
)

// The prefix of every identifier generated code declares. If some
// identifier of a package starts with it, the package gets "meterx__",
// "meterxx__", … instead (see chooseNames).
const basePrefix = "meter__"

// names are the identifiers the generated code of one group uses.
type names struct {
	prefix string // e.g. "meter__"
	group  string // prefix + "", "test" or "x": the group's own helpers
	array  string // the probe array
}

func newNames(prefix, kind string) names {
	n := names{prefix: prefix, group: prefix + kind}
	n.array = n.group + "probes"
	return n
}

func (n names) firing() string         { return n.prefix + "f" }
func (n names) result(i int) string    { return n.prefix + "r" + strconv.Itoa(i) }
func (n names) helper(h string) string { return n.group + h }
func (n names) probe(i int) string     { return n.array + "[" + strconv.Itoa(i) + "]" }

// Helpers the registration file declares, by the calls they stand for.
const (
	hMain      = "main"      // probe.Main
	hShutdown  = "shutdown"  // probe.Shutdown, deferred by main
	hExit      = "exit"      // os.Exit's code: flush, then the code
	hFatal     = "fatal"     // a log.Fatal argument: flush, then the argument
	hFatalV    = "fatalv"    // the same, for the whole variadic slice
	hNotify    = "notify"    // signal.Notify → probe.SignalNotify
	hNotifyCtx = "notifyctx" // signal.NotifyContext → probe.SignalNotifyContext
	hStop      = "stop"      // signal.Stop → probe.SignalStop
	hReset     = "reset"     // signal.Reset → probe.SignalReset
	hIgnore    = "ignore"    // signal.Ignore → probe.SignalIgnore
)

// reroutes matches the names of the helpers that a rerouted call calls,
// for -remove.
const reroutes = "exit|fatalv?|notify|notifyctx|stop|reset|ignore"

// edit replaces src[from:to] (to == from: inserts at from).
type edit struct {
	from, to int
	text     string
	seq      int // order of edits at one offset
}

func applyEdits(src []byte, edits []edit) []byte {
	sort.SliceStable(edits, func(a, b int) bool {
		if edits[a].from != edits[b].from {
			return edits[a].from < edits[b].from
		}
		return edits[a].seq < edits[b].seq
	})
	var b bytes.Buffer
	last := 0
	for _, e := range edits {
		if e.from < last {
			panic(fmt.Sprintf("meterinject: overlapping edits at %d", e.from)) // a bug: plans never overlap
		}
		b.Write(src[last:e.from])
		b.WriteString(e.text)
		last = e.to
	}
	b.Write(src[last:])
	return b.Bytes()
}

// indentOf returns the leading blanks of the line holding off.
func indentOf(src []byte, off int) string {
	start := lineStart(src, off)
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// bodyIndent is the indentation of a block's braces: that of its closing
// brace when the brace starts its line (gofmt puts it there, even after a
// signature on several lines), else that of the line of its '{'.
func bodyIndent(src []byte, lbrace, rbrace int) string {
	if atLineStart(src, rbrace) {
		return indentOf(src, rbrace)
	}
	return indentOf(src, lbrace)
}

// braceTail matches what may follow a body's '{' on its line before the
// probe is inserted: comments.
var braceTail = regexp.MustCompile(`^(?:[ \t]*/\*[^*\n]*(?:\*+[^*/\n][^*\n]*)*\*+/)*(?:[ \t]*//[^\n]*)?`)

// fileJob is one file to instrument.
type fileJob struct {
	path  string
	src   []byte // without instrumentation
	orig  []byte // as read
	fset  *token.FileSet
	file  *ast.File
	lines *lines
	// layout facts gofmt aligns by (see layoutOK and alignedLines)
	aligned  map[ast.Node]bool // literals in aligned lists, one-line declarations next to others
	trailing map[int]bool      // lines that end in a comment after code
	info     *types.Info       // nil where the file was not type-checked (other platforms)
	pkg      *types.Package    // with info
	sites    []*site
	calls    []*rewriteCall // os.Exit, log.Fatal*, signal.Notify* to rewrite
	group    *group
}

func (j *fileJob) off(p token.Pos) int { return j.fset.File(p).Offset(p) }

// line is the physical line of off.
func (j *fileJob) line(off int) int {
	l, _ := j.lines.physical(off)
	return l
}

// breaksAlignment reports whether lines put before physical line l would
// part two lines whose trailing comments gofmt aligns together.
func (j *fileJob) breaksAlignment(l int) bool {
	return j.trailing[l-1] && j.trailing[l]
}

// alignedLayout finds what gofmt aligns in f: function literals that are
// the values of a key: value list or of a grouped declaration spanning
// lines, function declarations on one line next to others (gofmt aligns
// their bodies), and the lines that end in a comment after code.
func alignedLayout(fset *token.FileSet, f *ast.File, src []byte) (map[ast.Node]bool, map[int]bool) {
	lits := map[ast.Node]bool{}
	multi := func(a, b token.Pos) bool { return fset.Position(a).Line != fset.Position(b).Line }
	oneLine := map[int]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && !multi(fd.Pos(), fd.Body.Rbrace) {
			oneLine[fset.Position(fd.Pos()).Line] = fd
		}
	}
	for l, fd := range oneLine {
		if oneLine[l-1] != nil || oneLine[l+1] != nil {
			lits[fd] = true
		}
	}
	// An entry of an aligned list is one cell of gofmt's table while it
	// stays on one line: a literal anywhere in it, split, would end the
	// table there. An entry already on several lines ends it anyway, and
	// only its own value counts.
	entry := func(n, v ast.Node) {
		if multi(n.Pos(), n.End()) {
			if fl, ok := v.(*ast.FuncLit); ok {
				lits[fl] = true
			}
			return
		}
		ast.Inspect(v, func(m ast.Node) bool {
			if fl, ok := m.(*ast.FuncLit); ok {
				lits[fl] = true
			}
			return true
		})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CompositeLit:
			if multi(x.Lbrace, x.Rbrace) {
				for _, e := range x.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						entry(kv, kv.Value)
					}
				}
			}
		case *ast.GenDecl:
			if x.Lparen.IsValid() && len(x.Specs) > 1 {
				for _, sp := range x.Specs {
					if vs, ok := sp.(*ast.ValueSpec); ok {
						for _, v := range vs.Values {
							entry(vs, v)
						}
					}
				}
			}
		}
		return true
	})
	trailing := map[int]bool{}
	for _, g := range f.Comments {
		c := g.List[0]
		p := fset.Position(c.Slash)
		if p.Offset > 0 && !atLineStart(src, p.Offset) {
			trailing[p.Line] = true
		}
	}
	return lits, trailing
}

// sitePlan is what one site's probe needs, decided before any text is made.
type sitePlan struct {
	shape    Shape
	oneLine  bool // "{ S }" or "{}" on one line: split into lines
	endAtEnd bool // End before the closing brace
	nameRes  bool // give the unnamed results generated names
	results  []string
	returns  []*ast.ReturnStmt
	evaluate map[*ast.ReturnStmt]bool // results evaluated before End
	calls    map[*ast.ReturnStmt]bool // End alone, a call with no test (exits.go)
	endCall  bool                     // the same, at the closing brace
	why      string                   // why the defer shape, for tests
}

// instrument returns the instrumented text of j.
func instrument(j *fileJob, shape Shape) []byte {
	n := j.group.names
	var edits []edit
	for _, s := range j.sites {
		if s.skip != "" && !s.isMain {
			continue
		}
		edits = append(edits, siteEdits(j, s, n, shape)...)
	}
	for _, c := range j.calls {
		edits = append(edits, c.edits(j, n)...)
	}
	if len(edits) == 0 {
		return j.src
	}
	return applyEdits(j.src, edits)
}

// exit returns the End statement for the return r: test, or call.
func (p *sitePlan) exit(r *ast.ReturnStmt, test, call string) string {
	if p.calls[r] {
		return call
	}
	return test
}

// decideShape plans the probe of s.
func decideShape(j *fileJob, s *site, shape Shape) *sitePlan {
	src := j.src
	body := s.body
	lb, rb := j.off(body.Lbrace), j.off(body.Rbrace)
	p := &sitePlan{shape: ShapeEnd, evaluate: map[*ast.ReturnStmt]bool{}}
	p.oneLine = !bytes.Contains(src[lb:rb], []byte("\n"))
	deferShape := func(why string) *sitePlan {
		p.shape, p.why = ShapeDefer, why
		p.returns, p.endAtEnd, p.nameRes, p.evaluate = nil, false, false, nil
		return p
	}
	switch {
	case shape == ShapeDefer:
		return deferShape("-shape defer")
	case s.isMain:
		return deferShape("main")
	case hasOwnDefer(body):
		return deferShape("defers")
	case endsGoroutine(j.info, body):
		return deferShape("runtime.Goexit")
	case returnsFromRangeFunc(j.info, body):
		return deferShape("a return in a range-over-func loop")
	case outputComment(j, s):
		return deferShape("an example's output comment")
	}
	p.returns = ownNodes[*ast.ReturnStmt](body)
	last := len(body.List) == 0 || !isTerminating(body.List[len(body.List)-1])
	ft := s.funcType()
	hasResults := ft.Results != nil && len(ft.Results.List) > 0
	if len(p.returns) == 0 && !last {
		return deferShape("no exit")
	}
	p.endAtEnd = !hasResults && last
	var s0 int // the first statement of a one-line body
	if p.oneLine && len(body.List) > 0 {
		s0 = j.off(body.List[0].Pos())
	}
	// Returns must start their line, where End can be put on a line of
	// its own; in a one-line body, only the first statement can.
	for _, r := range p.returns {
		at := j.off(r.Pos())
		if p.oneLine && at != s0 || !p.oneLine && !atLineStart(src, at) {
			return deferShape("return not at a line start")
		}
	}
	if p.endAtEnd && !p.oneLine && !atLineStart(src, rb) {
		return deferShape("closing brace not at a line start")
	}
	if !p.oneLine {
		for _, r := range p.returns {
			if j.breaksAlignment(j.line(j.off(r.Pos()))) {
				return deferShape("trailing comments aligned across a return")
			}
		}
		if p.endAtEnd && j.breaksAlignment(j.line(rb)) {
			return deferShape("trailing comments aligned across the closing brace")
		}
	}
	var resultNames []*ast.Ident
	named := false
	if hasResults {
		for _, f := range ft.Results.List {
			if len(f.Names) == 0 {
				resultNames = append(resultNames, nil)
			}
			for _, id := range f.Names {
				named = true
				resultNames = append(resultNames, id)
			}
		}
	}
	for _, r := range p.returns {
		if len(r.Results) == 0 || !needsEval(j.info, r) {
			continue
		}
		if len(resultNames) == 0 {
			return deferShape("results without a result list") // does not compile
		}
		at := j.off(r.Pos())
		e0, e1 := j.off(r.Results[0].Pos()), j.off(r.Results[len(r.Results)-1].End())
		if string(src[at:e0]) != "return " || j.lines.directiveIn(at, e1) {
			return deferShape("return's layout")
		}
		if _, ok := j.lines.prefixDirective(e0); !ok {
			return deferShape("return's layout")
		}
		if !sameAsAssignment(src[e0:e1], len(resultNames)) {
			return deferShape("results gofmt would space otherwise in an assignment")
		}
		if named {
			for _, id := range resultNames {
				if id.Name == "_" || shadowedAt(j, s, id, r) {
					return deferShape("result shadowed or blank")
				}
			}
		}
		p.evaluate[r] = true
	}
	if len(p.evaluate) > 0 {
		p.results = make([]string, len(resultNames))
		for i, id := range resultNames {
			if named {
				p.results[i] = id.Name
			} else {
				p.results[i] = j.group.names.result(i)
			}
		}
		if !named {
			p.nameRes = true
			for _, f := range ft.Results.List {
				if _, ok := j.lines.prefixDirective(j.off(f.Type.Pos())); !ok {
					return deferShape("results' layout")
				}
				if _, ok := j.lines.closeDirective(j.off(f.Type.End()), ")"); !ok {
					return deferShape("results' layout")
				}
			}
		}
	}
	if p.oneLine {
		ind := bodyIndent(src, lb, rb) + "\t"
		for _, r := range p.returns {
			if pr := j.lines.at(j.off(r.Pos())); pr.col != 0 && pr.col-len(ind) < 1 {
				return deferShape("one-line body's layout")
			}
		}
	}
	p.calls, p.endCall = callExits(j.info, body, p.returns, p.endAtEnd)
	return p
}

// sameAsAssignment reports whether gofmt prints the results of a return
// as they are written when they are the right-hand side of an assignment.
// It may not: it spaces binary expressions by their depth in the
// statement, which differs ("len(s) * n" in a return of three results is
// "len(s)*n" in an assignment of three), and it indents a return's
// results that span lines as a whole, an assignment's not; the user's
// bytes are never changed.
func sameAsAssignment(exprs []byte, n int) bool {
	lhs := make([]string, n)
	for i := range lhs {
		lhs[i] = "r" + strconv.Itoa(i)
	}
	// gofmt indents the lines of an assignment's values as it indents a
	// return's, or the body of a literal among them moves.
	body := func(stmt string) ([]byte, bool) {
		out, err := format.Source([]byte("package p\n\nfunc _() {\n\t" + stmt + string(exprs) + "\n}\n"))
		if err != nil {
			return nil, false
		}
		i := bytes.Index(out, []byte(stmt))
		if i < 0 {
			return nil, false
		}
		return out[i+len(stmt):], true
	}
	out, ok := body(strings.Join(lhs, ", ") + " = ")
	ret, ok2 := body("return ")
	if !ok || !ok2 || !bytes.Equal(out, ret) {
		return false
	}
	trim := func(b []byte) string {
		var s strings.Builder
		for _, l := range strings.Split(string(b), "\n") {
			s.WriteString(strings.TrimLeft(l, " \t") + "\n")
		}
		return s.String()
	}
	return strings.Contains(trim(out), trim(exprs))
}

// oneLineLayout reports whether a body on one line is "{}" or "{ S }",
// the layouts gofmt keeps, which are split into lines; and where S
// starts and ends. A body on one line written otherwise gets no probe.
func oneLineLayout(src []byte, lb, rb int) (s0, s1 int, ok bool) {
	if rb == lb+1 {
		return rb, rb, true
	}
	if rb-lb < 4 || src[lb+1] != ' ' || src[rb-1] != ' ' || src[lb+2] == ' ' || src[lb+2] == '\t' || src[rb-2] == ' ' || src[rb-2] == '\t' {
		return 0, 0, false
	}
	return lb + 2, rb - 1, true
}

// layoutOK reports whether the body of s has a layout the probe can be
// put into and taken out of byte for byte.
func layoutOK(j *fileJob, s *site) bool {
	lb, rb := j.off(s.body.Lbrace), j.off(s.body.Rbrace)
	if !bytes.Contains(j.src[lb:rb], []byte("\n")) {
		_, _, ok := oneLineLayout(j.src, lb, rb)
		if !ok || len(s.body.List) > 1 {
			return false // gofmt would put each statement on a line of its own
		}
		// Split, the body would end gofmt's alignment of the lines around
		// it (the values of a table, trailing comments): their padding,
		// which is the user's text, would no longer be gofmt's.
		if s.lit != nil && j.aligned[s.lit] || s.decl != nil && j.aligned[s.decl] || j.trailing[j.line(lb)] {
			return false
		}
		if rbDir := j.lines.at(rb); rbDir.col != 0 && rbDir.col-len(indentOf(j.src, lb)) < 1 {
			return false
		}
		return true
	}
	at := lb + 1 + len(braceTail.Find(j.src[lb+1:]))
	return isLineEnd(j.src, at)
}

// splitDepth counts the instrumented bodies on one line that hold s's body,
// itself on one line, and are split into lines: each puts the line that
// s's body begins on one level deeper than the source's.
func splitDepth(j *fileJob, s *site) int {
	lb, rb := j.off(s.body.Lbrace), j.off(s.body.Rbrace)
	if bytes.Contains(j.src[lb:rb], []byte("\n")) {
		return 0
	}
	n := 0
	for _, t := range j.sites {
		if t == s || t.skip != "" && !t.isMain {
			continue
		}
		tl, tr := j.off(t.body.Lbrace), j.off(t.body.Rbrace)
		if tl < lb && rb < tr && !bytes.Contains(j.src[tl:tr], []byte("\n")) && layoutOK(j, t) {
			n++
		}
	}
	return n
}

// siteEdits returns the edits that put the probe of s into j.
func siteEdits(j *fileJob, s *site, n names, shape Shape) []edit {
	src := j.src
	lb, rb := j.off(s.body.Lbrace), j.off(s.body.Rbrace)
	rind := bodyIndent(src, lb, rb) + strings.Repeat("\t", splitDepth(j, s))
	ind := rind + "\t"
	fv, pr := n.firing(), n.probe(s.index)
	// The exit: the test of the firing in memory is the function's own, so
	// that it is a compare and a branch with no inline mark (doc.go).
	end := "_ = " + fv + " != 0 && " + pr + ".End(&" + fv + ")"
	// Or End alone, whose test is the engine's, where a branch would cost
	// the condition that leads to the exit its short circuit (exits.go).
	endCall := pr + ".End(&" + fv + ")"
	if !layoutOK(j, s) {
		return nil
	}

	var p *sitePlan
	if s.skip == "" {
		p = decideShape(j, s, shape)
	} else {
		p = &sitePlan{shape: ShapeDefer, oneLine: !bytes.Contains(src[lb:rb], []byte("\n"))}
	}
	s.plan = p
	closing := end // before the closing brace
	if p.endCall {
		closing = endCall
	}

	// The lines put at the top of the body.
	var top []string
	if s.isMain && s.isProgramMain {
		top = append(top, n.helper(hMain)+"()")
	}
	if s.isMain {
		top = append(top, "defer "+n.helper(hShutdown)+"()")
	}
	if s.skip == "" {
		// The firing lives in a variable whose address is taken, so that
		// it stays in memory, out of the body's registers. The test is an
		// expression of the function's own, whose branch stands for On's
		// inline mark (doc.go). A root with a context or a request hands
		// it to the trace its firing starts, after Begin said the firing
		// is metered (probe/request.go).
		hand := ""
		if kind, args, ok := strings.Cut(s.request, ":"); ok {
			if kind == "ctx" {
				hand = pr + ".Within(" + fv + ", " + args + ")"
			} else {
				hand = pr + ".Serving(" + fv + ", " + args + ")"
			}
		}
		if callsRecover(j.info, s.body) {
			// The moment a panic it recovers is done with it: deferred
			// first, it runs last, as it returns (probe.Probe.Panicking).
			top = append(top, "defer "+pr+".Panicking()")
		}
		top = append(top, fv+" := "+pr+".Unmetered()")
		switch {
		case p.shape == ShapeDefer && hand != "":
			top = append(top, "if "+pr+".On() && "+pr+".Begin(&"+fv+") {", "\t"+hand, "\tdefer "+pr+".End(&"+fv+")", "}")
		case p.shape == ShapeDefer:
			// End is deferred only for a firing Begin says it has to end.
			top = append(top, "if "+pr+".On() && "+pr+".Begin(&"+fv+") {", "\tdefer "+pr+".End(&"+fv+")", "}")
		case hand != "":
			top = append(top, "_ = "+pr+".On() && "+pr+".Begin(&"+fv+") && "+hand)
		default:
			top = append(top, "_ = "+pr+".On() && "+pr+".Begin(&"+fv+")")
		}
	}
	var edits []edit
	seq := 0
	add := func(from, to int, text string) {
		seq++
		edits = append(edits, edit{from, to, text, seq})
	}
	if s.skip == "" && !p.oneLine {
		// After each go statement of the body's own that ends its line, a
		// new stretch of the firing's own time (probe.Probe.Mark), on a
		// line of its own, the next line's position given back after it.
		// Added first, so that where an End goes at the same place (the
		// line of the closing brace, or of a return), the mark precedes it.
		mark := "_ = " + fv + " != 0 && " + pr + ".Mark(&" + fv + ")"
		lastInLoop := loopLastGos(j, s.body)
		for _, g := range ownNodes[*ast.GoStmt](s.body) {
			e := j.off(g.End())
			if !isLineEnd(src, e) || lastInLoop[g] {
				continue // a statement or a comment follows on its line
			}
			ls := e + bytes.IndexByte(src[e:], '\n') + 1
			add(ls, ls, indentOf(src, j.off(g.Pos()))+mark+"\n"+j.lines.lineDirective(ls))
		}
		// Around each wait of the body's own, Wait and Woke (waits.go),
		// where a Woke and a Wait go at the same place, the Woke first:
		// it ends the wait on the line above.
		type line struct {
			at   int
			woke bool
			text string
		}
		var ls []line
	sites:
		for _, site := range waitSites(j.info, s.body) {
			var lines []line
			for i, m := range site.marks {
				at, call := j.off(m.at), "Wait"
				switch {
				case m.woke && isLineEnd(src, at):
					at, call = at+bytes.IndexByte(src[at:], '\n')+1, "Woke"
				case !m.woke && atLineStart(src, at):
					at = lineStart(src, at)
				case i == 0 || site.all:
					continue sites // a statement or a comment shares its line
				default:
					continue
				}
				ind := indentOf(src, j.off(m.indent))
				if m.deeper {
					ind += "\t"
				}
				lines = append(lines, line{at, m.woke, ind + "_ = " + fv + " != 0 && " + pr + "." + call + "(&" + fv + ")\n" + j.lines.lineDirective(at)})
			}
			ls = append(ls, lines...)
		}
		sort.SliceStable(ls, func(a, b int) bool { return ls[a].at < ls[b].at || ls[a].at == ls[b].at && ls[a].woke && !ls[b].woke })
		for _, l := range ls {
			add(l.at, l.at, l.text)
		}
	}
	if p.oneLine {
		s0, s1, _ := oneLineLayout(src, lb, rb)
		var b strings.Builder
		for _, l := range top {
			b.WriteString("\n" + ind + l)
		}
		if s0 == rb { // "{}"
			if p.endAtEnd {
				b.WriteString("\n" + ind + closing)
			}
			b.WriteString("\n//line " + j.lines.at(rb).spec(len(rind)) + "\n" + rind)
			add(lb+1, rb, b.String())
		} else {
			if len(p.returns) > 0 && !p.evaluate[p.returns[0]] {
				b.WriteString("\n" + ind + p.exit(p.returns[0], end, endCall)) // End before the return that is S's first statement
			}
			d, _ := j.lines.prefixDirective(s0)
			b.WriteString("\n" + ind + strings.TrimPrefix(d, " "))
			add(lb+1, s0, b.String())
			var c strings.Builder
			if p.endAtEnd {
				c.WriteString("\n" + ind + closing)
			}
			c.WriteString("\n//line " + j.lines.at(rb).spec(len(rind)) + "\n" + rind)
			edits = append(edits, edit{s1, rb, c.String(), 1 << 30}) // after what ends at s1
		}
	} else {
		at := lb + 1 + len(braceTail.Find(src[lb+1:]))
		var b strings.Builder
		for _, l := range top {
			b.WriteString("\n" + ind + l)
		}
		b.WriteString(j.lines.newlineDirective(at))
		add(at, at, b.String())
		if p.endAtEnd {
			ls := lineStart(src, rb)
			add(ls, ls, ind+closing+"\n"+j.lines.lineDirective(ls))
		}
	}
	if p.shape == ShapeDefer {
		return edits
	}
	for _, r := range p.returns {
		at := j.off(r.Pos())
		rind := indentOf(src, at)
		if p.oneLine {
			rind = ind
		}
		if !p.evaluate[r] {
			if !p.oneLine {
				ls := lineStart(src, at)
				add(ls, ls, rind+p.exit(r, end, endCall)+"\n"+j.lines.lineDirective(ls))
			}
			continue
		}
		e0, e1 := j.off(r.Results[0].Pos()), j.off(r.Results[len(r.Results)-1].End())
		d, _ := j.lines.prefixDirective(e0)
		add(at, e0, strings.Join(p.results, ", ")+" ="+d)
		var b strings.Builder
		b.WriteString("\n" + rind + p.exit(r, end, endCall) + "\n//line " + j.lines.at(at).spec(len(rind)) + "\n" + rind + "return")
		switch {
		case p.oneLine && e1 == rb-1:
			// the closing edit follows
		case isLineEnd(src, e1):
			b.WriteString(j.lines.newlineDirective(e1))
		default:
			b.WriteString(j.lines.suffixDirective(e1))
		}
		add(e1, e1, b.String())
	}
	if p.nameRes {
		ft := s.funcType()
		res := ft.Results
		if !res.Opening.IsValid() {
			t := res.List[0].Type
			t0, t1 := j.off(t.Pos()), j.off(t.End())
			d, _ := j.lines.prefixDirective(t0)
			c, _ := j.lines.closeDirective(t1, ")")
			add(t0, t0, "("+p.results[0]+d)
			add(t1, t1, c)
		} else {
			for i, f := range res.List {
				t0 := j.off(f.Type.Pos())
				d, _ := j.lines.prefixDirective(t0)
				add(t0, t0, p.results[i]+d)
			}
		}
	}
	return edits
}

// ownNodes returns the nodes of type T of body's own (not those of
// function literals inside it), in source order: its go statements, its
// return statements.
func ownNodes[T ast.Node](body *ast.BlockStmt) []T {
	var ns []T
	ast.Inspect(body, func(n ast.Node) bool {
		if _, lit := n.(*ast.FuncLit); lit {
			return false
		}
		if x, ok := n.(T); ok {
			ns = append(ns, x)
		}
		return true
	})
	return ns
}

// loopLastGos returns the go statements of body's own that go vet's
// loopclosure check looks at: in a file whose language version is before
// go 1.22 (loop variables per loop) or unknown, the last statements of a
// loop's body, and of the branches of an if, switch or select that is
// last there, recursively. A Mark after one of them would hide a captured
// loop variable from vet, so it gets none: the CPU time of starting that
// goroutine stays in the stretch that goes on.
func loopLastGos(j *fileJob, body *ast.BlockStmt) map[*ast.GoStmt]bool {
	if j.info != nil {
		if v := j.info.FileVersions[j.file]; v != "" && version.Compare(v, "go1.22") >= 0 {
			return nil
		}
	}
	last := map[*ast.GoStmt]bool{}
	var visit func([]ast.Stmt)
	visit = func(list []ast.Stmt) {
		if len(list) == 0 {
			return
		}
		switch s := list[len(list)-1].(type) {
		case *ast.GoStmt:
			last[s] = true
		case *ast.IfStmt:
			for s != nil {
				visit(s.Body.List)
				switch e := s.Else.(type) {
				case *ast.BlockStmt:
					visit(e.List)
					s = nil
				case *ast.IfStmt:
					s = e
				default:
					s = nil
				}
			}
		case *ast.ForStmt:
			visit(s.Body.List)
		case *ast.RangeStmt:
			visit(s.Body.List)
		case *ast.SwitchStmt:
			for _, c := range s.Body.List {
				visit(c.(*ast.CaseClause).Body)
			}
		case *ast.TypeSwitchStmt:
			for _, c := range s.Body.List {
				visit(c.(*ast.CaseClause).Body)
			}
		case *ast.SelectStmt:
			for _, c := range s.Body.List {
				visit(c.(*ast.CommClause).Body)
			}
		}
	}
	for _, n := range ownNodes[ast.Stmt](body) {
		switch l := n.(type) {
		case *ast.ForStmt:
			visit(l.Body.List)
		case *ast.RangeStmt:
			visit(l.Body.List)
		}
	}
	return last
}

// hasOwnDefer reports whether body holds a defer statement of its own
// (not one of a function literal inside it).
func hasOwnDefer(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.DeferStmt:
			found = true
		}
		return !found
	})
	return found
}

// callsRecover reports whether body calls the builtin recover itself: the
// function may stop a panic, when a panic runs it as a deferred call.
// Without type information (a file for another platform), a call of any
// function named recover counts.
func callsRecover(info *types.Info, body *ast.BlockStmt) bool {
	return holds(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return false
		}
		id, ok := ast.Unparen(c.Fun).(*ast.Ident)
		if !ok || id.Name != "recover" {
			return false
		}
		if info == nil {
			return true
		}
		b, ok := info.Uses[id].(*types.Builtin)
		return ok && b.Name() == "recover"
	})
}

// returnsFromRangeFunc reports whether body returns, itself, from inside
// the loop body of a range over a function (an iterator, go1.23). The
// compiler makes that loop body a function that the iterator calls, deep
// in the iterator's own calls: an End before such a return would run
// there, with the iterator's firings still open above the function's,
// and the engine would take them as unwound and give the function their
// time. So the function gets the defer shape: its End runs as it returns,
// after the iterator has. Without type information (a file for another
// platform), a return inside any range loop counts.
func returnsFromRangeFunc(info *types.Info, body *ast.BlockStmt) bool {
	return holds(body, func(n ast.Node) bool {
		r, ok := n.(*ast.RangeStmt)
		if !ok {
			return false
		}
		if info != nil {
			t := info.TypeOf(r.X)
			if t == nil {
				return false
			}
			if _, fn := t.Underlying().(*types.Signature); !fn {
				return false
			}
		}
		return holds(r.Body, func(n ast.Node) bool {
			_, ok := n.(*ast.ReturnStmt)
			return ok
		})
	})
}

// endsGoroutine reports whether body calls, itself, runtime.Goexit or one
// of the testing methods that call it (FailNow, Fatal, Fatalf, SkipNow,
// Skip, Skipf). Goexit runs the deferred calls and skips the returns, so
// such a function gets the defer shape: its End runs as its goroutine
// ends, and its firing keeps its time. With End at the returns, the
// engine would drop the firing unended, and a goroutine's body that ends
// so (a worker that quits, a test helper that fails) would keep no time.
// A callee's Goexit, deeper down, is not seen. Without type information
// (a file for another platform), none is.
func endsGoroutine(info *types.Info, body *ast.BlockStmt) bool {
	if info == nil {
		return false
	}
	return holds(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return false
		}
		var id *ast.Ident
		switch f := ast.Unparen(c.Fun).(type) {
		case *ast.Ident:
			id = f
		case *ast.SelectorExpr:
			id = f.Sel
		default:
			return false
		}
		fn, ok := info.Uses[id].(*types.Func)
		if !ok || fn.Pkg() == nil {
			return false
		}
		switch fn.Pkg().Path() {
		case "runtime":
			return fn.Name() == "Goexit"
		case "testing":
			switch fn.Name() {
			case "FailNow", "Fatal", "Fatalf", "SkipNow", "Skip", "Skipf":
				return true
			}
		}
		return false
	})
}

// outputRE is go test's output comment of an example (go/doc).
var outputRE = regexp.MustCompile(`(?i)^[[:space:]]*(unordered )?output:`)

// outputComment reports whether s is an example with an output comment,
// which go test requires to be the last comment of the body: nothing may
// be added after it.
func outputComment(j *fileJob, s *site) bool {
	if s.decl == nil || s.decl.Recv != nil || !strings.HasPrefix(s.decl.Name.Name, "Example") || !strings.HasSuffix(j.path, "_test.go") {
		return false
	}
	for _, g := range j.file.Comments {
		if g.Pos() > s.body.Lbrace && g.End() < s.body.Rbrace && outputRE.MatchString(g.Text()) {
			return true
		}
	}
	return false
}

// needsEval reports whether a return's results do work that belongs to
// the firing: a call (not a conversion or a cheap builtin), a receive, an
// allocation or a function literal. Without type information every call
// and composite literal counts.
func needsEval(info *types.Info, r *ast.ReturnStmt) bool {
	return evaluates(info, r.Results)
}

// evaluates reports whether computing exprs does work of its own: see
// needsEval.
func evaluates(info *types.Info, exprs []ast.Expr) bool {
	found := false
	for _, e := range exprs {
		ast.Inspect(e, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncLit:
				found = true
			case *ast.UnaryExpr:
				if x.Op == token.ARROW || x.Op == token.AND {
					found = true
				}
			case *ast.CompositeLit:
				if info == nil {
					found = true
				} else if t := info.TypeOf(x); t != nil {
					switch t.Underlying().(type) {
					case *types.Map, *types.Slice:
						found = true
					}
				}
			case *ast.BinaryExpr:
				if x.Op == token.ADD && info != nil && info.TypeOf(x) != nil {
					if t, ok := info.TypeOf(x).Underlying().(*types.Basic); ok && t.Info()&types.IsString != 0 {
						if tv, ok := info.Types[x]; !ok || tv.Value == nil {
							found = true // concatenation allocates
						}
					}
				}
			case *ast.CallExpr:
				if info == nil || !cheapCall(info, x) {
					found = true
				}
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// cheapCall reports whether a call is a conversion to a non-string type
// or a builtin that neither allocates nor calls.
func cheapCall(info *types.Info, c *ast.CallExpr) bool {
	if tv, ok := info.Types[c.Fun]; ok && tv.IsType() {
		if b, ok := tv.Type.Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
			return false
		}
		return true
	}
	if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok {
		if b, ok := info.Uses[id].(*types.Builtin); ok {
			switch b.Name() {
			case "len", "cap", "min", "max", "real", "imag", "complex":
				return true
			}
		}
	}
	return false
}

// shadowedAt reports whether the result named id is not what its name
// refers to at r (a variable of the same name declared in between).
// Without type information, any other declaration of that name in the
// body counts.
func shadowedAt(j *fileJob, s *site, id *ast.Ident, r *ast.ReturnStmt) bool {
	if j.info != nil {
		obj := j.info.Defs[id]
		if obj == nil {
			return true
		}
		sc := j.info.Scopes[s.funcType()]
		if sc == nil {
			return true
		}
		inner := sc.Innermost(r.Pos())
		if inner == nil {
			return true
		}
		_, got := inner.LookupParent(id.Name, r.Pos())
		return got != obj
	}
	found := false
	ast.Inspect(s.body, func(n ast.Node) bool {
		if x, ok := n.(*ast.Ident); ok && x.Name == id.Name && x.Obj != id.Obj {
			found = true
		}
		return !found
	})
	return found
}

// isTerminating reports whether s is a terminating statement (Go spec).
func isTerminating(s ast.Stmt) bool {
	switch x := s.(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return x.Tok == token.GOTO
	case *ast.ExprStmt:
		if c, ok := x.X.(*ast.CallExpr); ok {
			if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok && id.Name == "panic" && (id.Obj == nil) {
				return true
			}
		}
	case *ast.BlockStmt:
		return len(x.List) > 0 && isTerminating(x.List[len(x.List)-1])
	case *ast.IfStmt:
		return x.Else != nil && isTerminating(x.Body) && isTerminating(x.Else)
	case *ast.ForStmt:
		return x.Cond == nil && !hasBreak(x.Body, "")
	case *ast.LabeledStmt:
		switch y := x.Stmt.(type) {
		case *ast.ForStmt:
			return y.Cond == nil && !hasBreak(y.Body, x.Label.Name)
		case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			return clausesTerminate(y, x.Label.Name)
		}
		return isTerminating(x.Stmt)
	case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
		return clausesTerminate(x, "")
	}
	return false
}

// clausesTerminate: a switch or select with no break to it, a default
// (switch), and clauses that each end in a terminating statement or a
// fallthrough.
func clausesTerminate(s ast.Stmt, label string) bool {
	var body *ast.BlockStmt
	needDefault := true
	switch x := s.(type) {
	case *ast.SwitchStmt:
		body = x.Body
	case *ast.TypeSwitchStmt:
		body = x.Body
	case *ast.SelectStmt:
		body, needDefault = x.Body, false
	}
	hasDefault := false
	for _, c := range body.List {
		var list []ast.Stmt
		switch cc := c.(type) {
		case *ast.CaseClause:
			list = cc.Body
			if cc.List == nil {
				hasDefault = true
			}
		case *ast.CommClause:
			list = cc.Body
		}
		if len(list) == 0 {
			return false
		}
		lastStmt := list[len(list)-1]
		if br, ok := lastStmt.(*ast.BranchStmt); ok && br.Tok == token.FALLTHROUGH {
			if hasBreak(&ast.BlockStmt{List: list}, label) {
				return false
			}
			continue
		}
		if !isTerminating(lastStmt) || hasBreak(&ast.BlockStmt{List: list}, label) {
			return false
		}
	}
	return hasDefault || !needDefault
}

// hasBreak reports whether root holds a break that leaves the statement
// whose body root is: an unlabelled break outside any nested for, switch
// or select, or a break to label.
func hasBreak(root ast.Node, label string) bool {
	found := false
	var walk func(n ast.Node, nested bool)
	walk = func(n ast.Node, nested bool) {
		ast.Inspect(n, func(x ast.Node) bool {
			if found {
				return false
			}
			switch y := x.(type) {
			case *ast.FuncLit:
				return false
			case *ast.BranchStmt:
				if y.Tok == token.BREAK && (y.Label == nil && !nested || y.Label != nil && label != "" && y.Label.Name == label) {
					found = true
				}
			case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				if x != n {
					walk(x, true)
					return false
				}
			}
			return true
		})
	}
	walk(root, false)
	return found
}
