package inject

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
)

// Stripping reverses each kind of edit that instrument makes. It finds
// them through the syntax tree of the instrumented file (a statement, a
// result list, a call) and removes them only where the text around is
// exactly what instrument writes, so a user's own code is never touched.
// What it cannot account for (generated names left after the cuts: the
// text was edited by hand) is an error, and nothing is written.

// prefixInFile finds what only generated code writes: a probe of the
// array, or a call of a registration file's helper as instrument writes
// it, with its line directive (a file whose probes were all left out may
// hold only reroutes of os.Exit and the like).
var prefixInFile = regexp.MustCompile(`\b(meter(?:x*)__)(?:test|x)?(?:probes\[\d+\]|(?:` + reroutes + `)\( /\*line |shutdown\(\)\n//line )`)

// instrumented reports whether src holds anything instrument adds.
func instrumented(src []byte) bool {
	return prefixInFile.Match(src) || bytes.Contains(src, []byte(twinMarker))
}

// stripper holds the patterns of one prefix.
type stripper struct {
	src      []byte
	fset     *token.FileSet
	f        *ast.File
	q        string // the prefix, quoted for a regexp
	array    *regexp.Regexp
	end      *regexp.Regexp // a generated End statement, whole
	top      *regexp.Regexp // what follows a body's '{'
	closing  *regexp.Regexp // the end of a one-line body, before its '}'
	endLine  *regexp.Regexp // "IND End\n//line X\n" at the end of a text
	mark     *regexp.Regexp // "IND Mark\n//line X\n", a whole text
	endRe    string         // an End statement, as a regular expression
	leftover *regexp.Regexp
	cuts     []cut
}

type cut struct {
	from, to int
	text     string
}

const dirInline = ` /\*line [^*\n]*\*/`

func newStripper(fset *token.FileSet, f *ast.File, src []byte, prefix string) *stripper {
	q := regexp.QuoteMeta(prefix)
	arr := q + `(?:test|x)?probes\[\d+\]`
	fv := q + `f`
	// End statements: _ = f != nil && End(&f), or End(&f) alone
	// (exits.go), after f := Unmetered() and _ = On() && Begin(&f); the
	// defer shape, f := Unmetered() and if On() && Begin(&f) { defer
	// End(&f) }. The shapes of earlier versions are taken out too:
	// _ = f != nil && Stop(&f) or EndAt(&f) after _ = On() && Start(&f);
	// End(f) or EndAt(&f) after BeginAt(&f); End(f) after f := Begin();
	// and the defer shape if f := Begin(); f.Active() { defer End(f) }.
	// What a root hands the trace it starts, after Begin: Within(f, ctx)
	// or Serving(f, w, r), its arguments the function's parameters or nil.
	hand := arr + `\.(?:Within|Serving)\(` + fv + `(?:, [^(),\n]+)+\)`
	endCall := `(?:` + arr + `\.End(?:\(` + fv + `\)|\(&` + fv + `\)|At\(&` + fv + `\))` +
		`|_ = ` + fv + ` != (?:0|nil) && ` + arr + `\.(?:End|Stop)\(&` + fv + `\))`
	unmetered := fv + ` := ` + arr + `\.Unmetered\(\)\n[ \t]*`
	gen := `(?:` + q + `(?:test|x)?main\(\)` +
		`|defer ` + q + `(?:test|x)?shutdown\(\)` +
		`|(?:_ = |defer )` + arr + `\.Panicking\(\)` +
		`|` + unmetered + `_ = ` + arr + `\.On\(\) && ` + arr + `\.(?:Begin|Start)\(&` + fv + `\)(?: && ` + hand + `)?` +
		`|` + unmetered + `if ` + arr + `\.On\(\) && ` + arr + `\.Begin\(&` + fv + `\) \{\n(?:[ \t]*` + hand + `\n)?[ \t]*defer ` + arr + `\.End\(&` + fv + `\)\n[ \t]*\}` +
		`|` + unmetered + arr + `\.BeginAt\(&` + fv + `\)` +
		`|` + fv + ` := ` + arr + `\.Begin\(\)` +
		`|if ` + fv + ` := ` + arr + `\.Begin\(\); ` + fv + `\.Active\(\) \{\n[ \t]*defer ` + arr + `\.End\(` + fv + `\)\n[ \t]*\}` +
		`|` + endCall + `)`
	return &stripper{
		src: src, fset: fset, f: f, q: q,
		array: regexp.MustCompile(`^` + arr + `$`),
		endRe: endCall,
		end:   regexp.MustCompile(`^` + endCall + `$`),
		top: regexp.MustCompile(`^\n(?:[ \t]*` + gen + `\n)*[ \t]*` + gen +
			`(?:(\n//line [^\n\r]*)\r?\n|(\n[ \t]*/\*line [^*\n]*\*/ )|(\n//line [^\n]*\n[ \t]*)\})`),
		closing:  regexp.MustCompile(`(?:\n[ \t]*` + endCall + `)?\n//line [^\n]*\n[ \t]*$`),
		endLine:  regexp.MustCompile(`\n[ \t]*` + endCall + `\n//line [^\n]*\n$`),
		mark:     regexp.MustCompile(`^[ \t]*_ = ` + fv + ` != 0 && ` + arr + `\.(?:Mark|Wait|Woke)\(&` + fv + `\)\n//line [^\n]*\n$`),
		leftover: regexp.MustCompile(arr + `|\b` + q + `(?:test|x)?(?:f|r\d+|main|shutdown|` + reroutes + `)\b`),
	}
}

