package inject

import (
	"go/ast"
	"go/token"
)

// DefaultSmallMax is the largest loop-free body, in statements, that the
// default selection leaves out as small (see isSmall).
const DefaultSmallMax = 25

// bodyStats counts the statements of a function body (blocks are not
// counted, and function literals are left out: each is a site of its own)
// and reports whether the body can repeat or wait by itself: a for or
// range loop, a goto, a select, a channel send or receive.
func bodyStats(body *ast.BlockStmt) (stmts int, loops bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BlockStmt:
			return true
		case *ast.ForStmt, *ast.RangeStmt, *ast.SelectStmt, *ast.SendStmt:
			loops = true
		case *ast.BranchStmt:
			if x.Tok == token.GOTO {
				loops = true
			}
		case *ast.UnaryExpr:
			if x.Op == token.ARROW {
				loops = true
			}
		}
		if _, ok := n.(ast.Stmt); ok {
			stmts++
		}
		return true
	})
	return stmts, loops
}

// isSmall reports whether a body is small: at most max statements and
// nothing that repeats or waits (bodyStats). What such a function does by
// itself is bounded, as for a function the compiler inlines: a probe
// would cost as much as the few statements it measures, and its time
// shows in its caller's inherent time, while what it calls keeps its own
// probes. max < 0 turns the rule off.
func isSmall(body *ast.BlockStmt, max int) bool {
	if max < 0 {
		return false
	}
	n, loops := bodyStats(body)
	return !loops && n <= max
}

func (o *Options) smallMax() int {
	if o.SmallMax == 0 {
		return DefaultSmallMax
	}
	return o.SmallMax
}
