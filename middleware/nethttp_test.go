package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	zkmw "github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func newClient(t testing.TB, root string, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	return newClientAt(t, zktest.Shared().Addr(), root, opts...)
}

func newClientAt(t testing.TB, addr, root string, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{addr}, append([]zklock.Option{zklock.WithRoot(root)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type answer struct {
	code                          int
	body, msg, retryAfter, timing string
}

func call(t testing.TB, method, url string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	return send(t, req)
}

func send(t testing.TB, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{code: resp.StatusCode, body: strings.TrimSpace(string(b)),
		retryAfter: resp.Header.Get("Retry-After"), timing: resp.Header.Get(zkmw.HeaderServerTiming)}
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &m) == nil {
		a.msg = m.Message
	}
	return a
}

// lockedAs answers with the resource the request is locked under, or "-".
var lockedAs = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if l := zkmw.LeaseFrom(r); l != nil {
		_, _ = io.WriteString(w, l.Resource())
		return
	}
	_, _ = io.WriteString(w, "-")
})

// noNodesLeft fails the test if c still holds lock nodes.
func noNodesLeft(t testing.TB, c *zklock.Client) {
	t.Helper()
	if ls := c.Locks(); len(ls) != 0 {
		t.Fatalf("nodes left: %+v", ls)
	}
}

