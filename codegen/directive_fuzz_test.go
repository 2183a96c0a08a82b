package codegen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// directiveAt parses line as the only //zklock: line of a doc comment on
// line 3 of p.go.
func directiveAt(line string) (*directive, ErrorList) {
	src := "package p\n\n" + line + "\nfunc F() {}\n"
	fset := token.NewFileSet()
	f := fset.AddFile("p.go", -1, len(src))
	f.SetLinesForContent([]byte(src))
	var errs ErrorList
	d := parseDirective(fset, []*ast.Comment{{Slash: f.Pos(len("package p\n\n")), Text: line}}, &errs)
	return d, errs
}

// writeBack writes a directive's options as one line, each option in
// double quotes when it holds a blank.
func writeBack(d *directive) string {
	var b strings.Builder
	b.WriteString(directivePrefix)
	for i, o := range d.text {
		if i > 0 {
			b.WriteByte(' ')
		}
		if strings.ContainsAny(o, " \t") {
			o = `"` + o + `"`
		}
		b.WriteString(o)
	}
	return b.String()
}

// FuzzDirective checks the //zklock: directive parser (and the resource
// templates in it) on any line:
//   - every problem is reported at a position on the directive's own
//     line, within it, in the compiler's manner;
//   - a line without problems has a resource, and written back (its
//     options as they were read, quoted where they hold blanks) it parses
//     to the same directive;
//   - each part of a template points at its own text in the line (what an
//     error about it shows), and names Go identifiers;
//   - the acquire options the generated code will hold are valid Go
//     expressions, whatever the label or the wait.
func FuzzDirective(f *testing.F) {
	for _, s := range []string{`resource=a/{x.Y}  resource="b c/{{{z}}}"	mode=read`, "wait=1m30s resource=r", "try mode=write resource=r",
		"resource=r limit=3 label=batch", `resource=r label="a \"b"`, "resource=r wait=5 try", "resource=a/{b", "resource={1x}", "mode=bogus",
		`resource="unterminated`, "resource=r resource=r", "limit=0 resource=r", "resource=r label=é\x00", "resource=x/{p.Q} wait=1.5h", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		line := directivePrefix + rest
		if strings.ContainsAny(line, "\n\r") || !isDirective(&ast.Comment{Text: line}) {
			return // a line comment ends at the newline; not a directive
		}
		d, errs := directiveAt(line)
		for _, e := range errs {
			if e.Pos.Filename != "p.go" || e.Pos.Line != 3 || e.Pos.Column < 1 || e.Pos.Column > len(line)+1 || e.Msg == "" {
				t.Fatalf("%q: error %q is not on the directive's line", line, e.Error())
			}
		}
		if len(errs) > 0 {
			return
		}
		if len(d.resources) == 0 {
			t.Fatalf("%q: a directive without a resource and without an error", line)
		}
		for _, r := range d.resources {
			for _, p := range r.parts {
				if p.off < 0 || p.off >= len(line) {
					t.Fatalf("%q: part %+v of %q is off the line", line, p, r.text)
				}
				if p.path == nil && line[p.off] != p.lit[0] || p.path != nil && line[p.off] != '{' {
					t.Fatalf("%q: part %+v of %q points at %q", line, p, r.text, line[p.off:])
				}
				for _, id := range p.path {
					if !token.IsIdentifier(id) {
						t.Fatalf("%q: placeholder %s names %q", line, p, id)
					}
				}
			}
		}
		for _, o := range d.options("zklock", "time") {
			if _, err := parser.ParseExpr(o); err != nil {
				t.Fatalf("%q: the generated option %s is no Go expression: %v", line, o, err)
			}
		}
		again := writeBack(d)
		d2, errs := directiveAt(again)
		if len(errs) > 0 {
			t.Fatalf("%q written back as %q: %v", line, again, errs)
		}
		same := d2.mode == d.mode && d2.wait == d.wait && d2.try == d.try && d2.limit == d.limit && d2.label == d.label &&
			slices.Equal(d2.text, d.text) && slices.EqualFunc(d2.resources, d.resources, func(a, b *template) bool { return a.text == b.text })
		if !same {
			t.Fatalf("%q written back as %q reads %+v, was %+v", line, again, d2, d)
		}
	})
}
