package codegen

import (
	"go/token"
	"strings"
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

// parseTemplate parses a resource template. offs[i] is the offset in the
// directive line of s[i], with one more entry for the end of s.
//
//	template    = { literal | "{{" | "}}" | placeholder } .
//	placeholder = "{" identifier { "." identifier } "}" .
func parseTemplate(s string, offs []int) (*template, *syntaxError) {
	t := &template{text: s}
	if s == "" {
		return nil, &syntaxError{offs[0], "empty template"}
	}
	var lit strings.Builder
	litOff := -1
	addLit := func(i int, c byte) {
		if litOff < 0 {
			litOff = offs[i]
		}
		lit.WriteByte(c)
	}
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, part{lit: lit.String(), off: litOff})
			lit.Reset()
		}
		litOff = -1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{', c == '}' && i+1 < len(s) && s[i+1] == '}':
			addLit(i, c)
			i++
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, &syntaxError{offs[i], "unterminated placeholder (write {{ for a literal brace)"}
			}
			body := s[i+1 : i+end]
			if body == "" {
				return nil, &syntaxError{offs[i], "empty placeholder {}"}
			}
			path := strings.Split(body, ".")
			for _, id := range path {
				if !token.IsIdentifier(id) {
					return nil, &syntaxError{offs[i], "bad placeholder {" + body + "}: want {param} or {param.Field.Sub}"}
				}
			}
			flush()
			t.parts = append(t.parts, part{path: path, off: offs[i]})
			i += end
		case c == '}':
			return nil, &syntaxError{offs[i], "unexpected } (write }} for a literal brace)"}
		case c < 0x20 || c == 0x7f:
			return nil, &syntaxError{offs[i], "control character in template"}
		default:
			addLit(i, c)
		}
	}
	flush()
	return t, nil
}
