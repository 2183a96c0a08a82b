package middleware

import (
	"fmt"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/zklockkit/zklockkit/zklock"
)

// source is where a template placeholder takes its value from.
type source int

const (
	srcLiteral source = iota
	srcParam
	srcQuery
	srcHeader
)

func (s source) String() string {
	switch s {
	case srcParam:
		return "param"
	case srcQuery:
		return "query"
	case srcHeader:
		return "header"
	}
	return "literal"
}

// part is a literal run or a placeholder of a template.
type part struct {
	src  source
	text string // the literal, or the placeholder's name
}

// template is a compiled resource template such as "accounts/{id}".
type template struct {
	src   string
	parts []part
}

// parseTemplate compiles a resource template (see Rule.Resource).
func parseTemplate(s string) (*template, error) {
	t := &template{src: s}
	for rest := s; rest != ""; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			t.parts = append(t.parts, part{srcLiteral, rest})
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("%w: resource template %q: unmatched '}'", ErrInvalidConfig, s)
		}
		if open > 0 {
			t.parts = append(t.parts, part{srcLiteral, rest[:open]})
		}
		end := strings.IndexAny(rest[open+1:], "{}")
		if end < 0 || rest[open+1+end] != '}' {
			return nil, fmt.Errorf("%w: resource template %q: unterminated '{'", ErrInvalidConfig, s)
		}
		p, err := parsePlaceholder(rest[open+1 : open+1+end])
		if err != nil {
			return nil, fmt.Errorf("%w: resource template %q: %v", ErrInvalidConfig, s, err)
		}
		t.parts = append(t.parts, p)
		rest = rest[open+end+2:]
	}
	return t, nil
}

func parsePlaceholder(s string) (part, error) {
	p := part{src: srcParam, text: s}
	if kind, name, ok := strings.Cut(s, ":"); ok {
		switch kind {
		case "param":
			p.src = srcParam
		case "query":
			p.src = srcQuery
		case "header":
			p.src = srcHeader
		default:
			return p, fmt.Errorf("unknown source %q in {%s} (want param, query or header)", kind, s)
		}
		p.text = name
	}
	if p.text == "" || strings.ContainsAny(p.text, "/:") {
		return p, fmt.Errorf("bad placeholder {%s}", s)
	}
	return p, nil
}

// params returns the names of the route parameters the template uses.
func (t *template) params() []string {
	var ps []string
	for _, p := range t.parts {
		if p.src == srcParam {
			ps = append(ps, p.text)
		}
	}
	return ps
}

// render fills the template in from the request.
func (t *template) render(c echo.Context) (string, error) {
	if len(t.parts) == 1 && t.parts[0].src == srcLiteral {
		return t.parts[0].text, nil
	}
	var b strings.Builder
	for _, p := range t.parts {
		var v string
		switch p.src {
		case srcLiteral:
			b.WriteString(p.text)
			continue
		case srcParam:
			var ok bool
			if v, ok = param(c, p.text); !ok {
				return "", fmt.Errorf("%w: resource template %q: route %q has no parameter %q",
					ErrInvalidConfig, t.src, c.Path(), p.text)
			}
		case srcQuery:
			v = c.QueryParam(p.text)
		case srcHeader:
			v = c.Request().Header.Get(p.text)
		}
		if v == "" {
			return "", &zklock.ResourceError{Resource: t.src,
				Reason: fmt.Sprintf("missing value for {%s:%s}", p.src, p.text)}
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// param returns the value of a route parameter and whether the matched
// route has it.
func param(c echo.Context, name string) (string, bool) {
	for i, n := range c.ParamNames() {
		if n == name {
			vs := c.ParamValues()
			if i < len(vs) {
				return vs[i], true
			}
			return "", true
		}
	}
	return "", false
}

// routeParams returns the parameter names of an Echo route path, in order
// (":id" gives "id", "*" gives "*"; "\:" is a literal colon).
func routeParams(path string) []string {
	var names []string
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '\\':
			if i+1 < len(path) && path[i+1] == ':' {
				i++
			}
		case ':':
			j := i + 1
			for j < len(path) && path[j] != '/' {
				j++
			}
			names = append(names, path[i+1:j])
			i = j - 1
		case '*':
			names = append(names, "*")
		}
	}
	return names
}

// routeMatched reports whether the request matched a route handler. On a
// 404 or 405 answer Echo still sets the path (of the nearest route) but
// no parameter values: such requests are not locked.
func routeMatched(c echo.Context) bool {
	path := c.Path()
	if path == "" || c.Get(echo.ContextKeyHeaderAllow) != nil {
		return false
	}
	return len(c.ParamNames()) > 0 || !hasParams(path)
}

func hasParams(path string) bool {
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '\\':
			i++ // "\:" is a literal colon
		case ':', '*':
			return true
		}
	}
	return false
}

// routeResource is the default resource: the matched route's path pattern
// without its leading slash, with parameter values filled in.
func routeResource(c echo.Context) (string, error) {
	path := c.Path()
	if !hasParams(path) {
		return trimRoot(strings.ReplaceAll(path, `\:`, ":")), nil
	}
	var b strings.Builder
	b.Grow(len(path) + 16)
	for i := 0; i < len(path); i++ {
		switch ch := path[i]; ch {
		case '\\':
			if i+1 < len(path) && path[i+1] == ':' {
				b.WriteByte(':')
				i++
				continue
			}
			b.WriteByte(ch)
		case ':':
			j := i + 1
			for j < len(path) && path[j] != '/' {
				j++
			}
			name := path[i+1 : j]
			v, _ := param(c, name)
			if v == "" {
				return "", &zklock.ResourceError{Resource: path,
					Reason: fmt.Sprintf("empty value for route parameter %q", name)}
			}
			b.WriteString(v)
			i = j - 1
		case '*':
			v, _ := param(c, "*")
			b.WriteString(v)
		default:
			b.WriteByte(ch)
		}
	}
	return trimRoot(b.String()), nil
}

func trimRoot(p string) string {
	if len(p) > 1 && p[0] == '/' {
		return p[1:]
	}
	return p
}
