package codegen

import (
	"go/ast"

	"golang.org/x/tools/go/packages"
)

// marked is a function or method declaration with its directive lines.
type marked struct {
	decl  *ast.FuncDecl
	lines []*ast.Comment
}

// scan finds the //zklock: lines of a package. Those in the doc comment of
// a function or method are returned; any other is an error, wherever it is
// (on a type, a variable, a field, inside a body, or floating). Comments
// that look like a directive but are not one (near misses) are recorded
// in errs, or in warns for a misspelled name.
func scan(p *packages.Package, errs, warns *ErrorList) []marked {
	var out []marked
	for _, f := range p.Syntax {
		docs := map[*ast.CommentGroup]*ast.FuncDecl{}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil {
				docs[fd.Doc] = fd
			}
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				for _, nm := range nearMisses(c) {
					l := errs
					if nm.warning {
						l = warns
					}
					l.errorf(p.Fset.Position(nm.pos), "%s", nm.msg)
				}
			}
			lines := directiveLines(g)
			if len(lines) == 0 {
				continue
			}
			if fd := docs[g]; fd != nil {
				out = append(out, marked{fd, lines})
				continue
			}
			for _, c := range lines {
				errs.errorf(p.Fset.Position(c.Slash),
					"//zklock: directive is not in the doc comment of a function or method")
			}
		}
	}
	return out
}
