package codegen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
	"time"
)

// parseLines parses directive lines as the doc comment of a function.
func parseLines(t *testing.T, lines ...string) (*directive, ErrorList) {
	t.Helper()
	src := "package p\n\n" + strings.Join(lines, "\n") + "\nfunc F() {}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	fd := f.Decls[0].(*ast.FuncDecl)
	var errs ErrorList
	d := parseDirective(fset, directiveLines(fd.Doc), &errs)
	return d, errs
}

func TestParseDirective(t *testing.T) {
	d, errs := parseLines(t,
		"// F does things.",
		"//",
		`//zklock:resource=a/{x.Y}  resource="b c/{{{z}}}"	mode=read`,
		"//zklock:wait=1m30s",
	)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if d.mode != "read" || d.wait != 90*time.Second || d.try {
		t.Errorf("mode %q wait %v try %v", d.mode, d.wait, d.try)
	}
	if len(d.resources) != 2 {
		t.Fatalf("%d resources, want 2", len(d.resources))
	}
	want := []part{{lit: "a/", off: 18}, {path: []string{"x", "Y"}, off: 20}}
	if got := d.resources[0].parts; !reflect.DeepEqual(got, want) {
		t.Errorf("first template = %#v, want %#v", got, want)
	}
	// The quotes are not part of the template; offsets skip them.
	want = []part{{lit: "b c/{", off: 37}, {path: []string{"z"}, off: 43}, {lit: "}", off: 46}}
	if got := d.resources[1].parts; !reflect.DeepEqual(got, want) || d.resources[1].text != "b c/{{{z}}}" {
		t.Errorf("second template = %q %#v, want %#v", d.resources[1].text, got, want)
	}
	if got := strings.Join(d.options("zk", "tm"), ", "); got != "zk.Read, zk.MaxWait(90 * tm.Second)" {
		t.Errorf("options = %s", got)
	}
	if got := strings.Join(d.text, " "); got != "resource=a/{x.Y} resource=b c/{{{z}}} mode=read wait=1m30s" {
		t.Errorf("text = %s", got)
	}
}

// A bare //zklock: line is not a directive for gofmt (which adds a space),
// but an unformatted file may hold one.
func TestEmptyDirective(t *testing.T) {
	_, errs := parseLines(t, "//zklock:")
	if len(errs) != 1 || errs[0].Error() != "p.go:3:1: empty //zklock: directive: want resource=TEMPLATE" {
		t.Errorf("errors = %v", errs)
	}
}

func TestOptionsOrder(t *testing.T) {
	d, errs := parseLines(t, "//zklock:try mode=write resource=r")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := strings.Join(d.options("zklock", "time"), ", "); got != "zklock.Write, zklock.Try()" {
		t.Errorf("options = %s", got)
	}
	d, _ = parseLines(t, "//zklock:resource=r mode=exclusive")
	if len(d.options("zklock", "time")) != 0 {
		t.Errorf("mode=exclusive gives options %v, want none (the default)", d.options("zklock", "time"))
	}
}

func TestDurationExpr(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour:               "time.Hour",
		2*time.Hour + time.Hour: "3 * time.Hour",
		150 * time.Minute:       "150 * time.Minute",
		90 * time.Second:        "90 * time.Second",
		5 * time.Second:         "5 * time.Second",
		1500 * time.Millisecond: "1500 * time.Millisecond",
		time.Microsecond:        "time.Microsecond",
		1001 * time.Nanosecond:  "1001 * time.Nanosecond",
	} {
		if got := durationExpr(d, "time"); got != want {
			t.Errorf("durationExpr(%v) = %s, want %s", d, got, want)
		}
	}
}

func TestErrorFormatting(t *testing.T) {
	e := &Error{Pos: token.Position{Filename: "/m/p/a.go", Line: 3, Column: 7}, Msg: "bad"}
	if e.Error() != "/m/p/a.go:3:7: bad" {
		t.Errorf("Error() = %q", e.Error())
	}
	for dir, want := range map[string]string{
		"/m/p":   "./a.go:3:7: bad",
		"/m":     "./p/a.go:3:7: bad",
		"/other": "/m/p/a.go:3:7: bad",
	} {
		if got := e.Relative(dir); got != want {
			t.Errorf("Relative(%s) = %q, want %q", dir, got, want)
		}
	}
	pkg := &Error{Pos: token.Position{Filename: "/m/p"}, Msg: "no directives"}
	if got := pkg.Relative("/m/p"); got != ".: no directives" {
		t.Errorf("Relative of a directory = %q", got)
	}
	if got := (&Error{Msg: "plain"}).Error(); got != "plain" {
		t.Errorf("Error() without position = %q", got)
	}
	list := ErrorList{
		{Pos: token.Position{Filename: "b.go", Line: 1, Column: 1}, Msg: "y"},
		{Pos: token.Position{Filename: "a.go", Line: 2, Column: 1}, Msg: "x"},
		{Pos: token.Position{Filename: "a.go", Line: 2, Column: 1}, Msg: "x"},
	}.sort()
	if list.Error() != "a.go:2:1: x\nb.go:1:1: y" {
		t.Errorf("sorted list = %q", list.Error())
	}
}

func TestParsePos(t *testing.T) {
	for s, want := range map[string]token.Position{
		"/a/b.go:3:4": {Filename: "/a/b.go", Line: 3, Column: 4},
		"/a/b.go:3":   {Filename: "/a/b.go", Line: 3},
		"/a/b.go":     {Filename: "/a/b.go"},
		"":            {},
		"-":           {},
	} {
		if got := parsePos(s); got != want {
			t.Errorf("parsePos(%q) = %+v, want %+v", s, got, want)
		}
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{"Accounts": "LockedAccounts", "accounts": "lockedAccounts", "état": "lockedÉtat"} {
		if got := lockedName(in); got != want {
			t.Errorf("lockedName(%s) = %s, want %s", in, got, want)
		}
	}
	taken := map[string]bool{"x": true, "x1": true}
	if got := fresh("x", taken); got != "x2" {
		t.Errorf("fresh = %s", got)
	}
	if got := list([]string{"a", "b", "c"}); got != "a, b and c" {
		t.Errorf("list = %s", got)
	}
}
