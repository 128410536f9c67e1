package inject

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Exits whose End is a call alone rather than after the inline test.
//
// The compiler lowers a condition with && or || through a boolean phi
// (and a bool variable assigned on several paths is one too), then, in
// its short-circuit pass, redirects the branches that feed the phi
// straight to the successors. Where the merge block holds a memory phi
// too (a call on one of the paths), the pass rewires only known shapes of
// the graph; one of them is a successor that returns, with no branch of
// its own. So in
//
//	for {
//		if parser.unread < 1 && !yaml_parser_update_buffer(parser, 1) {
//			return false
//		}
//		...
//
// the body of the if is such a successor. The inline test before its
// return,
//
//	_ = meter__f != 0 && meter__probes[3].End(&meter__f)
//
// is a branch: the pass gives up, and the condition is computed into a
// register and tested, 2 to 4 instructions more each time it is
// evaluated, whether or not the return is taken (yaml.v3's scanner
// evaluates such conditions in its loops, many times a firing). A call
// is not a branch,
//
//	meter__probes[3].End(&meter__f)
//
// so those exits call the engine, which tests the firing itself: about
// ten instructions more than the test, paid only when the exit is taken.
// Only where the condition is evaluated in a loop: evaluated once a
// firing, it would save fewer instructions than the call can cost.

// callExits reports which of the returns of body, and whether the end of
// body (an exit at its closing brace), are reached straight from a branch
// on a condition that merges paths (phiCond).
func callExits(info *types.Info, body *ast.BlockStmt, returns []*ast.ReturnStmt, endAtEnd bool) (map[*ast.ReturnStmt]bool, bool) {
	multi := reassignedBools(info, body)
	merges := func(c ast.Expr) bool { return phiCond(info, c, multi) }
	// Where a return sits: its statement list, its index there, the
	// conditions on which the list is entered, and whether the statements
	// of the list run in a loop of the function (then so do the
	// conditions of its ifs, and those it is entered on).
	type place struct {
		list  []ast.Stmt
		i     int
		conds []ast.Expr
		loop  bool
	}
	at := map[*ast.ReturnStmt]place{}
	var list func(l []ast.Stmt, conds []ast.Expr, loop bool)
	var stmt func(s ast.Stmt, loop bool)
	list = func(l []ast.Stmt, conds []ast.Expr, loop bool) {
		for i, s := range l {
			if r, ok := s.(*ast.ReturnStmt); ok {
				at[r] = place{l, i, conds, loop}
				continue
			}
			stmt(s, loop)
		}
	}
	var ifStmt func(x *ast.IfStmt, loop bool)
	ifStmt = func(x *ast.IfStmt, loop bool) {
		list(x.Body.List, []ast.Expr{x.Cond}, loop)
		switch e := x.Else.(type) {
		case *ast.BlockStmt:
			list(e.List, []ast.Expr{x.Cond}, loop)
		case *ast.IfStmt:
			ifStmt(e, loop)
		}
	}
	stmt = func(s ast.Stmt, loop bool) {
		switch x := s.(type) {
		case *ast.IfStmt:
			ifStmt(x, loop)
		case *ast.ForStmt:
			var c []ast.Expr
			if x.Cond != nil {
				c = []ast.Expr{x.Cond}
			}
			list(x.Body.List, c, true)
		case *ast.SwitchStmt:
			for _, c := range x.Body.List {
				cc := c.(*ast.CaseClause)
				var conds []ast.Expr
				if x.Tag == nil {
					conds = cc.List
				}
				list(cc.Body, conds, loop)
			}
		case *ast.LabeledStmt:
			list([]ast.Stmt{x.Stmt}, nil, loop)
		case *ast.BlockStmt:
			list(x.List, nil, loop)
		case *ast.RangeStmt:
			list(x.Body.List, nil, true)
		case *ast.TypeSwitchStmt:
			for _, c := range x.Body.List {
				list(c.(*ast.CaseClause).Body, nil, loop)
			}
		case *ast.SelectStmt:
			for _, c := range x.Body.List {
				list(c.(*ast.CommClause).Body, nil, loop)
			}
		}
	}
	list(body.List, nil, false)

	// reached reports whether the exit at l[i] is reached straight from
	// such a branch, evaluated in a loop: by the statements before it,
	// which must not branch, from the start of a list entered on conds,
	// or from an if without else whose body leaves, or a loop without
	// break, that ends on a condition. A condition evaluated once a call
	// would save at most a few instructions a call, and could cost the
	// call's dozen at each.
	reached := func(l []ast.Stmt, i int, conds []ast.Expr, loop bool) bool {
		k := i - 1
		for k >= 0 && straight(l[k]) {
			k--
		}
		if k < 0 {
			if !loop {
				return false
			}
			for _, c := range conds {
				if merges(c) {
					return true
				}
			}
			return false
		}
		label := ""
		s := l[k]
		if ls, ok := s.(*ast.LabeledStmt); ok {
			label, s = ls.Label.Name, ls.Stmt
		}
		switch x := s.(type) {
		case *ast.IfStmt:
			if x.Else != nil || len(x.Body.List) == 0 {
				return false
			}
			last := x.Body.List[len(x.Body.List)-1]
			if _, ok := last.(*ast.BranchStmt); !ok && !isTerminating(last) {
				return false
			}
			return loop && merges(x.Cond)
		case *ast.ForStmt:
			return x.Cond != nil && !hasBreak(x.Body, label) && merges(x.Cond)
		}
		return false
	}
	calls := map[*ast.ReturnStmt]bool{}
	for _, r := range returns {
		p, ok := at[r]
		if ok && !branches(r) && reached(p.list, p.i, p.conds, p.loop) {
			calls[r] = true
		}
	}
	return calls, endAtEnd && reached(body.List, len(body.List), nil, false)
}

