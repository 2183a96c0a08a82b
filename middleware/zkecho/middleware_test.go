package zkecho_test

import (
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/zklock"
)

// lockedAs answers with the resource the request is locked under, or "-".
func lockedAs(c echo.Context) error {
	if l := zkmw.LeaseFrom(c); l != nil {
		return c.String(http.StatusOK, l.Resource())
	}
	return c.String(http.StatusOK, "-")
}

// The app-wide table locks the routes it lists, by method ("*" for any),
// and nothing else; 404 and 405 answers are not locked.
func TestIntegration_RouteTable(t *testing.T) {
	root := newRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	cfg := zkmw.Config{Locker: c, Routes: map[string]zkmw.Rule{
		"POST /accounts/:id/withdraw": {Resource: "accounts/{id}"},
		"* /accounts/:id":             {Resource: "accounts/{id}", ReadWrite: true},
		"GET /reports/:year":          {}, // default resource: the route path
		"GET /api/v1/tenants/:t":      {Resource: "tenant-{t}"},
	}}
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e, url := newEcho(t)
	e.Use(mw)
	e.POST("/accounts/:id/withdraw", lockedAs)
	e.GET("/accounts/:id/balance", lockedAs)
	e.GET("/accounts/:id", lockedAs)
	e.PUT("/accounts/:id", lockedAs)
	e.GET("/reports/:year", lockedAs)
	e.GET("/health", lockedAs)
	v1 := e.Group("/api/v1")
	v1.GET("/tenants/:t", lockedAs)
	if err := cfg.CheckRoutes(e.Routes()); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{http.MethodPost, "/accounts/1/withdraw", 200, "accounts/1"},
		{http.MethodGet, "/accounts/1/withdraw", 405, ""},
		{http.MethodGet, "/accounts/1/balance", 200, "-"},
		{http.MethodGet, "/accounts/1", 200, "accounts/1"},
		{http.MethodPut, "/accounts/1", 200, "accounts/1"},
		{http.MethodDelete, "/accounts/1", 405, ""},
		{http.MethodGet, "/reports/2024", 200, "reports/2024"},
		{http.MethodGet, "/api/v1/tenants/acme", 200, "tenant-acme"},
		{http.MethodGet, "/health", 200, "-"},
		{http.MethodGet, "/nope", 404, ""},
	} {
		r := do(t, ctx, tc.method, url+tc.path, nil)
		if r.code != tc.code || (tc.body != "" && r.body != tc.body) {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, r.code, r.body, tc.code, tc.body)
		}
		locked := tc.body != "" && tc.body != "-"
		if got := len(r.header.Values(zkmw.HeaderServerTiming)); got != map[bool]int{true: 1}[locked] {
			t.Errorf("%s %s: %d Server-Timing values", tc.method, tc.path, got)
		}
	}
	if ls := c.Locks(); len(ls) != 0 {
		t.Fatalf("nodes left: %+v", ls)
	}
}

