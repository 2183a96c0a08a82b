package restmpl

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/zklockkit/zklockkit/zklock"
)

// rebuild writes a parsed template back in the language: literal braces
// doubled, placeholders as written.
func rebuild(t *Template) string {
	var b strings.Builder
	esc := strings.NewReplacer("{", "{{", "}", "}}")
	for i, p := range t.Placeholders() {
		b.WriteString(esc.Replace(t.Literals()[i]))
		b.WriteString(p.String())
	}
	b.WriteString(esc.Replace(t.Literals()[len(t.Placeholders())]))
	return b.String()
}

// FuzzParse checks the one resource-template parser every front end
// shares (HTTP, gRPC, codegen), for any text and either list of sources:
//   - a template that does not parse gives a *SyntaxError matching
//     ErrSyntax, naming the template, at an offset inside it;
//   - one that parses is what it says: written back (braces doubled,
//     placeholders as written) it is the text it came from, each
//     placeholder is at its Offset, names hold no blank or control
//     character, sources are the front end's, and two placeholders always
//     have a "/" between them;
//   - rendered with any values, the name has exactly the literals' "/"s
//     (a value cannot add a level), and an empty value is a
//     *zklock.ResourceError matching zklock.ErrInvalidResource.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"global", "accounts/{id}", "{param:id}/{query:q}/x", "a{{b}}/{*}", "t/{header:X-Tenant}-{{/{cookie:s}",
		"", "accounts/{id", "a/{b{c}}", "{a}{b}", "{a}-{b}", "{query:}", "{bogus:x}", "{a b}", "}", "{{{x}}}", "x\x00", "\xff/{a}", "{param:a:b}/{c}"} {
		f.Add(s, true, "v")
	}
	f.Fuzz(func(t *testing.T, s string, http bool, value string) {
		var sources []string
		if http {
			sources = httpSources
		}
		tm, err := Parse(s, sources...)
		if err != nil {
			var se *SyntaxError
			if !errors.Is(err, ErrSyntax) || !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v: not a *SyntaxError matching ErrSyntax", s, err)
			}
			if se.Template != s || se.Offset < 0 || se.Offset > len(s) || s != "" && se.Offset == len(s) || se.Msg == "" {
				t.Fatalf("Parse(%q): error %+v does not point into the template", s, se)
			}
			return
		}
		if back := rebuild(tm); back != s || tm.String() != s {
			t.Fatalf("Parse(%q) written back is %q", s, back)
		}
		holes, lits := tm.Placeholders(), tm.Literals()
		if len(lits) != len(holes)+1 {
			t.Fatalf("Parse(%q): %d literals for %d placeholders", s, len(lits), len(holes))
		}
		slashes := 0
		for i, l := range lits {
			slashes += strings.Count(l, "/")
			if i > 0 && i < len(holes) && !strings.Contains(l, "/") {
				t.Fatalf("Parse(%q): placeholders %s and %s have %q between them", s, holes[i-1], holes[i], l)
			}
		}
		for _, p := range holes {
			if !strings.HasPrefix(s[p.Offset:], p.String()) {
				t.Fatalf("Parse(%q): %s is not at offset %d", s, p, p.Offset)
			}
			if p.Source != "" && !slices.Contains(sources, p.Source) {
				t.Fatalf("Parse(%q): source %q of %s is not the front end's", s, p.Source, p)
			}
			for _, r := range p.Name {
				if p.Name == "" || unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
					t.Fatalf("Parse(%q): placeholder name %q", s, p.Name)
				}
			}
		}
		if lit, ok := tm.Literal(); ok != (len(holes) == 0) || ok && lit != lits[0] {
			t.Fatalf("Parse(%q).Literal() = %q, %v", s, lit, ok)
		}

		name, err := tm.Render(func(i int) string { return value + strconv.Itoa(i) })
		if err != nil || strings.Count(name, "/") != slashes {
			t.Fatalf("Parse(%q) rendered with %q: %q (%d slashes, the literals have %d), %v", s, value, name, strings.Count(name, "/"), slashes, err)
		}
		if len(holes) > 0 {
			_, err = tm.Render(func(i int) string {
				if i == len(holes)-1 {
					return ""
				}
				return value
			})
			var re *zklock.ResourceError
			if !errors.Is(err, zklock.ErrInvalidResource) || !errors.As(err, &re) || re.Resource != s {
				t.Fatalf("Parse(%q) rendered with an empty value: %v; want a *zklock.ResourceError naming the template", s, err)
			}
		}
	})
}