// straight reports whether s runs without a branch of its own: an
// expression, assignment, declaration or send with no && or ||.
func straight(s ast.Stmt) bool {
	switch s.(type) {
	case *ast.ExprStmt, *ast.AssignStmt, *ast.IncDecStmt, *ast.DeclStmt, *ast.SendStmt, *ast.EmptyStmt:
		return !branches(s)
	}
	return false
}

// branches reports whether n holds && or || outside function literals.
func branches(n ast.Node) bool {
	return holds(n, func(x ast.Node) bool {
		b, ok := x.(*ast.BinaryExpr)
		return ok && (b.Op == token.LAND || b.Op == token.LOR)
	})
}

// phiCond reports whether cond is a boolean that merges paths, whose
// branch the compiler short-circuits: && or || whose right operand,
// evaluated on one path only, calls (or receives, or allocates), so that
// memory merges too; or a local bool variable assigned more than once
// (multi), as in
//
//	again := true
//	for again {
//		again = false
//		...
//
// whose value at the branch merges the assignments that reach it.
func phiCond(info *types.Info, cond ast.Expr, multi map[types.Object]bool) bool {
	return holds(cond, func(x ast.Node) bool {
		switch y := x.(type) {
		case *ast.BinaryExpr:
			return (y.Op == token.LAND || y.Op == token.LOR) && evaluates(info, []ast.Expr{y.Y})
		case *ast.Ident:
			return info != nil && multi[info.Uses[y]]
		}
		return false
	})
}

// holds reports whether a node of n, outside function literals, is one
// that match reports.
func holds(n ast.Node, match func(ast.Node) bool) bool {
	found := false
	ast.Inspect(n, func(x ast.Node) bool {
		if _, ok := x.(*ast.FuncLit); ok || found {
			return false
		}
		found = match(x)
		return !found
	})
	return found
}

// reassignedBools returns the local bool variables of body that are
// assigned more than once (a declaration with a value counts), outside
// function literals.
func reassignedBools(info *types.Info, body *ast.BlockStmt) map[types.Object]bool {
	if info == nil {
		return nil
	}
	n := map[types.Object]int{}
	note := func(id *ast.Ident) {
		obj := info.Defs[id]
		if obj == nil {
			obj = info.Uses[id]
		}
		v, ok := obj.(*types.Var)
		if !ok || v.IsField() || v.Parent() == nil || v.Parent() == v.Pkg().Scope() {
			return
		}
		if b, ok := v.Type().Underlying().(*types.Basic); ok && b.Kind() == types.Bool {
			n[v]++
		}
	}
	ast.Inspect(body, func(x ast.Node) bool {
		switch y := x.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			for _, l := range y.Lhs {
				if id, ok := ast.Unparen(l).(*ast.Ident); ok {
					note(id)
				}
			}
		case *ast.ValueSpec:
			if len(y.Values) > 0 {
				for _, id := range y.Names {
					note(id)
				}
			}
		}
		return true
	})
	multi := map[types.Object]bool{}
	for v, c := range n {
		if c > 1 {
			multi[v] = true
		}
	}
	return multi
}