func serve(t testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Per-route use on a ServeMux with Go 1.22 patterns: route parameters,
// query, header and cookie placeholders, the default resource, and the
// answers 200 (Server-Timing), 423 (Retry-After), 400.
func TestIntegration_ServeMuxPerRoute(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c, holder := newClient(t, root), newClient(t, root)
	lock := func(opts ...zkmw.Option) func(http.Handler) http.Handler {
		return zkmw.Lock(c, append([]zkmw.Option{zkmw.Try()}, opts...)...)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /accounts/{id}/withdraw", lock(zkmw.Resource("accounts/{id}"))(lockedAs))
	mux.Handle("GET /reports/{year}/{month}", lock()(lockedAs))
	mux.Handle("GET /files/{path...}", lock(zkmw.Resource("files/{path}"))(lockedAs))
	mux.Handle("GET /q", lock(zkmw.Resource("q/{query:id}/{header:X-Tenant}"))(lockedAs))
	url := serve(t, mux)

	for _, tc := range []struct {
		method, path, want string
	}{
		{http.MethodPost, "/accounts/42/withdraw", "accounts/42"},
		{http.MethodPost, "/accounts/a%2Fb/withdraw", "accounts/a%2Fb"},
		{http.MethodPost, "/accounts/%25/withdraw", "accounts/%25"},
		{http.MethodGet, "/reports/2024/05", "reports/2024/05"},
		{http.MethodGet, "/files/a/b.txt", "files/a%2Fb.txt"},
	} {
		a := call(t, tc.method, url+tc.path)
		if a.code != 200 || a.body != tc.want || !strings.HasPrefix(a.timing, "zklock;dur=") {
			t.Errorf("%s %s: %+v; want 200 %q with Server-Timing", tc.method, tc.path, a, tc.want)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, url+"/q?id=7", nil)
	req.Header.Set("X-Tenant", "acme")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "q/7/acme" {
			t.Errorf("query and header: %q", b)
		}
	}
	if a := call(t, http.MethodGet, url+"/q?id=7"); a.code != 400 || a.timing != "" ||
		a.msg != `invalid lock resource "q/{query:id}/{header:X-Tenant}": empty value for {header:X-Tenant}` {
		t.Errorf("missing header: %+v; want 400 saying which placeholder is empty, without Server-Timing", a)
	}

	l, err := holder.Acquire(context.Background(), "accounts/42")
	if err != nil {
		t.Fatal(err)
	}
	if a := call(t, http.MethodPost, url+"/accounts/42/withdraw"); a.code != http.StatusLocked || a.msg != "resource is locked" ||
		a.retryAfter != "1" || !strings.Contains(a.timing, `desc="accounts/42"`) {
		t.Errorf("held: %+v; want 423 with Retry-After and Server-Timing", a)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	noNodesLeft(t, c)
}

// The table on a ServeMux, keyed by the registered patterns, with the
// middleware around each handler; CheckRoutes finds keys that match no
// route.
func TestIntegration_ServeMuxRouteTable(t *testing.T) {
	c := newClient(t, zktest.UniqueRoot(t))
	cfg := zkmw.Config{Locker: c, Routes: map[string]zkmw.Rule{
		"POST /accounts/{id}/withdraw": {Resource: "accounts/{id}"},
		"* /docs/{id}":                 {Resource: "docs/{id}", ReadWrite: true},
	}}
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	// ServeMux matches the route, then calls the handler: the middleware
	// wraps each handler, so that it sees the route.
	mux := http.NewServeMux()
	patterns := []string{"POST /accounts/{id}/withdraw", "GET /accounts/{id}", "/docs/{id}", "GET /health"}
	for _, p := range patterns {
		mux.Handle(p, mw(lockedAs))
	}
	if err := cfg.CheckRoutes(patterns); err != nil {
		t.Fatal(err)
	}
	url := serve(t, mux)
	for _, tc := range []struct {
		method, path string
		code         int
		want         string
	}{
		{http.MethodPost, "/accounts/1/withdraw", 200, "accounts/1"},
		{http.MethodGet, "/accounts/1", 200, "-"},
		{http.MethodGet, "/docs/1", 200, "docs/1"},
		{http.MethodPut, "/docs/1", 200, "docs/1"},
		{http.MethodGet, "/health", 200, "-"},
		{http.MethodGet, "/nope", 404, ""},
	} {
		a := call(t, tc.method, url+tc.path)
		if a.code != tc.code || (tc.want != "" && a.body != tc.want) {
			t.Errorf("%s %s: %+v; want %d %q", tc.method, tc.path, a, tc.code, tc.want)
		}
	}
	cfg.Routes["POST /acounts/{id}"] = zkmw.Rule{}
	if err := cfg.CheckRoutes(patterns); !errors.Is(err, zkmw.ErrInvalidConfig) || !strings.Contains(err.Error(), "/acounts/{id}") {
		t.Fatalf("CheckRoutes = %v", err)
	}
}

// A route that locks two resources, all or nothing: a transfer waits for
// both accounts, and a transfer from an account to itself locks it once.
func TestIntegration_SeveralResources(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c, holder := newClient(t, root), newClient(t, root)
	mux := http.NewServeMux()
	mux.Handle("POST /transfer/{from}/{to}",
		zkmw.Lock(c, zkmw.Resource("accounts/{from}", "accounts/{to}"), zkmw.Try())(lockedAs))
	url := serve(t, mux)
	if a := call(t, http.MethodPost, url+"/transfer/a/b"); a.code != 200 || a.body != "accounts/a,accounts/b" {
		t.Fatalf("a→b: %+v", a)
	}
	if a := call(t, http.MethodPost, url+"/transfer/b/b"); a.code != 200 || a.body != "accounts/b" {
		t.Fatalf("b→b: %+v", a)
	}
	l, err := holder.Acquire(context.Background(), "accounts/b")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	if a := call(t, http.MethodPost, url+"/transfer/a/b"); a.code != http.StatusLocked {
		t.Fatalf("a→b while b is held: %+v", a)
	}
	if a := call(t, http.MethodPost, url+"/transfer/a/c"); a.code != 200 {
		t.Fatalf("a→c while b is held: %+v", a)
	}
}

// A route with a Limit is a semaphore: Limit requests hold it at once,
// the next one is refused (Try).
func TestIntegration_Semaphore(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root)
	in := make(chan struct{})
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("POST /jobs/{kind}", zkmw.Lock(c, zkmw.Resource("jobs/{kind}"), zkmw.Limit(2), zkmw.Try())(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if zkmw.LeaseFrom(r).Mode() != zklock.Semaphore {
				w.WriteHeader(500)
				return
			}
			in <- struct{}{}
			<-release
		})))
	url := serve(t, mux)
	var wg sync.WaitGroup
	codes := make(chan int, 2)
	for range 2 {
		wg.Go(func() { codes <- call(t, http.MethodPost, url+"/jobs/export").code })
	}
	<-in
	<-in
	if a := call(t, http.MethodPost, url+"/jobs/export"); a.code != http.StatusLocked {
		t.Errorf("third holder of a semaphore of 2: %+v", a)
	}
	close(release)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != 200 {
			t.Errorf("holder answered %d", code)
		}
	}
}

