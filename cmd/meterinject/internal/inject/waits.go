package inject

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Waits of a function's own body. A metered firing's own time is measured
// in stretches, and a stretch in which the goroutine parked is left out
// whole, with the CPU time it held before the park and after
// (docs/design.md, "Waits"). Where the wait is a statement of the body's
// own, generated code brackets it, each call on a line of its own, the
// next line's position given back after it:
//
//	_ = meter__f != 0 && meter__probes[3].Wait(&meter__f)
//	v := <-in
//	_ = meter__f != 0 && meter__probes[3].Woke(&meter__f)
//
// and the engine ends the stretch at the wait's start where the goroutine
// parked in it (meter.Probe.Wait). The statements that may block: a
// channel send, a receive as a statement or as the one value of an
// assignment, a select without a default case (Woke at the top of each
// case's body), a range over a channel (Wait before the loop and at the
// end of its body, Woke at the top of its body), and a call, as a
// statement, of sync's Mutex.Lock and Unlock, RWMutex.Lock, Unlock and
// RLock, WaitGroup.Wait and Cond.Wait, or of time.Sleep. A bracket goes only
// where its line is its own: Wait before a statement that begins its
// line, Woke after one that ends its line (or after a case's colon, a
// loop body's brace, that ends it).

// waitSite is the brackets of one wait, its first a Wait: without it, no
// other goes in (a Woke ends only the wait its Wait began); with all, every
// bracket must go in, or none does.
type waitSite struct {
	marks []waitMark
	all   bool
}

// waitMark is one bracket of a wait: Wait (woke false) on a line of its
// own before the line of at, which must begin with at; Woke after the
// line that at ends. Its indentation is that of the line of indent, one
// tab deeper where deeper says (a loop's or a case's body).
type waitMark struct {
	woke   bool
	at     token.Pos
	indent token.Pos
	deeper bool
}

// blockingCalls are the functions and methods whose calls, as statements,
// are bracketed, by their full names.
var blockingCalls = map[string]bool{
	"(*sync.Mutex).Lock":     true,
	"(*sync.Mutex).Unlock":   true, // which yields, handing the lock to a waiter, when starving
	"(*sync.RWMutex).Lock":   true,
	"(*sync.RWMutex).Unlock": true,
	"(*sync.RWMutex).RLock":  true,
	"(*sync.WaitGroup).Wait": true,
	"(*sync.Cond).Wait":      true,
	"time.Sleep":             true,
}

// waitSites returns the brackets of the waits of body's own statements
// (not those of the function literals in it), in source order. info may
// be nil (a file not type-checked): ranges over channels and calls are
// then not found.
func waitSites(info *types.Info, body *ast.BlockStmt) []waitSite {
	var ms []waitSite
	comm := map[ast.Stmt]bool{} // a case's send or receive, which blocks as its select does
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.SelectStmt:
			cases := []waitMark{{at: x.Pos(), indent: x.Pos()}}
			for _, c := range x.Body.List {
				cc := c.(*ast.CommClause)
				if cc.Comm == nil {
					return true // a default case: it does not block
				}
				comm[cc.Comm] = true
				cases = append(cases, waitMark{woke: true, at: cc.Colon + 1, indent: cc.Pos(), deeper: true})
			}
			ms = append(ms, waitSite{marks: cases})
		case *ast.RangeStmt:
			if info == nil {
				return true
			}
			if t := info.TypeOf(x.X); t == nil {
				return true
			} else if _, ok := t.Underlying().(*types.Chan); !ok {
				return true
			}
			site := waitSite{marks: []waitMark{
				{at: x.Pos(), indent: x.Pos()},
				{woke: true, at: x.Body.Lbrace + 1, indent: x.Pos(), deeper: true},
			}}
			if l := x.Body.List; len(l) == 0 || !endsFlow(l[len(l)-1]) {
				// the next receive's Wait, where the body's end is reached
				site.marks = append(site.marks, waitMark{at: x.Body.Rbrace, indent: x.Pos(), deeper: true})
			}
			ms = append(ms, site)
		case ast.Stmt:
			if !comm[x] && blocks(info, x) {
				ms = append(ms, waitSite{marks: []waitMark{{at: x.Pos(), indent: x.Pos()}, {woke: true, at: x.End(), indent: x.Pos()}}, all: true})
			}
		}
		return true
	})
	return ms
}

// blocks reports whether s is a simple statement that may block: a send,
// a receive, or a call of blockingCalls.
func blocks(info *types.Info, s ast.Stmt) bool {
	switch x := s.(type) {
	case *ast.SendStmt:
		return true
	case *ast.ExprStmt:
		if isReceive(x.X) {
			return true
		}
		if c, ok := x.X.(*ast.CallExpr); ok && info != nil {
			f := staticCallee(info, c)
			return f != nil && blockingCalls[f.FullName()]
		}
	case *ast.AssignStmt:
		return len(x.Rhs) == 1 && isReceive(x.Rhs[0])
	}
	return false
}

// isReceive reports whether e is a channel receive, in parentheses or not.
func isReceive(e ast.Expr) bool {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			break
		}
		e = p.X
	}
	u, ok := e.(*ast.UnaryExpr)
	return ok && u.Op == token.ARROW
}

// endsFlow reports whether nothing after s in its block is reached: s is
// terminating, or a break or continue (a statement after it would be
// unreachable code to vet).
func endsFlow(s ast.Stmt) bool {
	if b, ok := s.(*ast.BranchStmt); ok && (b.Tok == token.BREAK || b.Tok == token.CONTINUE) {
		return true
	}
	return isTerminating(s)
}
