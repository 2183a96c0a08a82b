package codegen

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/packages"
)

// plan is what to generate for one package.
type plan struct {
	pkg   *packages.Package
	out   string     // absolute output path
	types []*wrapper // sorted by name
	funcs []*target  // package-level functions, sorted by name
}

// wrapper is the generated type for one receiver type.
type wrapper struct {
	named   *types.Named
	name    string // the receiver type's name: Accounts
	wrap    string // LockedAccounts
	ctor    string // NewLockedAccounts
	field   string // the locker field: locker
	methods []*target
	pos     token.Position // first directive, for naming errors
}

// target is one marked function or method.
type target struct {
	decl      *ast.FuncDecl
	sig       *types.Signature
	dir       *directive
	recv      *wrapper    // nil for a package-level function
	name      string      // the marked function's name
	gen       string      // the generated function's name (a method keeps its name)
	resources [][]segment // one per resource= template
	pos       token.Position
}

// segment is a resolved template part: literal text, or a parameter (and
// fields of it) with the rule that formats it.
type segment struct {
	lit     string
	param   int // index in the signature's parameters; -1 for literal text
	fields  []string
	fmtRule formatRule
}