// A lease lost while the handler runs cancels its context; a handler that
// wrote nothing gets 503 "lock lost".
func TestIntegration_LostLeaseAnswers503(t *testing.T) {
	c := newClient(t, zktest.UniqueRoot(t))
	path := make(chan string, 1)
	mux := http.NewServeMux()
	var released error
	done := make(chan struct{})
	mux.Handle("POST /accounts/{id}", zkmw.LockWithConfig(zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "accounts/{id}"},
		OnRelease: func(_ *http.Request, _ *zklock.Lease, err error) { released = err; close(done) }})(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			path <- zkmw.LeaseFrom(r).Path()
			<-r.Context().Done()
		})))
	url := serve(t, mux)
	res := make(chan answer, 1)
	go func() { res <- call(t, http.MethodPost, url+"/accounts/1") }()
	if err := c.Conn().Delete(<-path, -1); err != nil {
		t.Fatal(err)
	}
	if a := <-res; a.code != 503 || a.msg != "lock lost" {
		t.Fatalf("%+v", a)
	}
	<-done
	if !errors.Is(released, zklock.ErrLeaseLost) {
		t.Fatalf("OnRelease saw %v", released)
	}
}

// Another router (chi, gorilla) plugs in through Router: here a toy one
// that keeps its match in the request's context.
func TestIntegration_CustomRouter(t *testing.T) {
	c := newClient(t, zktest.UniqueRoot(t))
	type match struct {
		pattern string
		params  map[string]string
	}
	type key struct{}
	router := zkmw.Router{
		Param:   func(r *http.Request, name string) string { return r.Context().Value(key{}).(match).params[name] },
		Pattern: func(r *http.Request) string { return r.Context().Value(key{}).(match).pattern },
	}
	mw, err := zkmw.Config{Locker: c, Router: router, Routes: map[string]zkmw.Rule{
		"GET /users/{id:[0-9]+}": {},
	}}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	h := mw(lockedAs)
	toy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/users/")
		m := match{pattern: "/users/{id:[0-9]+}", params: map[string]string{"id": id}}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), key{}, m)))
	})
	if a := call(t, http.MethodGet, serve(t, toy)+"/users/7"); a.body != "users/7" {
		t.Fatalf("%+v", a)
	}
}

// Bad configuration is an error at set-up, never at request time.
func TestConfigErrors(t *testing.T) {
	var l zklock.Locker = zklock.NewMemoryLocker()
	fn := func(*http.Request) (string, error) { return "x", nil }
	for _, tc := range []struct {
		name string
		cfg  zkmw.Config
		want string
	}{
		{"no locker", zkmw.Config{}, "no Locker"},
		{"try and wait", zkmw.Config{Locker: l, Rule: zkmw.Rule{Try: true, MaxWait: time.Second}}, "Try and MaxWait"},
		{"template and func", zkmw.Config{Locker: l, Rule: zkmw.Rule{Resource: "a"}, ResourceFunc: fn}, "exclude"},
		{"param not in route", zkmw.Config{Locker: l, Routes: map[string]zkmw.Rule{
			"POST /accounts/{id}/withdraw": {Resource: "accounts/{account}"}}}, `no parameter "account"`},
		{"bad template", zkmw.Config{Locker: l, Rule: zkmw.Rule{Resource: "a/{b"}}, "unterminated placeholder"},
	} {
		_, err := tc.cfg.ToMiddleware()
		if !errors.Is(err, zkmw.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrInvalidConfig saying %q", tc.name, err, tc.want)
		}
		if tc.name == "try and wait" && !errors.Is(err, zklock.ErrInvalidOption) {
			t.Errorf("%s: %v does not match zklock.ErrInvalidOption", tc.name, err)
		}
	}
}
