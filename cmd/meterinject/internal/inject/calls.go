package inject

import (
	"go/ast"
	"go/types"
	"strconv"

	"golang.org/x/tools/go/types/typeutil"
)

// A rewriteCall is a call (or, for signal.Notify, any mention) that the
// generated code reroutes:
//   - os.Exit(1), log.Fatal(err) and the like, statements whose arguments
//     compute nothing, get meter__shutdown() on the line before: the
//     exports are written before the process ends;
//   - os.Exit(code()) becomes os.Exit(meter__exit(code())): the exports
//     are written after the code is computed, before the process ends;
//   - log.Fatal*(…, v) and (*log.Logger).Fatal*(…, v) wrap their last
//     argument the same way (the call itself stays in the function, so the
//     logger still reports the caller's line); a Fatalf with its format
//     alone gets a last argument, meter__fatalv()..., so that the format
//     stays a constant for vet;
//   - signal.Notify and signal.NotifyContext are replaced by probe's
//     SignalNotify and SignalNotifyContext, which tell the runtime that the
//     program handles those signals itself, and signal.Stop, Reset and
//     Ignore by SignalStop, SignalReset and SignalIgnore, which tell it that
//     the program no longer does. The reference stays
//     (meter__notify(signal.Notify)), so the user's import of os/signal
//     stays used.
type rewriteCall struct {
	helper string        // hExit, hFatal, hFatalV, or a signal helper
	call   *ast.CallExpr // exit and fatal
	ref    ast.Expr      // notify: the expression naming the function
	// appendV: a Fatalf with a format alone gets ", meter__fatalv()..."
	appendV bool
	// stmt: the call is a statement of its own, at the start of its line,
	// whose arguments compute nothing (os.Exit(1), log.Fatal(err)): the
	// flush is a statement on the line before, and the call is untouched.
	stmt ast.Stmt
}

// exitFuncs are the functions whose call ends the process, by the full
// name go/types gives them.
var exitFuncs = map[string]bool{
	"os.Exit":               true,
	"log.Fatal":             true,
	"log.Fatalf":            true,
	"log.Fatalln":           true,
	"(*log.Logger).Fatal":   true,
	"(*log.Logger).Fatalf":  true,
	"(*log.Logger).Fatalln": true,
}

// findCalls lists what to reroute in the function bodies of f (not in
// those marked //meter:ignore). Calls in defer and go statements are left
// alone: their arguments are evaluated before the call happens, so a flush
// there would come too early. Without type information (files built only
// on other platforms), functions are recognised by their package's import
// name, and (*log.Logger) methods not at all.
func findCalls(j *fileJob) []*rewriteCall {
	imports := map[string]string{} // local name → path, for the untyped case
	for _, im := range j.file.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := p
		if i := lastSlash(p); i >= 0 {
			name = p[i+1:]
		}
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
	}
	var out []*rewriteCall
	skip := map[*ast.CallExpr]bool{}
	stmts := map[*ast.CallExpr]ast.Stmt{}
	visit := func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.DeferStmt:
			skip[x.Call] = true
		case *ast.GoStmt:
			skip[x.Call] = true
		case *ast.ExprStmt:
			if c, ok := x.X.(*ast.CallExpr); ok {
				stmts[c] = x
			}
		case *ast.CallExpr:
			if skip[x] {
				return true
			}
			name := j.funcName(x.Fun, imports)
			if !exitFuncs[name] || name == "os.Exit" && (len(x.Args) != 1 || x.Ellipsis.IsValid()) {
				return true // not an exit, or one that does not compile
			}
			c := &rewriteCall{call: x}
			if st := stmts[x]; st != nil && atLineStart(j.src, j.off(st.Pos())) && !evaluates(j.info, x.Args) && !j.breaksAlignment(j.line(j.off(st.Pos()))) {
				c.helper, c.stmt = hShutdown, st
				out = append(out, c)
				return true
			}
			switch {
			case name == "os.Exit":
				c.helper = hExit
			case x.Ellipsis.IsValid() || len(x.Args) == 0:
				c.helper = hFatalV
			case len(x.Args) == 1 && (name == "log.Fatalf" || name == "(*log.Logger).Fatalf"):
				// Fatalf(format, meter__fatalv()...): the format stays
				// as written, for vet's printf check.
				c.helper, c.appendV = hFatalV, true
			default:
				c.helper = hFatal
			}
			out = append(out, c)
		case *ast.SelectorExpr:
			if h := notifyHelper(j.funcName(x, imports)); h != "" {
				out = append(out, &rewriteCall{helper: h, ref: x})
				return false
			}
		case *ast.Ident:
			if j.info != nil {
				if h := notifyHelper(j.funcName(x, imports)); h != "" {
					out = append(out, &rewriteCall{helper: h, ref: x})
				}
			}
		}
		return true
	}
	for _, d := range j.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && (fd.Body == nil || hasDirective(fd.Doc, "//meter:ignore")) {
			continue
		}
		ast.Inspect(d, visit)
	}
	return out
}

