package restmpl

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zklockkit/zklockkit/zklock"
)

// ErrSyntax is matched by every *SyntaxError.
var ErrSyntax = errors.New("invalid resource template")

// SyntaxError is a template that does not parse.
type SyntaxError struct {
	Template string
	Offset   int    // byte offset in Template of the problem
	Msg      string // what is wrong, without the position
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("resource template %q: %s (at byte %d)", e.Template, e.Msg, e.Offset)
}

// Is reports whether target is ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// Placeholder is one "{...}" of a template.
type Placeholder struct {
	Source string // "" when the placeholder names none: "{id}"
	Name   string // "id" in "{id}" and "{param:id}"
	Offset int    // byte offset of its "{" in the template
}

// String returns the placeholder as written, e.g. "{query:id}".
func (p Placeholder) String() string {
	if p.Source == "" {
		return "{" + p.Name + "}"
	}
	return "{" + p.Source + ":" + p.Name + "}"
}

// Template is a parsed resource template. It is immutable and safe for
// concurrent use.
type Template struct {
	src   string
	lits  []string      // lits[i] precedes holes[i]; one more literal at the end
	holes []Placeholder // in order
	size  int           // total length of the literals
}

// Parse parses s. sources lists the source names the front end accepts
// before a ":" in a placeholder; a placeholder without one has Source "".
func Parse(s string, sources ...string) (*Template, error) {
	t := &Template{src: s}
	bad := func(off int, format string, a ...any) (*Template, error) {
		return nil, &SyntaxError{Template: s, Offset: off, Msg: fmt.Sprintf(format, a...)}
	}
	if s == "" {
		return bad(0, "empty template")
	}
	var lit strings.Builder
	sepSince := true // a "/" appeared in the literal text since the last placeholder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{' && strings.HasPrefix(s[i:], "{{"), c == '}' && strings.HasPrefix(s[i:], "}}"):
			lit.WriteByte(c)
			i += 2
		case c == '{':
			end := strings.IndexAny(s[i+1:], "{}")
			if end < 0 || s[i+1+end] != '}' {
				return bad(i, "unterminated placeholder (write {{ for a literal brace)")
			}
			body := s[i+1 : i+1+end]
			p, msg := placeholder(body, sources)
			if msg != "" {
				return bad(i, "%s", msg)
			}
			if len(t.holes) > 0 && !sepSince {
				return bad(i, "placeholders %s and {%s} must be separated by text containing \"/\"", t.holes[len(t.holes)-1], body)
			}
			p.Offset = i
			t.lits = append(t.lits, lit.String())
			t.size += lit.Len()
			lit.Reset()
			t.holes = append(t.holes, p)
			sepSince = false
			i += end + 2
		case c == '}':
			return bad(i, "unexpected } (write }} for a literal brace)")
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return bad(i, "invalid UTF-8")
			}
			if unicode.IsControl(r) {
				return bad(i, "control character %U in template", r)
			}
			if c == '/' {
				sepSince = true
			}
			lit.WriteString(s[i : i+n])
			i += n
		}
	}
	t.lits = append(t.lits, lit.String())
	t.size += lit.Len()
	return t, nil
}

// placeholder parses the text between the braces.
func placeholder(body string, sources []string) (Placeholder, string) {
	if body == "" {
		return Placeholder{}, "empty placeholder {}"
	}
	p := Placeholder{Name: body}
	if src, name, ok := strings.Cut(body, ":"); ok {
		if !slices.Contains(sources, src) {
			if len(sources) == 0 {
				return p, fmt.Sprintf("unknown source %q in {%s}: this front end takes no source prefix", src, body)
			}
			return p, fmt.Sprintf("unknown source %q in {%s} (want %s)", src, body, strings.Join(sources, ", "))
		}
		p.Source, p.Name = src, name
		if name == "" {
			return p, fmt.Sprintf("empty name in {%s}", body)
		}
	}
	for _, r := range p.Name {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			return p, fmt.Sprintf("bad character %q in {%s}", r, body)
		}
	}
	return p, ""
}

// String returns the template as written.
func (t *Template) String() string { return t.src }

// Placeholders returns the template's placeholders, in order. The slice
// must not be modified.
func (t *Template) Placeholders() []Placeholder { return t.holes }

// Literals returns the literal text around the placeholders, braces
// unescaped: one more than Placeholders, Literals()[i] before
// placeholder i. The slice must not be modified.
func (t *Template) Literals() []string { return t.lits }

// Literal returns the resource name and true when the template has no
// placeholder.
func (t *Template) Literal() (string, bool) {
	if len(t.holes) > 0 {
		return "", false
	}
	return t.lits[0], true
}

// Render fills the template in: value(i) is the value of placeholder i, as
// it came from the request (not escaped). A value that cannot go into a
// resource name (empty, or refused by zklock.ValidateResource), or a name
// longer than zklock.MaxResourceLen, is a *zklock.ResourceError that names
// the template and the placeholder but never the value, so that it may be
// shown to whoever sent the request.
func (t *Template) Render(value func(i int) string) (string, error) {
	if len(t.holes) == 0 {
		return t.lits[0], nil
	}
	var b strings.Builder
	b.Grow(t.size + 16*len(t.holes))
	for i := range t.holes {
		b.WriteString(t.lits[i])
		v := value(i)
		if err := checkValue(t.src, t.holes[i], v); err != nil {
			return "", err
		}
		WriteValue(&b, v)
	}
	b.WriteString(t.lits[len(t.holes)])
	if b.Len() > zklock.MaxResourceLen {
		return "", tooLong(t.src)
	}
	return b.String(), nil
}
