package restmpl

import (
	"errors"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/zklock"
)

var httpSources = []string{"param", "query", "header", "cookie"}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in     string
		holes  []string // placeholders as written
		lits   []string
		err    string // part of the message; "" when it parses
		offset int
	}{
		{in: "global", lits: []string{"global"}},
		{in: "accounts/{id}", holes: []string{"{id}"}, lits: []string{"accounts/", ""}},
		{in: "{param:id}/{query:q}/x", holes: []string{"{param:id}", "{query:q}"}, lits: []string{"", "/", "/x"}},
		{in: "a{{b}}/{*}", holes: []string{"{*}"}, lits: []string{"a{b}/", ""}},
		{in: "t/{header:X-Tenant}-{{/{cookie:s}", holes: []string{"{header:X-Tenant}", "{cookie:s}"}, lits: []string{"t/", "-{/", ""}},
		{in: "é/{id}", holes: []string{"{id}"}, lits: []string{"é/", ""}},
		{in: "", err: "empty template"},
		{in: "accounts/{id", err: "unterminated placeholder (write {{ for a literal brace) (at byte 9)", offset: 9},
		{in: "accounts/{{id}", err: "unexpected } (write }} for a literal brace) (at byte 13)", offset: 13},
		{in: "a/{b{c}}", err: "unterminated placeholder", offset: 2},
		{in: "accounts/id}", err: "unexpected }", offset: 11},
		{in: "a/{}", err: "empty placeholder {}", offset: 2},
		{in: "a/{query:}", err: "empty name in {query:}", offset: 2},
		{in: "a/{metadata:x}", err: `unknown source "metadata" in {metadata:x} (want param, query, header, cookie)`, offset: 2},
		{in: "a/{a b}", err: `bad character ' ' in {a b}`, offset: 2},
		{in: "{a}{b}", err: `placeholders {a} and {b} must be separated by text containing "/"`, offset: 3},
		{in: "{a}-{b}", err: `must be separated`, offset: 4},
		{in: "{a}/{b}-{c}", err: `placeholders {b} and {c} must be separated`, offset: 8},
		{in: "a\tb", err: "control character U+0009 in template (at byte 1)", offset: 1},
		{in: "a\xffb", err: "invalid UTF-8 (at byte 1)", offset: 1},
	} {
		tm, err := Parse(tc.in, httpSources...)
		if tc.err != "" {
			var se *SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.err) || se.Offset != tc.offset {
				t.Errorf("Parse(%q) = %v (%+v); want a SyntaxError at %d saying %q", tc.in, err, se, tc.offset, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		var holes []string
		for _, p := range tm.Placeholders() {
			holes = append(holes, p.String())
		}
		if strings.Join(holes, " ") != strings.Join(tc.holes, " ") || strings.Join(tm.lits, "|") != strings.Join(tc.lits, "|") {
			t.Errorf("Parse(%q): holes %q lits %q; want %q %q", tc.in, holes, tm.lits, tc.holes, tc.lits)
		}
		if tm.String() != tc.in {
			t.Errorf("String() = %q", tm.String())
		}
	}
	// Without sources, any colon is an unknown source.
	if _, err := Parse("a/{x:y}"); err == nil || !strings.Contains(err.Error(), "takes no source prefix") {
		t.Errorf("no sources: %v", err)
	}
}

func TestRender(t *testing.T) {
	tm, err := Parse("accounts/{id}/{query:ccy}/x", httpSources...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, ccy, want string
	}{
		{"42", "EUR", "accounts/42/EUR/x"},
		{"a/b", "%", "accounts/a%2Fb/%25/x"},
		{"%2F", "{x}", "accounts/%252F/{x}/x"},
		{"é..", "..", "accounts/é../../x"},
	} {
		got, err := tm.Render(func(i int) string { return []string{tc.id, tc.ccy}[i] })
		if err != nil || got != tc.want {
			t.Errorf("%q %q: %q, %v; want %q", tc.id, tc.ccy, got, err, tc.want)
		}
	}
	_, err = tm.Render(func(i int) string { return []string{"1", ""}[i] })
	var re *zklock.ResourceError
	if !errors.Is(err, zklock.ErrInvalidResource) || !errors.As(err, &re) || re.Reason != "empty value for {query:ccy}" {
		t.Errorf("empty value: %v", err)
	}
	lit, _ := Parse("global")
	if s, ok := lit.Literal(); !ok || s != "global" {
		t.Errorf("Literal() = %q, %v", s, ok)
	}
	if _, ok := tm.Literal(); ok {
		t.Error("a template with placeholders is no literal")
	}
}

// A value zklock would refuse in a name is refused by Render, with an
// error that names the template, the placeholder and zklock's reason, and
// never the value: the error may go back to whoever sent it.
func TestRenderRefusesBadValues(t *testing.T) {
	tm, err := Parse("accounts/{id}/{header:X-Secret}", httpSources...)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cr3t-token"
	for _, tc := range []struct {
		name, id, hdr, reason string
	}{
		{"NUL", "a\x00b", secret, "value of {id}: contains a control character"},
		{"newline in header", "1", secret + "\n", "value of {header:X-Secret}: contains a control character"},
		{"DEL", "\x7f", secret, "value of {id}: contains a control character"},
		{"C1 control", "\u0085", secret, "value of {id}: contains a control character"},
		{"invalid UTF-8", "\xff", secret, "value of {id}: not valid UTF-8"},
		{"one long value", strings.Repeat("a", zklock.MaxResourceLen+1), secret, "value of {id}: longer than 1024 bytes"},
		{"long once escaped", strings.Repeat("/", 400), secret, "longer than 1024 bytes with its values filled in"},
	} {
		_, err := tm.Render(func(i int) string { return []string{tc.id, tc.hdr}[i] })
		re, ok := errors.AsType[*zklock.ResourceError](err)
		if !ok || !errors.Is(err, zklock.ErrInvalidResource) || re.Resource != tm.String() || re.Reason != tc.reason {
			t.Errorf("%s: %v; want a ResourceError on the template saying %q", tc.name, err, tc.reason)
			continue
		}
		if strings.Contains(err.Error(), secret) || len(tc.id) > 3 && strings.Contains(err.Error(), tc.id) {
			t.Errorf("%s: the error %q shows a value", tc.name, err)
		}
	}
	// Values zklock takes: dots, slashes, unicode, spaces, braces.
	for _, v := range []string{"..", "/", "a/../b", "é☃ 日本", "a b", "{x}", strings.Repeat("a", 1000)} {
		if _, err := tm.Render(func(i int) string { return []string{v, "x"}[i] }); err != nil {
			t.Errorf("value %.40q: %v", v, err)
		}
	}
}

// unescape reverses Value.
func unescape(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '/':
			return "", false
		case s[i] != '%':
			b.WriteByte(s[i])
		case strings.HasPrefix(s[i:], "%25"):
			b.WriteByte('%')
			i += 2
		case strings.HasPrefix(s[i:], "%2F"):
			b.WriteByte('/')
			i += 2
		default:
			return "", false
		}
	}
	return b.String(), true
}

// FuzzInjective checks that a value's escaped form holds no "/" and gives
// the value back, and that a template with two placeholders maps distinct
// pairs of values to distinct names.
func FuzzInjective(f *testing.F) {
	for _, s := range [][2]string{{"a", "b"}, {"a/b", "c"}, {"a", "b/c"}, {"%2F", "/"}, {"%", "%25"}, {"", "x"}} {
		f.Add(s[0], s[1], s[1], s[0])
	}
	tm, err := Parse("x/{a}/{b}-y")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a1, b1, a2, b2 string) {
		for _, v := range []string{a1, b1} {
			if back, ok := unescape(Value(v)); !ok || back != v {
				t.Fatalf("Value(%q) = %q does not give the value back", v, Value(v))
			}
		}
		n1, err1 := tm.Render(func(i int) string { return []string{a1, b1}[i] })
		n2, err2 := tm.Render(func(i int) string { return []string{a2, b2}[i] })
		if err1 != nil || err2 != nil {
			return
		}
		if (n1 == n2) != (a1 == a2 && b1 == b2) {
			t.Fatalf("(%q,%q) → %q and (%q,%q) → %q", a1, b1, n1, a2, b2, n2)
		}
	})
}
