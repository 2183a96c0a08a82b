package middleware_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	zkmw "github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/zktest"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// A Routes table middleware wrapping a whole ServeMux (app-wide use, as
// Config's documentation shows it) asks the mux which route will serve
// each request: listed routes lock, with their parameters; other routes,
// 404, 405 and redirects are let through unlocked; a mux nested under
// another is asked too. (Before, every request was answered 500.)
func TestIntegration_ServeMuxWrappedWhole(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c, holder := newClient(t, root), newClient(t, root)
	mw, err := zkmw.Config{Locker: c, Routes: map[string]zkmw.Rule{
		"POST /accounts/{id}/withdraw": {Resource: "accounts/{id}", Try: true},
		"* /docs/{path...}":            {},
		"POST /t/{id}":                 {Resource: "inner/{id}"},
	}}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /accounts/{id}/withdraw", lockedAs)
	mux.Handle("GET /accounts/{id}", lockedAs)
	mux.Handle("/docs/{path...}", lockedAs)
	mux.Handle("GET /health", lockedAs)
	inner := http.NewServeMux()
	inner.Handle("POST /t/{id}", lockedAs)
	mux.Handle("/v1/", http.StripPrefix("/v1", mw(inner)))
	url := serve(t, mw(mux))

	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{http.MethodPost, "/accounts/1/withdraw", 200, "accounts/1"},
		{http.MethodPost, "/accounts/a%2Fb/withdraw", 200, "accounts/a%2Fb"},
		{http.MethodGet, "/accounts/1", 200, "-"},
		{http.MethodPut, "/docs/a/b.txt", 200, "docs/a%2Fb.txt"},
		{http.MethodGet, "/health", 200, "-"},
		{http.MethodPost, "/v1/t/7", 200, "inner/7"},
		{http.MethodGet, "/accounts/1/withdraw", 405, ""},
		{http.MethodGet, "/nope", 404, ""},
		{http.MethodPost, "/accounts//1/withdraw", 307, ""}, // cleaned, then matched
	} {
		req, _ := http.NewRequest(tc.method, url+tc.path, nil)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		timed := resp.Header.Get(zkmw.HeaderServerTiming) != ""
		if resp.StatusCode != tc.code || tc.body != "" && string(b) != tc.body || timed != (tc.body != "" && tc.body != "-") {
			t.Errorf("%s %s: %d %q (Server-Timing %v); want %d %q", tc.method, tc.path, resp.StatusCode, b, timed, tc.code, tc.body)
		}
	}
	l, err := holder.Acquire(context.Background(), "accounts/1")
	if err != nil {
		t.Fatal(err)
	}
	if a := call(t, http.MethodPost, url+"/accounts/1/withdraw"); a.code != http.StatusLocked {
		t.Errorf("held elsewhere: %+v; want 423", a)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	noNodesLeft(t, c)
}

// One rule for a whole ServeMux locks every route the mux serves, on the
// route's own resource; 404s are not locked.
func TestIntegration_ServeMuxWrappedWholeOneRule(t *testing.T) {
	c := newClient(t, zktest.UniqueRoot(t))
	mux := http.NewServeMux()
	mux.Handle("GET /files/{path...}", lockedAs)
	mux.Handle("GET /reports/{year}", lockedAs)
	url := serve(t, zkmw.Lock(c)(mux))
	for path, want := range map[string]string{"/files/a/b": "files/a%2Fb", "/reports/2024": "reports/2024"} {
		if a := call(t, http.MethodGet, url+path); a.code != 200 || a.body != want {
			t.Errorf("%s: %+v; want 200 %q", path, a, want)
		}
	}
	if a := call(t, http.MethodGet, url+"/nope"); a.code != 404 || a.timing != "" {
		t.Errorf("404: %+v", a)
	}
}
