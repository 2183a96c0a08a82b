package zkecho_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/zklockkit/zklockkit/internal/adaptertest"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/tracing"
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
// at every request, is logged once, at Error level, with the route, the
// template and the parameter, and every such request is counted in
// zklock.misconfigured as Echo's; a well-configured route counts nothing.
// (Before, nothing was logged, then nothing counted.)
func TestMisconfiguredRouteIsLoggedOnceAndCounted(t *testing.T) {
	var log adaptertest.Log
	meter := adaptertest.NewMeter(t)
	locker := zklock.NewMemoryLocker()
	e := echo.New()
	e.GET("/misconfigured/:id", lockedAs, zkmw.Lock(locker,
		zkmw.Resource("accounts/{account}"), zkmw.WithLogger(log.Logger()), zkmw.WithMeterProvider(meter.Provider)))
	e.GET("/configured/:id", lockedAs, zkmw.Lock(locker,
		zkmw.Resource("accounts/{id}"), zkmw.WithLogger(log.Logger()), zkmw.WithMeterProvider(meter.Provider)))
	adaptertest.ServeMisconfigured(t, e, 3, "/misconfigured/1", "/configured/1", "accounts/1")
	adaptertest.WantMisconfigured(t, &log, meter,
		map[string]string{"method": "GET", "route": "/misconfigured/:id", "template": "accounts/{account}", "parameter": "account"},
		map[adaptertest.Route]int64{{Adapter: tracing.AdapterEcho, Route: "/misconfigured/:id"}: 3})
}
