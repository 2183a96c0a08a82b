package zkecho_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/zklockkit/zklockkit/internal/adaptertest"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho/v5"
	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

func newClient(t *testing.T, root string) *zklock.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot(root))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type answer struct {
	code               int
	body, msg          string
	retryAfter, timing string
}

func call(t *testing.T, method, url string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
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

func serve(t *testing.T, e *echo.Echo) string {
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv.URL
}

func leaseResource(c *echo.Context) error {
	if l := zkmw.LeaseFrom(c); l != nil {
		return c.String(http.StatusOK, l.Resource())
	}
	return c.String(http.StatusOK, "-")
}

// The per-route middleware on Echo v5: 200 with Server-Timing, 423 with
// Retry-After while another replica holds the resource, 400 for a key
// that is no resource; escaped keys lock the escaped resource.
func TestIntegration_V5PerRoute(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c, holder := newClient(t, root), newClient(t, root)
	e := echo.New()
	e.POST("/accounts/:id/withdraw", leaseResource, zkmw.Lock(c, zkmw.Resource("accounts/{id}"), zkmw.Try()))
	e.GET("/files/*", leaseResource, zkmw.Lock(c, zkmw.Try()))
	url := serve(t, e)

	if a := call(t, http.MethodPost, url+"/accounts/42/withdraw"); a.code != 200 || a.body != "accounts/42" ||
		!strings.HasPrefix(a.timing, "zklock;dur=") {
		t.Fatalf("free: %+v", a)
	}
	if a := call(t, http.MethodPost, url+"/accounts/a%2Fb/withdraw"); a.code != 200 || a.body != "accounts/a%2Fb" {
		t.Fatalf("escaped slash: %+v", a)
	}
	if a := call(t, http.MethodGet, url+"/files/x/y.txt"); a.code != 200 || a.body != "files/x%2Fy.txt" {
		t.Fatalf("wildcard default resource: %+v", a)
	}
	if a := call(t, http.MethodPost, url+"/accounts/%00/withdraw"); a.code != 400 ||
		a.msg != `invalid lock resource "accounts/{id}": value of {id}: contains a control character` {
		t.Fatalf("NUL key: %+v", a)
	}
	l, err := holder.Acquire(context.Background(), "accounts/42")
	if err != nil {
		t.Fatal(err)
	}
	if a := call(t, http.MethodPost, url+"/accounts/42/withdraw"); a.code != http.StatusLocked || a.msg != "resource is locked" || a.retryAfter != "1" {
		t.Fatalf("held: %+v", a)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ls := c.Locks(); len(ls) != 0 {
		t.Fatalf("nodes left: %+v", ls)
	}
}

// The route table on Echo v5: listed routes lock, 404 and 405 answers do
// not, and CheckRoutes finds keys that match no route.
func TestIntegration_V5RouteTable(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root)
	cfg := zkmw.Config{Locker: c, Routes: map[string]zkmw.Rule{
		"POST /accounts/:id/withdraw": {Resource: "accounts/{id}"},
		"* /accounts/:id":             {Resource: "accounts/{id}", ReadWrite: true},
		"GET /reports/:year":          {},
	}}
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Use(mw)
	e.POST("/accounts/:id/withdraw", leaseResource)
	e.GET("/accounts/:id", leaseResource)
	e.GET("/reports/:year", leaseResource)
	e.GET("/health", leaseResource)
	if err := cfg.CheckRoutes(e.Router().Routes()); err != nil {
		t.Fatal(err)
	}
	url := serve(t, e)
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{http.MethodPost, "/accounts/1/withdraw", 200, "accounts/1"},
		{http.MethodGet, "/accounts/1/withdraw", 405, ""},
		{http.MethodGet, "/accounts/1", 200, "accounts/1"},
		{http.MethodGet, "/reports/2024", 200, "reports/2024"},
		{http.MethodGet, "/health", 200, "-"},
		{http.MethodGet, "/nope", 404, ""},
	} {
		a := call(t, tc.method, url+tc.path)
		if a.code != tc.code || (tc.body != "" && a.body != tc.body) {
			t.Errorf("%s %s: %+v, want %d %q", tc.method, tc.path, a, tc.code, tc.body)
		}
	}
	cfg.Routes["POST /acounts/:id"] = zkmw.Rule{}
	if err := cfg.CheckRoutes(e.Router().Routes()); !errors.Is(err, zkmw.ErrInvalidConfig) || !strings.Contains(err.Error(), "/acounts/:id") {
		t.Fatalf("CheckRoutes = %v", err)
	}
}

// With CheckRoute as Echo's OnAddRoute hook, a per-route template that
// names a parameter its route lacks fails when the route is registered;
// other routes, and other middleware, register as usual.
func TestCheckRouteAtRegistration(t *testing.T) {
	var locker zklock.Locker = zklock.NewMemoryLocker()
	other := func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	e := echo.New()
	e.OnAddRoute = zkmw.CheckRoute
	e.POST("/accounts/:id/withdraw", leaseResource, other, zkmw.Lock(locker, zkmw.Resource("accounts/{id}")))
	g := e.Group("/v1/:tenant", other)
	g.GET("/reports", leaseResource, zkmw.Lock(locker, zkmw.Resource("t/{tenant}/reports")))
	// The group's own 404 routes ("/v2", "/v2/*") are not checked.
	e.Group("/v2", zkmw.Lock(locker, zkmw.Resource("accounts/{id}"))).GET("/:id", leaseResource)
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, zkmw.ErrInvalidConfig) || !strings.Contains(err.Error(), `route "/misconfigured/:id" has no parameter "account"`) {
			t.Fatalf("registering a misconfigured route: %v", err)
		}
	}()
	e.GET("/misconfigured/:id", leaseResource, zkmw.Lock(locker, zkmw.Resource("accounts/{account}")))
	t.Fatal("the misconfigured route was registered")
}

// Without the hook, the misconfiguration answers 500 "lock misconfigured"
// at every request, the error says what is wrong, it is logged once, at
// Error level, with the route, the template and the parameter, and every
// such request is counted in zklock.misconfigured as Echo's; a
// well-configured route counts nothing.
func TestMisconfiguredRouteAtRequest(t *testing.T) {
	var got error
	var log adaptertest.Log
	meter := adaptertest.NewMeter(t)
	locker := zklock.NewMemoryLocker()
	e := echo.New()
	e.GET("/misconfigured/:id", leaseResource, zkmw.LockWithConfig(zkmw.Config{
		Locker: locker, Rule: zkmw.Rule{Resource: "accounts/{account}"},
		ErrorHandler:  func(c *echo.Context, err error) error { got = err; return zkmw.DefaultErrorHandler(c, err) },
		Logger:        log.Logger(),
		MeterProvider: meter.Provider,
	}))
	e.GET("/configured/:id", leaseResource, zkmw.Lock(locker, zkmw.Resource("accounts/{id}"),
		zkmw.WithLogger(log.Logger()), zkmw.WithMeterProvider(meter.Provider)))
	adaptertest.ServeMisconfigured(t, e, 3, "/misconfigured/1", "/configured/1", "accounts/1")
	if got == nil || strings.Contains(got.Error(), `lock ""`) || !strings.Contains(got.Error(), `has no parameter "account"`) {
		t.Fatalf("error handler got %v", got)
	}
	adaptertest.WantMisconfigured(t, &log, meter,
		map[string]string{"method": "GET", "route": "/misconfigured/:id", "template": "accounts/{account}", "parameter": "account"},
		map[adaptertest.Route]int64{{Adapter: tracing.AdapterEcho, Route: "/misconfigured/:id"}: 3})
}
