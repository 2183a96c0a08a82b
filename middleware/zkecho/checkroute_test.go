package zkecho_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/zklockkit/zklockkit/internal/adaptertest"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/zklock"
)

// With CheckRoute as Echo's OnAddRouteHandler hook, a per-route template
// that names a parameter its route lacks fails when the route is
// registered, as in Echo v5; other routes, group middleware and other
// middleware register as usual. (Before, Echo v4 had no such check.)
func TestCheckRouteAtRegistration(t *testing.T) {
	var locker zklock.Locker = zklock.NewMemoryLocker()
	other := func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	e := echo.New()
	e.OnAddRouteHandler = zkmw.CheckRoute
	e.POST("/accounts/:id/withdraw", lockedAs, other, zkmw.Lock(locker, zkmw.Resource("accounts/{id}")))
	g := e.Group("/v1/:tenant", other, zkmw.Lock(locker, zkmw.Resource("t/{tenant}")))
	g.GET("/reports", lockedAs)
	// The group's own 404 routes ("/v2", "/v2/*") are not checked.
	e.Group("/v2", zkmw.Lock(locker, zkmw.Resource("accounts/{id}"))).GET("/:id", lockedAs)
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, zkmw.ErrInvalidConfig) || !strings.Contains(err.Error(), `route "/misconfigured/:id" has no parameter "account"`) {
			t.Fatalf("registering a misconfigured route: %v", err)
		}
	}()
	e.GET("/misconfigured/:id", lockedAs, zkmw.Lock(locker, zkmw.Resource("accounts/{account}")))
	t.Fatal("the misconfigured route was registered")
}

// Without the hook, the misconfiguration answers 500 "lock misconfigured"
// at every request, and is logged once, at Error level, with the route,
// the template and the parameter. (Before, nothing was logged.)
func TestMisconfiguredRouteIsLoggedOnce(t *testing.T) {
	var log adaptertest.Log
	e := echo.New()
	e.GET("/misconfigured/:id", lockedAs, zkmw.Lock(zklock.NewMemoryLocker(),
		zkmw.Resource("accounts/{account}"), zkmw.WithLogger(log.Logger())))
	for range 3 {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/misconfigured/1", nil))
		if rec.Code != 500 || !strings.Contains(rec.Body.String(), "lock misconfigured") {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	recs := log.Records()
	if len(recs) != 1 {
		t.Fatalf("logged %d records, want 1: %+v", len(recs), recs)
	}
	if r := recs[0]; r.Level != slog.LevelError || r.Attrs["route"] != "/misconfigured/:id" ||
		r.Attrs["template"] != "accounts/{account}" || r.Attrs["parameter"] != "account" || r.Attrs["method"] != "GET" {
		t.Fatalf("logged %+v", r)
	}
}
