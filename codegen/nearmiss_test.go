package codegen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// Near misses as written before gofmt (which turns most of them into the
// "// zklock:" forms of testdata/mod/errors/nearmiss), one comment each.
func TestNearMisses(t *testing.T) {
	for _, c := range []struct {
		comment string
		want    string // "": not a near miss; "warning: ..." for a warning
	}{
		{"//zklock:resource=a", ""},
		{"//zklock:try resource=a", ""},
		{"//zklock:", ""}, // an empty directive, reported by parseDirective
		{"//zklock: resource=a", `malformed //zklock: directive (space after ":"): write //zklock:resource=a`},
		{"//zklock:\tresource=a", `malformed //zklock: directive (space after ":"): write //zklock:resource=a`},
		{"// zklock:resource=a", `malformed //zklock: directive (space after "//"): write //zklock:resource=a`},
		{"//\tzklock:resource=a", `malformed //zklock: directive (space after "//"): write //zklock:resource=a`},
		{"//ZKLOCK:resource=a", `malformed //zklock: directive ("ZKLOCK" is not lower case): write //zklock:resource=a`},
		{"//zklock :resource=a", `malformed //zklock: directive (space before ":"): write //zklock:resource=a`},
		{"//zklock:Resource=a", `malformed //zklock: directive (upper-case option name): write //zklock:resource=a`},
		{"//zklock:TRY", `malformed //zklock: directive (upper-case option name): write //zklock:try`},
		{`//zklock:"resource=a b"`, `malformed //zklock: directive (a quote before the option name): write //zklock:resource="a b"`},
		{"//zklock:!x", `malformed //zklock: directive (no option name right after the colon): write //zklock:resource=TEMPLATE`},
		{"//zklock:-", `malformed //zklock: directive (no option name right after the colon): write //zklock:resource=TEMPLATE`},
		{"// ZKLOCK : RESOURCE=A wait=1s", `malformed //zklock: directive (space after "//", "ZKLOCK" is not lower case, space before ":", space after ":", upper-case option name): write //zklock:resource=A wait=1s`},
		{"/*zklock:resource=a*/", `malformed //zklock: directive (a /* */ comment): write //zklock:resource=a`},
		{"/* zklock: resource=a */", `malformed //zklock: directive (a /* */ comment, space after ":"): write //zklock:resource=a`},
		{"// zklock:resource", `malformed //zklock: directive (space after "//"): write //zklock:resource`},
		{"// zklock:wait", `malformed //zklock: directive (space after "//"): write //zklock:wait`},
		{"// zklock:", `malformed //zklock: directive (space after "//"): write //zklock:resource=TEMPLATE`},
		{"//zklok:resource=a", `warning: possible misspelled //zklock: directive ("zklok"): write //zklock:resource=a if it is meant to lock`},
		{"// zlock: try", `warning: possible misspelled //zklock: directive ("zlock"): write //zklock:try if it is meant to lock`},
		{"//ZKLOK:resource=a", `warning: possible misspelled //zklock: directive ("ZKLOK"): write //zklock:resource=a if it is meant to lock`},
		{"//kzlock:resource=a", `warning: possible misspelled //zklock: directive ("kzlock"): write //zklock:resource=a if it is meant to lock`},
		{"//xzklock:resource=a", `warning: possible misspelled //zklock: directive ("xzklock"): write //zklock:resource=a if it is meant to lock`},
		// Not near misses.
		{"// zklock: the caller holds the lock.", ""},
		{"// zklock: resource names are escaped", ""},
		{"// //zklock:resource=a", ""},
		{"/* //zklock:resource=a */", ""},
		{"// Write //zklock:resource=a on the method.", ""},
		{"//go:generate go tool zklockgen", ""},
		{"//lock:resource=a", ""},
		{"//block:resource=a", ""},
		{"//zk:resource=a", ""},
		{"//zklocker:resource=a", ""},
		{"// zklock", ""},
		{"// zklock resource=a", ""},
		{"// zklock:1resource=a", ""},
	} {
		got := checkComment(t, c.comment)
		if got != c.want {
			t.Errorf("%s\n got: %s\nwant: %s", c.comment, got, c.want)
		}
	}
}

// checkComment returns the near miss of a comment as text.
func checkComment(t *testing.T, comment string) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", "package p\n\n"+comment+"\nfunc F() {}\n", parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range f.Comments {
		for _, c := range g.List {
			for _, nm := range nearMisses(c) {
				e := &Error{Pos: fset.Position(nm.pos), Msg: nm.msg, Warning: nm.warning}
				got = append(got, strings.TrimPrefix(e.Error(), "p.go:3:1: "))
			}
		}
	}
	return strings.Join(got, "\n")
}

// A directive in the lines of a block comment is found at its line.
func TestNearMissInBlockPosition(t *testing.T) {
	fset := token.NewFileSet()
	src := "package p\n\n/*\nF does.\n\n   zklock:resource=a\n * zklock:try\n*/\nfunc F() {}\n"
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var pos []string
	for _, nm := range nearMisses(f.Comments[0].List[0]) {
		pos = append(pos, fset.Position(nm.pos).String())
	}
	if got := strings.Join(pos, " "); got != "p.go:6:4 p.go:7:2" {
		t.Errorf("positions %s, want p.go:6:4 p.go:7:2", got)
	}
}

func TestOneEditAway(t *testing.T) {
	for _, c := range []struct {
		a    string
		want bool
	}{
		{"zklock", false}, {"zklok", true}, {"zlock", true}, {"klock", true}, {"zkloc", true},
		{"zklocks", true}, {"azklock", true}, {"zklxck", true}, {"kzlock", true}, {"zkolck", true},
		{"zklokc", true}, {"zkclok", false}, {"block", false}, {"clock", false}, {"lock", false},
		{"zk", false}, {"", false}, {"zklockss", false}, {"zk-lock", true}, {"zk_lock", true},
	} {
		if got := oneEditAway(c.a, "zklock"); got != c.want {
			t.Errorf("oneEditAway(%q, zklock) = %v, want %v", c.a, got, c.want)
		}
		if got := oneEditAway("zklock", c.a); got != c.want {
			t.Errorf("oneEditAway(zklock, %q) = %v, want %v", c.a, got, c.want)
		}
	}
}

// The comments of a file parsed from source are scanned whole: the valid
// directive is returned, the near misses reported.
func TestDirectiveLinesSkipNearMisses(t *testing.T) {
	fset := token.NewFileSet()
	src := "package p\n\n//zklock:resource=a\n//zklock: wait=5s\nfunc F() {}\n"
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	fd := f.Decls[0].(*ast.FuncDecl)
	if lines := directiveLines(fd.Doc); len(lines) != 1 || lines[0].Text != "//zklock:resource=a" {
		t.Errorf("directive lines %v, want only //zklock:resource=a", lines)
	}
}