// Skipper, BeforeFunc, OnAcquire, ResourceFunc errors, a custom
// ErrorHandler and DisableServerTiming.
func TestIntegration_HooksAndErrorHandler(t *testing.T) {
	root := newRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	var before, acquired atomic.Int32
	e, url := newEcho(t)
	e.POST("/accounts/:id/withdraw", lockedAs, zkmw.LockWithConfig(zkmw.Config{
		Locker:     c,
		Rule:       zkmw.Rule{Resource: "accounts/{id}", Try: true},
		Skipper:    func(c echo.Context) bool { return c.Request().Header.Get("X-Skip") != "" },
		BeforeFunc: func(echo.Context) { before.Add(1) },
		OnAcquire: func(c echo.Context, l *zklock.Lease) {
			acquired.Add(1)
			c.Response().Header().Set("X-Fencing-Token", strconv.FormatInt(l.Token(), 10))
		},
		ErrorHandler: func(c echo.Context, err error) error {
			if errors.Is(err, zklock.ErrLocked) {
				return c.JSON(http.StatusTooManyRequests, map[string]string{"message": "busy, try later"})
			}
			return zkmw.DefaultErrorHandler(c, err)
		},
		DisableServerTiming: true,
	}))
	e.GET("/by-func/:id", lockedAs, zkmw.Lock(c, zkmw.ResourceFunc(func(c echo.Context) (string, error) {
		if c.Request().Header.Get("Authorization") == "" {
			return "", echo.NewHTTPError(http.StatusUnauthorized, "who are you")
		}
		return "user/" + c.Param("id"), nil
	})))
	e.GET("/by-query", lockedAs, zkmw.Lock(c, zkmw.Resource("q/{query:id}")))
	e.GET("/misconfigured/:id", lockedAs, zkmw.Lock(c, zkmw.Resource("accounts/{account}")))

	r := do(t, ctx, http.MethodPost, url+"/accounts/1/withdraw", nil)
	if r.code != 200 || r.body != "accounts/1" || r.header.Get("X-Fencing-Token") == "" {
		t.Fatalf("locked route: %d %q token %q", r.code, r.body, r.header.Get("X-Fencing-Token"))
	}
	if v := r.header.Values(zkmw.HeaderServerTiming); len(v) != 0 {
		t.Fatalf("Server-Timing %q despite DisableServerTiming", v)
	}
	if r := do(t, ctx, http.MethodPost, url+"/accounts/1/withdraw", map[string]string{"X-Skip": "1"}); r.body != "-" {
		t.Fatalf("skipped route was locked: %q", r.body)
	}
	if before.Load() != 1 || acquired.Load() != 1 {
		t.Fatalf("BeforeFunc ran %d times, OnAcquire %d; want 1, 1", before.Load(), acquired.Load())
	}

	l, err := c.Acquire(ctx, "accounts/1")
	if err != nil {
		t.Fatal(err)
	}
	if r := do(t, ctx, http.MethodPost, url+"/accounts/1/withdraw", nil); r.code != http.StatusTooManyRequests || r.message != "busy, try later" {
		t.Fatalf("custom error handler: %d %q", r.code, r.body)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}

	if r := do(t, ctx, http.MethodGet, url+"/by-func/7", nil); r.code != http.StatusUnauthorized || r.message != "who are you" {
		t.Fatalf("ResourceFunc error: %d %q", r.code, r.body)
	}
	if r := do(t, ctx, http.MethodGet, url+"/by-func/7", map[string]string{"Authorization": "x"}); r.body != "user/7" {
		t.Fatalf("ResourceFunc: %d %q", r.code, r.body)
	}
	if r := do(t, ctx, http.MethodGet, url+"/by-query", nil); r.code != http.StatusBadRequest {
		t.Fatalf("missing query parameter: %d %q", r.code, r.body)
	}
	if r := do(t, ctx, http.MethodGet, url+"/by-query?id=9", nil); r.body != "q/9" {
		t.Fatalf("query template: %d %q", r.code, r.body)
	}
	if r := do(t, ctx, http.MethodGet, url+"/misconfigured/1", nil); r.code != http.StatusInternalServerError || r.message != "lock misconfigured" {
		t.Fatalf("template naming a parameter the route lacks: %d %q", r.code, r.body)
	}
	if ls := c.Locks(); len(ls) != 0 {
		t.Fatalf("nodes left: %+v", ls)
	}
}

// The Server-Timing header is on by default and reaches the client even
// when the handler writes and flushes its answer at once.
func TestIntegration_ServerTimingDefault(t *testing.T) {
	root := newRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	e, url := newEcho(t)
	e.POST("/accounts/:id/withdraw", func(c echo.Context) error {
		c.Response().WriteHeader(http.StatusAccepted)
		c.Response().Flush()
		return nil
	}, zkmw.Lock(c, zkmw.Resource("accounts/{id}")))
	r := do(t, ctx, http.MethodPost, url+"/accounts/42/withdraw", nil)
	if r.code != http.StatusAccepted {
		t.Fatalf("%d", r.code)
	}
	if _, desc := timing(t, r); desc != "accounts/42" {
		t.Fatalf("desc %q", desc)
	}
}