func (s *stripper) off(p token.Pos) int { return s.fset.File(p).Offset(p) }

func (s *stripper) add(from, to int, text string) {
	for _, c := range s.cuts {
		if from < c.to && c.from < to || from == c.from && to == c.to {
			return // already cut (a one-line body's first line holds an End)
		}
	}
	s.cuts = append(s.cuts, cut{from, to, text})
}

// inComment reports whether the byte at offset off of f is in a comment.
func inComment(fset *token.FileSet, f *ast.File, off int) bool {
	tf := fset.File(f.FileStart)
	for _, g := range f.Comments {
		if tf.Offset(g.Pos()) <= off && off < tf.Offset(g.End()) {
			return true
		}
	}
	return false
}

// strip removes what instrument added to src.
func strip(fset *token.FileSet, f *ast.File, src []byte) ([]byte, error) {
	if bytes.Contains(src, []byte(twinMarker)) || legacyInsertion.Match(src) {
		src = stripLegacy(fset, f, src)
		var err error
		if fset, f, err = reparse(fset, f, src); err != nil {
			return nil, err
		}
	}
	// The generated prefix is the longest one found: a user's identifier
	// may start with "meter__", and then the generated code's do not.
	prefix := ""
	for _, m := range prefixInFile.FindAllSubmatch(src, -1) {
		if len(m[1]) > len(prefix) {
			prefix = string(m[1])
		}
	}
	if prefix == "" {
		return src, nil
	}
	s := newStripper(fset, f, src, prefix)
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncDecl:
			if x.Body != nil {
				s.body(x.Type, x.Body)
			}
		case *ast.FuncLit:
			s.body(x.Type, x.Body)
		case *ast.CallExpr:
			s.call(x)
		}
		return true
	})
	// Every generated name must be inside a cut.
	sort.Slice(s.cuts, func(a, b int) bool { return s.cuts[a].from < s.cuts[b].from })
	for _, loc := range s.leftover.FindAllIndex(src, -1) {
		if inComment(fset, f, loc[0]) {
			continue // a comment that shows generated code is the user's
		}
		inside := false
		for _, c := range s.cuts {
			if loc[0] >= c.from && loc[1] <= c.to {
				inside = true
				break
			}
		}
		if !inside {
			p := fset.File(f.FileStart).PositionFor(f.FileStart+token.Pos(loc[0]), false)
			return nil, &PosError{p, "cannot take out the instrumentation here: it is not as meterinject wrote it (edited by hand?)"}
		}
	}
	var b bytes.Buffer
	last := 0
	for _, c := range s.cuts {
		if c.from < last {
			continue
		}
		b.Write(src[last:c.from])
		b.WriteString(c.text)
		last = c.to
	}
	b.Write(src[last:])
	return b.Bytes(), nil
}

