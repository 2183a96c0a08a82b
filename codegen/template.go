package codegen

import (
	"errors"
	"go/token"
	"strings"

	"github.com/zklockkit/zklockkit/internal/restmpl"
)

// template is a parsed resource=TEMPLATE value.
type template struct {
	text  string    // as written, quotes removed
	parts []part    // literal text and placeholders, in order
	base  token.Pos // the directive line's "//"; part offsets are from it
}

// part is literal text or a placeholder.
type part struct {
	lit  string   // literal text, when path is nil
	path []string // placeholder: a parameter, then field names
	off  int      // offset of the part (of "{" for a placeholder) in the line
}

// String returns the placeholder as written, "{t.From}".
func (p part) String() string { return "{" + strings.Join(p.path, ".") + "}" }

// parseTemplate parses a resource template in zklockkit's one resource
// language (see internal/restmpl), whose placeholders here name a
// parameter and fields of it. offs[i] is the offset in the directive line
// of s[i], with one more entry for the end of s.
func parseTemplate(s string, offs []int) (*template, *syntaxError) {
	rt, err := restmpl.Parse(s)
	if err != nil {
		var se *restmpl.SyntaxError
		if errors.As(err, &se) {
			return nil, &syntaxError{offs[min(se.Offset, len(offs)-1)], se.Msg}
		}
		return nil, &syntaxError{offs[0], err.Error()}
	}
	t := &template{text: s}
	lits := rt.Literals()
	litOff := 0 // offset in s of the current literal: the end of the previous placeholder
	for i, p := range rt.Placeholders() {
		if lits[i] != "" {
			t.parts = append(t.parts, part{lit: lits[i], off: offs[litOff]})
		}
		path := strings.Split(p.Name, ".")
		for _, id := range path {
			if !token.IsIdentifier(id) {
				return nil, &syntaxError{offs[p.Offset], "bad placeholder " + p.String() + ": want {param} or {param.Field.Sub}"}
			}
		}
		t.parts = append(t.parts, part{path: path, off: offs[p.Offset]})
		litOff = p.Offset + len(p.String())
	}
	if last := lits[len(lits)-1]; last != "" {
		t.parts = append(t.parts, part{lit: last, off: offs[min(litOff, len(offs)-1)]})
	}
	return t, nil
}
