package codegen

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// checker builds a plan from a package's marked declarations.
type checker struct {
	p    *packages.Package
	o    *options
	errs *ErrorList
}

func (c *checker) pos(p token.Pos) token.Position { return c.p.Fset.Position(p) }

func (c *checker) errorf(p token.Pos, format string, args ...any) {
	c.errs.errorf(c.pos(p), format, args...)
}

// build checks every marked declaration and groups them by receiver type.
func (c *checker) build(ms []marked) *plan {
	pl := &plan{pkg: c.p}
	byType := map[*types.Named]*wrapper{}
	for _, m := range ms {
		if !c.selected(m.decl) {
			continue
		}
		d := parseDirective(c.p.Fset, m.lines, c.errs)
		t := c.target(m.decl, d)
		if t == nil {
			continue
		}
		if t.recv == nil {
			pl.funcs = append(pl.funcs, t)
			continue
		}
		w := byType[t.recv.named]
		if w == nil {
			w = t.recv
			byType[w.named] = w
			pl.types = append(pl.types, w)
		}
		t.recv = w
		w.methods = append(w.methods, t)
	}
	slices.SortFunc(pl.types, func(a, b *wrapper) int { return strings.Compare(a.name, b.name) })
	for _, w := range pl.types {
		slices.SortFunc(w.methods, func(a, b *target) int { return strings.Compare(a.name, b.name) })
		c.wrapperNames(w)
	}
	slices.SortFunc(pl.funcs, func(a, b *target) int { return strings.Compare(a.name, b.name) })
	c.checkNames(pl)
	return pl
}

// selected applies the WithTypes filter: a method is selected by the name
// of its receiver's type, a function by its own.
func (c *checker) selected(fd *ast.FuncDecl) bool {
	if len(c.o.types) == 0 {
		return true
	}
	name := fd.Name.Name
	if fd.Recv != nil && len(fd.Recv.List) > 0 {
		name = baseTypeName(fd.Recv.List[0].Type)
	}
	return slices.Contains(c.o.types, name)
}