func reparse(fset *token.FileSet, f *ast.File, src []byte) (*token.FileSet, *ast.File, error) {
	name := fset.File(f.FileStart).Name()
	fset = token.NewFileSet()
	g, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	return fset, g, err
}

// body takes out the probe of one function: the lines after '{', the End
// statements, the results' names.
func (s *stripper) body(ft *ast.FuncType, body *ast.BlockStmt) {
	src := s.src
	lb, rb := s.off(body.Lbrace), s.off(body.Rbrace)
	at := lb + 1 + len(braceTail.Find(src[lb+1:]))
	expanded := false
	if m := s.top.FindSubmatchIndex(src[at : rb+1]); m != nil {
		switch {
		case m[2] >= 0 && len(bytes.TrimLeft(src[at+m[1]:rb], " \t")) == 0 && s.directiveLine(src[at+m[2]:at+m[3]]) == s.lineOf(lb):
			s.add(lb+1, rb, "") // "{}": the directive gives '}' its place on the line of '{'
		case m[2] >= 0: // the body as it was written, on lines
			s.add(at, at+m[3], "")
		case m[4] >= 0: // "{ S }" split into lines
			s.add(lb+1, at+m[5], " ")
			expanded = true
		default: // "{}", or "{\n}" with the directive on the line of the '{'
			dir := src[at+m[6] : at+m[7]]
			if s.directiveLine(dir) == s.lineOf(lb) {
				s.add(lb+1, rb, "")
			} else {
				s.add(at, at+m[6]+bytes.IndexByte(dir[1:], '\n')+1, "")
			}
		}
	}
	if expanded {
		if m := s.closing.FindIndex(src[lb:rb]); m != nil {
			s.add(lb+m[0], rb, " ")
		}
	}
	s.results(ft)
	s.ends(body, rb, expanded)
	s.flushes(body)
	s.marks(body)
}

// directiveLine is the line a "\n//line …\n" directive names.
func (s *stripper) directiveLine(dir []byte) int {
	t := string(bytes.TrimSpace(dir))
	t = t[len("//line "):]
	i, n, ok := trailingNumber(t)
	if !ok {
		return -1
	}
	if _, n2, ok2 := trailingNumber(t[:i]); ok2 {
		return n2
	}
	return n
}

// lineOf is the line the compiler gives the byte at off.
func (s *stripper) lineOf(off int) int {
	return newLines(s.src, s.f).at(off).line
}

// ends takes out the End statements of a body: before returns (with
// results evaluated first, or not) and before the closing brace.
func (s *stripper) ends(body *ast.BlockStmt, rb int, expanded bool) {
	src := s.src
	var lists [][]ast.Stmt
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BlockStmt:
			lists = append(lists, x.List)
		case *ast.CaseClause:
			lists = append(lists, x.Body)
		case *ast.CommClause:
			lists = append(lists, x.Body)
		}
		return true
	})
	unlabel := func(st ast.Stmt) ast.Stmt {
		for {
			l, ok := st.(*ast.LabeledStmt)
			if !ok {
				return st
			}
			st = l.Stmt // an End put after a label, on its own line, is labelled
		}
	}
	for _, list := range lists {
		for i, st := range list {
			st = unlabel(st)
			if !s.isEnd(st) {
				continue
			}
			e0 := s.off(st.Pos())
			ls := lineStart(src, e0)
			var next ast.Stmt
			if i+1 < len(list) {
				next = list[i+1]
			}
			r, _ := next.(*ast.ReturnStmt)
			last := expanded && len(body.List) > 0 && body.List[len(body.List)-1] == next
			if r != nil && len(r.Results) == 0 && i > 0 && s.evalReturn(unlabel(list[i-1]), st, r, last) {
				continue
			}
			if r != nil {
				r0 := s.off(r.Pos())
				rls := lineStart(src, r0)
				if m := s.endLine.FindIndex(src[:rls]); m != nil && m[0]+1 == ls && atLineStart(src, e0) {
					s.add(ls, rls, "")
				}
				continue
			}
			if next == nil {
				rls := lineStart(src, rb)
				if m := s.endLine.FindIndex(src[:rls]); m != nil && m[0]+1 == ls && atLineStart(src, rb) {
					s.add(ls, rls, "")
				}
			}
		}
	}
}

