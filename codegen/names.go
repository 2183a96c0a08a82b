package codegen

import (
	"cmp"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// zklockPath is the import path of the package generated code calls.
const zklockPath = "github.com/zklockkit/zklockkit/zklock"

// universeUsed are the predeclared names generated bodies use; nothing the
// generator names may hide them.
var universeUsed = []string{"error", "int64", "nil", "panic", "string", "uint64"}

// importSet names the imports of one generated file. A package keeps its
// own name unless that name is declared in the package (or generated, or
// taken by another import), in which case a number is appended.
type importSet struct {
	self   *types.Package
	taken  map[string]bool
	byPath map[string]string // import path → name in the file
	pkgs   map[string]string // import path → the package's own name
}

func newImportSet(self *types.Package, generated []string) *importSet {
	im := &importSet{self: self, taken: map[string]bool{}, byPath: map[string]string{}, pkgs: map[string]string{}}
	for _, n := range self.Scope().Names() {
		im.taken[n] = true
	}
	for _, n := range generated {
		im.taken[n] = true
	}
	for _, n := range universeUsed {
		im.taken[n] = true
	}
	return im
}

// name returns the name under which path is imported, adding the import.
func (im *importSet) name(path, pkgName string) string {
	if n, ok := im.byPath[path]; ok {
		return n
	}
	n := fresh(pkgName, im.taken)
	im.taken[n] = true
	im.byPath[path] = n
	im.pkgs[path] = pkgName
	return n
}

// qualifier qualifies type names for types.TypeString.
func (im *importSet) qualifier(p *types.Package) string {
	if p == im.self {
		return ""
	}
	return im.name(p.Path(), p.Name())
}

// spec is one import line.
type spec struct {
	Name, Path string
	Gap        bool // a blank line before: the first import outside the standard library
}

// specs returns the imports sorted by path, with a name only where it
// differs from the package's own.
func (im *importSet) specs() []spec {
	var out []spec
	for path, n := range im.byPath {
		s := spec{Path: path}
		if n != im.pkgs[path] {
			s.Name = n
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b spec) int {
		return cmp.Or(cmp.Compare(group(a.Path), group(b.Path)), cmp.Compare(a.Path, b.Path))
	})
	for i := range out {
		out[i].Gap = i > 0 && !std(out[i].Path) && std(out[i-1].Path)
	}
	return out
}

// fresh returns base, or base followed by the smallest number that makes
// it absent from taken.
func fresh(base string, taken map[string]bool) string {
	if !taken[base] {
		return base
	}
	for i := 1; ; i++ {
		if n := base + strconv.Itoa(i); !taken[n] {
			return n
		}
	}
}

// group orders the standard library's imports first.
func group(path string) int {
	if std(path) {
		return 0
	}
	return 1
}

// std reports whether an import path is in the standard library: its
// first element has no dot.
func std(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// wrapperNames names a wrapper type, its constructor and its locker field.
func (c *checker) wrapperNames(w *wrapper) {
	w.wrap = lockedName(w.name)
	if ast.IsExported(w.name) {
		w.ctor = "New" + w.wrap
	} else {
		w.ctor = "new" + upperFirst(w.wrap)
	}
	ptr := types.NewPointer(w.named)
	for i := 0; ; i++ {
		name := "locker"
		if i > 0 {
			name = "zklocker" + strings.Repeat("_", i-1)
		}
		if obj, _, _ := types.LookupFieldOrMethod(ptr, true, c.p.Types, name); obj == nil {
			w.field = name
			break
		}
	}
	if obj, _, _ := types.LookupFieldOrMethod(ptr, true, c.p.Types, w.name); obj != nil {
		if _, isMethod := obj.(*types.Func); isMethod {
			c.errs.errorf(w.pos, "type %s has a method named %s: the wrapper, which embeds *%s, would hide it",
				w.name, w.name, w.name)
		}
	}
}

// checkNames reports generated names that are already declared in the
// package.
func (c *checker) checkNames(pl *plan) {
	check := func(name string, at token.Position) {
		obj := c.p.Types.Scope().Lookup(name)
		if obj == nil {
			return
		}
		decl := c.pos(obj.Pos())
		if rel, err := filepath.Rel(filepath.Dir(at.Filename), decl.Filename); err == nil {
			decl.Filename = rel
		}
		c.errs.errorf(at, "cannot generate %s: already declared at %s", name, decl)
	}
	for _, w := range pl.types {
		check(w.wrap, w.pos)
		check(w.ctor, w.pos)
	}
	for _, f := range pl.funcs {
		check(f.gen, f.pos)
	}
}

// lockedName returns the name of a wrapper or function variant:
// Accounts → LockedAccounts, accounts → lockedAccounts.
func lockedName(name string) string {
	if ast.IsExported(name) {
		return "Locked" + name
	}
	return "locked" + upperFirst(name)
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
