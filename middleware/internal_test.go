package middleware

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

func TestTemplateRender(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/accounts/42/withdraw?currency=EUR&empty=&slash=a%2Fb", nil)
	req.Header.Set("X-Tenant", "acme")
	req.AddCookie(&http.Cookie{Name: "session", Value: "s1"})
	params := map[string]string{"id": "42", "*": "x/y.txt"}
	param := func(n string) string { return params[n] }
	for tmpl, want := range map[string]string{
		"accounts/{id}":                      "accounts/42",
		"accounts/{param:id}":                "accounts/42",
		"{id}":                               "42",
		"global":                             "global",
		"t/{header:X-Tenant}/a/{id}/{id}":    "t/acme/a/42/42",
		"{query:currency}/{header:x-tenant}": "EUR/acme",
		"s/{cookie:session}":                 "s/s1",
		"q/{query:slash}":                    "q/a%2Fb",
		"files/{*}":                          "files/x%2Fy.txt",
		"{{literal}}/{id}":                   "{literal}/42",
	} {
		tp, err := parseTemplate(tmpl)
		if err != nil {
			t.Fatalf("%q: %v", tmpl, err)
		}
		got, err := tp.render(req, param)
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", tmpl, got, err, want)
		}
	}
	for _, tmpl := range []string{"{query:missing}", "{query:empty}", "{header:X-None}", "{cookie:none}", "{account}"} {
		tp, err := parseTemplate(tmpl)
		if err != nil {
			t.Fatalf("%q: %v", tmpl, err)
		}
		_, err = tp.render(req, param)
		var re *zklock.ResourceError
		if !errors.As(err, &re) || !strings.HasPrefix(re.Reason, "empty value for {") {
			t.Errorf("%q: %v, want a *zklock.ResourceError for an empty value", tmpl, err)
		}
	}
	if tp, _ := parseTemplate("{id}/{query:q}/{header:H}/{cookie:c}/{*}"); !slices.Equal(tp.params(), []string{"id", "*"}) {
		t.Errorf("params = %q", tp.params())
	}
}

func TestParsePatterns(t *testing.T) {
	for _, tc := range []struct {
		parse   PatternParser
		pattern string
		params  []string
		tmpl    string
	}{
		{ParseServeMuxPattern, "/accounts/{id}/withdraw", []string{"id"}, "accounts/{id}/withdraw"},
		{ParseServeMuxPattern, "POST /accounts/{id}/withdraw", []string{"id"}, "accounts/{id}/withdraw"},
		{ParseServeMuxPattern, "GET example.com/a/{x}", []string{"x"}, "a/{x}"},
		{ParseServeMuxPattern, "/files/{path...}", []string{"path"}, "files/{path}"},
		{ParseServeMuxPattern, "/{$}", nil, "/"},
		{ParseServeMuxPattern, "/users/{id:[0-9]{1,3}}/x", []string{"id"}, "users/{id}/x"}, // chi, gorilla
		{ParseServeMuxPattern, "/health", nil, "health"},
		{ParseEchoPattern, "/accounts/:id/withdraw", []string{"id"}, "accounts/{id}/withdraw"},
		{ParseEchoPattern, "/a/:x/b/:y", []string{"x", "y"}, "a/{x}/b/{y}"},
		{ParseEchoPattern, "/files/*", []string{"*"}, "files/{*}"},
		{ParseEchoPattern, "/", nil, "/"},
		{ParseEchoPattern, `/time\:now/:id`, []string{"id"}, "time:now/{id}"},
		{ParseEchoPattern, "/a{b}", nil, "a{{b}}"},
	} {
		params, tmpl, err := tc.parse(tc.pattern)
		if err != nil || !slices.Equal(params, tc.params) || tmpl != tc.tmpl {
			t.Errorf("%q: %q %q %v; want %q %q", tc.pattern, params, tmpl, err, tc.params, tc.tmpl)
		}
		if _, err := parseTemplate(tmpl); err != nil {
			t.Errorf("%q: default template %q does not parse: %v", tc.pattern, tmpl, err)
		}
	}
	if _, _, err := ParseServeMuxPattern("/a/{x"); err == nil {
		t.Error("unterminated wildcard accepted")
	}
}

// The rule's own options come after the user's, and only where the rule
// says something: a user's zklock.Limit survives a default Mode.
func TestRuleOptionsOrder(t *testing.T) {
	base := []zklock.AcquireOption{zklock.LeaseLabel("api")}
	r, err := compileRule(Rule{}, base)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.opts[zklock.Exclusive]); n != 1 {
		t.Errorf("default rule adds %d options to the user's, want none", n-1)
	}
	r, _ = compileRule(Rule{Limit: 2, Try: true}, base)
	if n := len(r.opts[zklock.Exclusive]); n != 3 {
		t.Errorf("Limit+Try rule: %d options, want 3", n)
	}
}

func TestServerTimingFormat(t *testing.T) {
	for _, tc := range []struct {
		resource string
		waited   time.Duration
		want     string
	}{
		{"accounts/42", 12400 * time.Microsecond, `zklock;dur=12.4;desc="accounts/42"`},
		{"a", 0, `zklock;dur=0;desc="a"`},
		{"a", 1500 * time.Nanosecond, `zklock;dur=0.001;desc="a"`},
		{`say "hi"\`, time.Second, `zklock;dur=1000;desc="say \"hi\"\\"`},
		{"é\x7f", time.Millisecond, `zklock;dur=1;desc="%C3%A9%7F"`},
		{strings.Repeat("x", 300), time.Millisecond, `zklock;dur=1;desc="` + strings.Repeat("x", 128) + `..."`},
	} {
		if got := serverTiming(tc.resource, tc.waited); got != tc.want {
			t.Errorf("%q %v: %s, want %s", tc.resource, tc.waited, got, tc.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Millisecond: "1", time.Second: "1",
		1500 * time.Millisecond: "2", time.Minute: "60"} {
		if got := retryAfter(d); got != want {
			t.Errorf("%v: %s, want %s", d, got, want)
		}
	}
}
