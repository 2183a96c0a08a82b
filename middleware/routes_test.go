package middleware

import (
	"slices"
	"testing"
)

// A blank inside a route's path is part of the path, with or without the
// method before it: the route "GET /a b/{id}" locks "a b/42", not "42"
// (found by FuzzServeMuxPattern: the pattern, already without its method,
// was split again at its blank and the text before it dropped as a host).
func TestParseServeMuxPatternBlankInPath(t *testing.T) {
	for _, p := range []string{"GET /a b/{id}", "/a b/{id}", "GET\texample.com/a b/{id}", " /a b/{id}"} {
		params, tmpl, err := ParseServeMuxPattern(p)
		if err != nil || tmpl != "a b/{id}" || !slices.Equal(params, []string{"id"}) {
			t.Errorf("%q: %q %q %v; want [id] \"a b/{id}\"", p, params, tmpl, err)
		}
	}
	for p, want := range map[string][2]string{"GET /x": {"GET", "/x"}, "GET \t /x": {"GET", "/x"}, "/a b": {"", "/a b"}, "h/a\tb": {"", "h/a\tb"}, "/x": {"", "/x"}} {
		if m, rest := splitPattern(p); m != want[0] || rest != want[1] {
			t.Errorf("splitPattern(%q) = %q %q; want %q %q", p, m, rest, want[0], want[1])
		}
	}
}