// flushes takes out the flush statements put before os.Exit and
// log.Fatal calls: "IND H()\n//line P\n" at the start of a line.
func (s *stripper) flushes(body *ast.BlockStmt) {
	line := regexp.MustCompile(`^[ \t]*` + s.q + `(?:test|x)?shutdown\(\)\n//line [^\n]*\n$`)
	ast.Inspect(body, func(n ast.Node) bool {
		if es, ok := n.(*ast.ExprStmt); ok {
			if c, ok := es.X.(*ast.CallExpr); ok && len(c.Args) == 0 {
				s.lineAndDirective(s.off(es.Pos()), line)
			}
		}
		return true
	})
}

// marks takes out the marks put after go statements and around waits:
// "IND Mark\n//line P\n" (or Wait, or Woke) at the start of a line.
func (s *stripper) marks(body *ast.BlockStmt) {
	ast.Inspect(body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && as.Tok == token.ASSIGN && len(as.Lhs) == 1 {
			s.lineAndDirective(s.off(as.Pos()), s.mark)
		}
		return true
	})
}

// lineAndDirective takes out the line of the statement at e0 and the
// line after it, when the two match re.
func (s *stripper) lineAndDirective(e0 int, re *regexp.Regexp) {
	ls := lineStart(s.src, e0)
	nl := bytes.IndexByte(s.src[e0:], '\n')
	if nl < 0 {
		return
	}
	next := e0 + nl + 1
	if d := bytes.IndexByte(s.src[next:], '\n'); d >= 0 && re.Match(s.src[ls:next+d+1]) {
		s.add(ls, next+d+1, "")
	}
}

func (s *stripper) isEnd(st ast.Stmt) bool {
	switch x := st.(type) {
	case *ast.ExprStmt:
		if _, ok := x.X.(*ast.CallExpr); !ok {
			return false
		}
	case *ast.AssignStmt:
		if x.Tok != token.ASSIGN || len(x.Lhs) != 1 {
			return false
		}
	default:
		return false
	}
	return s.end.Match(s.src[s.off(st.Pos()):s.off(st.End())])
}

var (
	afterReturnNL  = regexp.MustCompile(`^\n//line [^\n]*(?:\r?\n)`)
	afterReturnDir = regexp.MustCompile(`^` + dirInline)
	dirPrefix      = regexp.MustCompile(`^ =` + dirInline + ` $`)
)

// evalReturn takes out "R0, R1 = /*line P*/ EXPRS\n IND End\n//line P\n
// IND return[directive]", giving back "return EXPRS".
func (s *stripper) evalReturn(prev, end ast.Stmt, r *ast.ReturnStmt, last bool) bool {
	a, ok := prev.(*ast.AssignStmt)
	if !ok || a.Tok != token.ASSIGN || len(a.Rhs) == 0 {
		return false
	}
	src := s.src
	l1 := s.off(a.Lhs[len(a.Lhs)-1].End())
	r0 := s.off(a.Rhs[0].Pos())
	if !dirPrefix.Match(src[l1:r0]) {
		return false
	}
	e1 := s.off(a.Rhs[len(a.Rhs)-1].End())
	ret := s.off(r.Pos())
	mid := src[e1:ret]
	if !regexp.MustCompile(`^\n[ \t]*` + s.endRe + `\n//line [^\n]*\n[ \t]*$`).Match(mid) {
		return false
	}
	endRet := ret + len("return")
	if last {
		// a one-line body: its closing text follows
	} else if m := afterReturnNL.Find(src[endRet:]); m != nil {
		endRet += len(m) - len("\n")
		if src[endRet-1] == '\r' {
			endRet--
		}
	} else if m := afterReturnDir.Find(src[endRet:]); m != nil {
		endRet += len(m)
	}
	s.add(s.off(a.Pos()), r0, "return ")
	s.add(e1, endRet, "")
	return true
}

