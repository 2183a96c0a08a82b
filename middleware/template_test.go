package middleware

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/zklockkit/zklockkit/zklock"
)

// ctxFor builds an echo.Context for a matched route, without a server.
func ctxFor(method, target, route string, params ...string) echo.Context {
	req := httptest.NewRequest(method, target, nil)
	req.Header.Set("X-Tenant", "acme")
	c := echo.New().NewContext(req, httptest.NewRecorder())
	c.SetPath(route)
	var names, values []string
	for i := 0; i+1 < len(params); i += 2 {
		names, values = append(names, params[i]), append(values, params[i+1])
	}
	c.SetParamNames(names...)
	c.SetParamValues(values...)
	return c
}

func TestTemplateRender(t *testing.T) {
	c := ctxFor(http.MethodPost, "/accounts/42/withdraw?currency=EUR&empty=", "/accounts/:id/withdraw", "id", "42")
	for tmpl, want := range map[string]string{
		"accounts/{id}":                      "accounts/42",
		"accounts/{param:id}":                "accounts/42",
		"{id}":                               "42",
		"global":                             "global",
		"t/{header:X-Tenant}/a/{id}/{id}":    "t/acme/a/42/42",
		"{query:currency}-{header:x-tenant}": "EUR-acme",
	} {
		tp, err := parseTemplate(tmpl)
		if err != nil {
			t.Fatalf("%q: %v", tmpl, err)
		}
		got, err := tp.render(c)
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", tmpl, got, err, want)
		}
	}
	for tmpl, want := range map[string]error{
		"{query:missing}": zklock.ErrInvalidResource,
		"{query:empty}":   zklock.ErrInvalidResource,
		"{header:X-None}": zklock.ErrInvalidResource,
		"{account}":       ErrInvalidConfig, // the route has no such parameter
		"a/{param:other}": ErrInvalidConfig,
	} {
		tp, err := parseTemplate(tmpl)
		if err != nil {
			t.Fatalf("%q: %v", tmpl, err)
		}
		if _, err := tp.render(c); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", tmpl, err, want)
		}
	}
	empty := ctxFor(http.MethodPost, "/accounts//withdraw", "/accounts/:id/withdraw", "id", "")
	tp, _ := parseTemplate("accounts/{id}")
	if _, err := tp.render(empty); !errors.Is(err, zklock.ErrInvalidResource) {
		t.Errorf("empty parameter: %v, want ErrInvalidResource", err)
	}
	if tp, _ := parseTemplate("{id}/{query:q}/{header:H}/{*}"); !slices.Equal(tp.params(), []string{"id", "*"}) {
		t.Errorf("params = %q", tp.params())
	}
}

func TestRouteResource(t *testing.T) {
	for _, tc := range []struct {
		route  string
		params []string
		want   string
	}{
		{"/accounts/:id/withdraw", []string{"id", "42"}, "accounts/42/withdraw"},
		{"/a/:x/b/:y", []string{"x", "1", "y", "2"}, "a/1/b/2"},
		{"/files/*", []string{"*", "x/y.txt"}, "files/x/y.txt"},
		{"/files/*", []string{"*", ""}, "files/"},
		{"/health", nil, "health"},
		{"/", nil, "/"},
		{`/time\:now/:id`, []string{"id", "7"}, "time:now/7"},
		{`/time\:now`, nil, "time:now"},
	} {
		c := ctxFor(http.MethodGet, "/", tc.route, tc.params...)
		if !routeMatched(c) {
			t.Errorf("%s: not matched", tc.route)
			continue
		}
		got, err := routeResource(c)
		if err != nil || got != tc.want {
			t.Errorf("%s %q: %q, %v; want %q", tc.route, tc.params, got, err, tc.want)
		}
	}
	c := ctxFor(http.MethodGet, "/", "/accounts/:id", "id", "")
	if _, err := routeResource(c); !errors.Is(err, zklock.ErrInvalidResource) {
		t.Errorf("empty parameter: %v", err)
	}
	if !slices.Equal(routeParams(`/a/:x/b\:c/:y/*`), []string{"x", "y", "*"}) {
		t.Errorf("routeParams = %q", routeParams(`/a/:x/b\:c/:y/*`))
	}
}

// Requests Echo routes to its 404 or 405 handlers are not locked.
func TestRouteMatchedOnlyForRealRoutes(t *testing.T) {
	e := echo.New()
	var matched []bool
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { matched = append(matched, routeMatched(c)); return next(c) }
	})
	h := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	e.POST("/accounts/:id/withdraw", h)
	e.GET("/health", h)
	for _, r := range []struct {
		method, target string
		code           int
	}{
		{http.MethodPost, "/accounts/1/withdraw", 204},
		{http.MethodGet, "/accounts/1/withdraw", 405},
		{http.MethodGet, "/nope", 404},
		{http.MethodGet, "/health", 204},
		{http.MethodPost, "/health", 405},
	} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(r.method, r.target, nil))
		if rec.Code != r.code {
			t.Fatalf("%s %s: %d", r.method, r.target, rec.Code)
		}
	}
	if want := []bool{true, false, false, true, false}; !slices.Equal(matched, want) {
		t.Fatalf("matched = %v, want %v", matched, want)
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