// baseTypeName returns T from a receiver type expression T, *T, T[P] or
// *T[P, Q].
func baseTypeName(x ast.Expr) string {
	for {
		switch e := x.(type) {
		case *ast.StarExpr:
			x = e.X
		case *ast.ParenExpr:
			x = e.X
		case *ast.IndexExpr:
			x = e.X
		case *ast.IndexListExpr:
			x = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

// target checks one marked declaration. It returns nil when the
// declaration cannot be wrapped; the reasons are recorded.
func (c *checker) target(fd *ast.FuncDecl, d *directive) *target {
	obj, _ := c.p.TypesInfo.Defs[fd.Name].(*types.Func)
	if obj == nil {
		c.errorf(fd.Name.Pos(), "cannot type-check %s", fd.Name.Name)
		return nil
	}
	sig := obj.Type().(*types.Signature)
	t := &target{decl: fd, sig: sig, dir: d, name: fd.Name.Name, gen: fd.Name.Name, pos: c.pos(d.pos)}
	if invalid(sig) {
		errs := typeErrorsIn(c.p, c.pos(fd.Pos()), c.pos(fd.Type.End()))
		if len(errs) == 0 {
			c.errorf(fd.Name.Pos(), "%s: its signature does not type-check", fd.Name.Name)
		}
		*c.errs = append(*c.errs, errs...)
		return nil
	}
	ok := true
	if fd.Recv != nil {
		rt := types.Unalias(sig.Recv().Type())
		if p, isPtr := rt.(*types.Pointer); isPtr {
			rt = types.Unalias(p.Elem())
		}
		named, _ := rt.(*types.Named)
		switch {
		case named == nil:
			c.errorf(fd.Recv.Pos(), "%s: cannot wrap a method of %s", t.name, rt)
			return nil
		case named.TypeParams().Len() > 0:
			c.errorf(fd.Recv.List[0].Type.Pos(), "%s: generic receiver type %s is not supported",
				t.name, types.TypeString(named, types.RelativeTo(c.p.Types)))
			return nil
		}
		t.recv = &wrapper{named: named, name: named.Obj().Name(), pos: t.pos}
	} else {
		if sig.TypeParams().Len() > 0 {
			c.errorf(fd.Type.TypeParams.Pos(), "%s: generic functions are not supported", t.name)
			ok = false
		}
		t.gen = lockedName(t.name)
	}
	kind := "function"
	if fd.Recv != nil {
		kind = "method"
	}
	if sig.Params().Len() == 0 || !isContext(sig.Params().At(0).Type()) {
		at := fd.Type.Params.Opening
		if len(fd.Type.Params.List) > 0 {
			at = fd.Type.Params.List[0].Pos()
		}
		c.errorf(at, "%s: a %s marked //zklock: must take a context.Context as its first parameter", t.name, kind)
		ok = false
	}
	if n := sig.Results().Len(); n == 0 || !isError(sig.Results().At(n-1).Type()) {
		at := fd.Type.Params.Closing + 1
		if fd.Type.Results != nil {
			at = fd.Type.Results.Pos()
		}
		c.errorf(at, "%s: a %s marked //zklock: must return an error as its last result", t.name, kind)
		ok = false
	}
	for _, tm := range d.resources {
		segs, good := c.resolve(t, tm)
		ok = ok && good
		t.resources = append(t.resources, segs)
	}
	if !ok || len(d.resources) == 0 {
		return nil
	}
	return t
}

// resolve types a template's placeholders against the parameters.
func (c *checker) resolve(t *target, tm *template) ([]segment, bool) {
	var segs []segment
	ok := true
	for _, pt := range tm.parts {
		if pt.path == nil {
			segs = append(segs, segment{lit: pt.lit, param: -1})
			continue
		}
		at := tm.base + token.Pos(pt.off)
		idx := -1
		params := t.sig.Params()
		for i := range params.Len() {
			if n := params.At(i).Name(); n == pt.path[0] && n != "_" {
				idx = i
			}
		}
		if idx < 0 {
			c.errorf(at, "unknown placeholder %s: %s has no parameter %s", pt, t.name, pt.path[0])
			ok = false
			continue
		}
		typ := params.At(idx).Type() // for ...T, []T
		for i, name := range pt.path[1:] {
			sel := strings.Join(pt.path[:i+1], ".")
			obj, _, _ := types.LookupFieldOrMethod(typ, true, c.p.Types, name)
			switch v := obj.(type) {
			case *types.Var:
				typ = v.Type()
				continue
			case *types.Func:
				c.errorf(at, "placeholder %s: %s.%s is a method, not a field", pt, sel, name)
			default:
				if hidden(typ, name) {
					c.errorf(at, "placeholder %s: field %s of %s is not exported", pt, name, c.typeString(typ))
				} else {
					c.errorf(at, "placeholder %s: %s (type %s) has no field %s", pt, sel, c.typeString(typ), name)
				}
			}
			ok = false
			typ = nil
			break
		}
		if typ == nil {
			continue
		}
		f, good := c.formatOf(typ)
		if !good {
			c.errorf(at, "placeholder %s: cannot format %s as text: want a string, an integer or a fmt.Stringer",
				pt, c.typeString(typ))
			ok = false
			continue
		}
		segs = append(segs, segment{param: idx, fields: pt.path[1:], fmtRule: f})
	}
	return segs, ok
}

// hidden reports whether typ has an unexported field or method name that
// another package cannot see.
func hidden(typ types.Type, name string) bool {
	if ast.IsExported(name) {
		return false
	}
	base := types.Unalias(typ)
	if p, ok := base.(*types.Pointer); ok {
		base = types.Unalias(p.Elem())
	}
	n, ok := base.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	obj, _, _ := types.LookupFieldOrMethod(typ, true, n.Obj().Pkg(), name)
	return obj != nil
}

func (c *checker) typeString(t types.Type) string {
	return types.TypeString(t, types.RelativeTo(c.p.Types))
}

func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

func isError(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// invalid reports whether a signature mentions a type that did not
// type-check.
func invalid(sig *types.Signature) bool {
	bad := false
	var visit func(t types.Type)
	visit = func(t types.Type) {
		switch t := types.Unalias(t).(type) {
		case *types.Basic:
			bad = bad || t.Kind() == types.Invalid
		case *types.Pointer:
			visit(t.Elem())
		case *types.Slice:
			visit(t.Elem())
		case *types.Array:
			visit(t.Elem())
		case *types.Map:
			visit(t.Key())
			visit(t.Elem())
		case *types.Chan:
			visit(t.Elem())
		case *types.Signature:
			visit(t.Params())
			visit(t.Results())
		case *types.Tuple:
			for i := range t.Len() {
				visit(t.At(i).Type())
			}
		}
	}
	if sig.Recv() != nil {
		visit(sig.Recv().Type())
	}
	visit(sig)
	return bad
}