// results takes out generated result names: "(R0 /*line P*/ T) /*line
// P*/" for a single result written without parentheses, "R0 /*line P*/ "
// before each type otherwise.
func (s *stripper) results(ft *ast.FuncType) {
	res := ft.Results
	if res == nil || len(res.List) == 0 {
		return
	}
	name := regexp.MustCompile(`^` + s.q + `r\d+$`)
	for _, f := range res.List {
		if len(f.Names) != 1 || !name.MatchString(f.Names[0].Name) {
			return
		}
	}
	src := s.src
	var cs []cut
	for _, f := range res.List {
		n0, t0 := s.off(f.Names[0].Pos()), s.off(f.Type.Pos())
		if !regexp.MustCompile(`^` + s.q + `r\d+` + dirInline + ` $`).Match(src[n0:t0]) {
			return
		}
		cs = append(cs, cut{n0, t0, ""})
	}
	if len(res.List) == 1 && res.Opening.IsValid() {
		// A result written without parentheses: "(R0 /*line P*/ T /*line P*/)".
		t1, cl := s.off(res.List[0].Type.End()), s.off(res.Closing)
		if dirCloseOnly.Match(src[t1 : cl+1]) { // "(int)" as written has none
			op := s.off(res.Opening)
			cs = append(cs, cut{op, op + 1, ""}, cut{t1, cl + 1, ""})
		}
	}
	for _, c := range cs {
		s.add(c.from, c.to, c.text)
	}
}

// call takes out a rerouted call: "H( /*line P*/ ARG) /*line P*/" and
// its variants (see rewriteCall.edits).
func (s *stripper) call(c *ast.CallExpr) {
	id, ok := c.Fun.(*ast.Ident)
	if !ok {
		return
	}
	m := regexp.MustCompile(`^` + s.q + `(?:test|x)?(` + reroutes + `)$`).FindStringSubmatch(id.Name)
	if m == nil {
		return
	}
	src := s.src
	f0 := s.off(c.Pos())
	rp := s.off(c.Rparen)
	if len(c.Args) == 0 {
		// "H( /*line P*/ )...", after a format alone: ", H( /*line P*/ )..."
		if m[1] == "fatalv" && regexp.MustCompile(`^`+regexp.QuoteMeta(id.Name)+`\(`+dirInline+` \)\.\.\.$`).Match(src[f0:min(len(src), rp+4)]) {
			if f0 >= 2 && string(src[f0-2:f0]) == ", " {
				f0 -= 2
			}
			s.add(f0, rp+4, "")
		}
		return
	}
	if len(c.Args) != 1 {
		return
	}
	a0, a1 := s.off(c.Args[0].Pos()), s.off(c.Args[0].End())
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(id.Name) + `\(` + dirInline + ` $`).Match(src[f0:a0]) {
		return
	}
	end := rp + 1
	if m[1] == "fatalv" {
		if !c.Ellipsis.IsValid() || !bytes.HasPrefix(src[end:], []byte("...")) {
			return
		}
		a1 = s.off(c.Ellipsis) + 3
		end += 3
	}
	if !dirClose.Match(src[a1 : rp+1]) {
		return
	}
	s.add(f0, a0, "")
	s.add(a1, end, "")
}

// dirClose matches the closing text of an insertion (closeDirective);
// dirCloseOnly, one with its directive.
var (
	dirClose     = regexp.MustCompile(`^(?:` + dirInline + `)?\)$`)
	dirCloseOnly = regexp.MustCompile(`^` + dirInline + `\)$`)
)