func notifyHelper(name string) string {
	switch name {
	case "os/signal.Notify":
		return hNotify
	case "os/signal.NotifyContext":
		return hNotifyCtx
	case "os/signal.Stop":
		return hStop
	case "os/signal.Reset":
		return hReset
	case "os/signal.Ignore":
		return hIgnore
	}
	return ""
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// funcName is the full name (types.Func.FullName) of the function e
// names, or "".
func (j *fileJob) funcName(e ast.Expr, imports map[string]string) string {
	e = ast.Unparen(e)
	if j.info != nil {
		var obj types.Object
		switch x := e.(type) {
		case *ast.Ident:
			obj = j.info.Uses[x]
		case *ast.SelectorExpr:
			if sel := j.info.Selections[x]; sel != nil {
				obj = sel.Obj()
			} else {
				obj = j.info.Uses[x.Sel]
			}
		default:
			return ""
		}
		if f, ok := obj.(*types.Func); ok {
			return f.FullName()
		}
		return ""
	}
	if x, ok := e.(*ast.SelectorExpr); ok {
		if id, ok := x.X.(*ast.Ident); ok && id.Obj == nil {
			if p, ok := imports[id.Name]; ok {
				return p + "." + x.Sel.Name
			}
		}
	}
	return ""
}

// staticCallee is the function a call calls, when it is known at compile
// time (not an interface method or a function value).
func staticCallee(info *types.Info, c *ast.CallExpr) *types.Func {
	f := typeutil.StaticCallee(info, c)
	if f == nil {
		return nil
	}
	return f.Origin()
}

// edits returns the text edits of one reroute.
func (c *rewriteCall) edits(j *fileJob, n names) []edit {
	h := n.helper(c.helper)
	if c.ref != nil {
		e0, e1 := j.off(c.ref.Pos()), j.off(c.ref.End())
		d, ok := j.lines.prefixDirective(e0)
		if !ok {
			return nil
		}
		t, ok := j.lines.closeDirective(e1, ")")
		if !ok {
			return nil
		}
		return []edit{{e0, e0, h + "(" + d, 0}, {e1, e1, t, 0}}
	}
	x := c.call
	if c.stmt != nil {
		at := j.off(c.stmt.Pos())
		ls := lineStart(j.src, at)
		return []edit{{ls, ls, string(j.src[ls:at]) + h + "()\n" + j.lines.lineDirective(ls), 0}}
	}
	if len(x.Args) == 0 || c.appendV {
		r := j.off(x.Rparen)
		t, ok := j.lines.closeDirective(r, "( )...")
		if !ok {
			return nil
		}
		if c.appendV {
			h = ", " + h
		}
		return []edit{{r, r, h + t, 0}}
	}
	last := x.Args[len(x.Args)-1]
	a0, a1 := j.off(last.Pos()), j.off(last.End())
	d, ok := j.lines.prefixDirective(a0)
	if !ok {
		return nil
	}
	close := ")"
	if x.Ellipsis.IsValid() {
		a1 = j.off(x.Ellipsis) + len("...")
		close = ")..."
	}
	t, ok := j.lines.closeDirective(a1, close)
	if !ok {
		return nil
	}
	return []edit{{a0, a0, h + "(" + d, 0}, {a1, a1, t, 0}}
}
