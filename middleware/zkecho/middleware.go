package zkecho

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/middleware/internal/echocore"
	"github.com/zklockkit/zklockkit/zklock"
)

// Lock returns a middleware that locks the route it is attached to:
// DefaultConfig with locker, adjusted by opts. It panics on a bad
// configuration, at set-up; use Config.ToMiddleware to get the error.
//
//	e.POST("/accounts/:id/withdraw", withdraw, zkecho.Lock(client, zkecho.Resource("accounts/{id}")))
func Lock(locker zklock.Locker, opts ...Option) echo.MiddlewareFunc {
	cfg := DefaultConfig
	cfg.Locker = locker
	return LockWithConfig(echocore.Apply(cfg, opts))
}

// LockWithConfig returns the middleware for config. It panics on a bad
// configuration, at set-up, like Echo's own XWithConfig constructors; use
// Config.ToMiddleware to get the error instead.
func LockWithConfig(config Config) echo.MiddlewareFunc { return echocore.Must(config.ToMiddleware()) }

// ToMiddleware checks the configuration, fills in defaults and returns the
// middleware. Errors match ErrInvalidConfig.
func (config Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	return echocore.Build(echocore.Config[echo.Context, Skipper, BeforeFunc](config), echoV4, probe)
}

// echoV4 is what this package's Echo does its own way.
var echoV4 = echocore.Echo[echo.Context]{
	Header:       func(c echo.Context) http.Header { return c.Response().Header() },
	Matched:      routeMatched,
	ErrorHandler: DefaultErrorHandler,
}

// probe finds this package's middleware among a route's (CheckRoute).
var probe = echocore.NewProbe(echo.HandlerFunc(func(echo.Context) error { return nil }), echo.RouteNotFound)

// CheckRoute checks the lock middleware of a route (those of this package
// among middleware) when the route is registered: it panics with an error
// matching ErrInvalidConfig when a template names a parameter the route's
// path lacks, so that e.GET (or g.GET) fails instead of the route
// answering 500 at every request. Install it as Echo's OnAddRouteHandler
// hook:
//
//	e := echo.New()
//	e.OnAddRouteHandler = zkecho.CheckRoute
//
// Echo v4's hook returns no error, hence the panic, which is what Echo
// v5 does with the error of the same check (zkecho/v5's CheckRoute). It
// builds each route middleware once more, with a handler that is never
// called. Without the hook, such a route answers 500 "lock misconfigured"
// and the reason is logged once (Config.Logger).
func CheckRoute(host string, route echo.Route, handler echo.HandlerFunc, middleware []echo.MiddlewareFunc) {
	if err := echocore.CheckRoute(probe, route.Method, route.Path, middleware); err != nil {
		panic(err)
	}
}

// CheckRoutes reports the keys of config.Routes that match none of routes,
// typically e.Routes() once every route is registered: a key with a typo
// would otherwise silently leave its route unlocked. The error matches
// ErrInvalidConfig.
func (config Config) CheckRoutes(routes []*echo.Route) error {
	return echocore.CheckRoutes(config.Routes, routes, func(r *echo.Route) string { return r.Method + " " + r.Path })
}

// routeMatched reports whether the request matched a route handler. On a
// 404 or 405 answer Echo still sets the path (of the nearest route) but
// no parameter values: such requests are not locked.
func routeMatched(c echo.Context) bool {
	path := c.Path()
	if path == "" || c.Get(echo.ContextKeyHeaderAllow) != nil {
		return false
	}
	return len(c.ParamNames()) > 0 || !hasParams(path)
}

// hasParams reports whether an Echo route path has parameters.
func hasParams(path string) bool {
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '\\':
			i++ // "\\:" is a literal colon
		case ':', '*':
			return true
		}
	}
	return false
}

// DefaultErrorHandler answers lock failures with an *echo.HTTPError (a JSON
// {"message": ...} body under Echo's default HTTP error handler), as
// middleware.AnswerFor says, with the original error as its Internal
// error. An *echo.HTTPError (from a ResourceFunc) is answered as is.
func DefaultErrorHandler(c echo.Context, err error) error {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he
	}
	a := middleware.AnswerFor(err)
	middleware.SetRetryAfter(c.Response().Header(), a, err)
	return &echo.HTTPError{Code: a.Status, Message: a.Message, Internal: err}
}

// LeaseFrom returns the lease the middleware holds for the request, or nil
// outside a locked route. It shows the lease (Token for fencing, Resource,
// Done, Err) but cannot release it: the middleware releases it after the
// handler returns.
func LeaseFrom(c echo.Context) *zklock.Lease {
	return zklock.LeaseFromContext(c.Request().Context())
}
