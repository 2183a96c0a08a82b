package zkecho

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v5"

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

var _ echo.MiddlewareConfigurator = Config{}

// ToMiddleware checks the configuration, fills in defaults and returns the
// middleware (echo.MiddlewareConfigurator). Errors match ErrInvalidConfig.
func (config Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	return echocore.Build(echocore.Config[*echo.Context, Skipper, BeforeFunc](config), echoV5, probe)
}

// echoV5 is what this package's Echo does its own way.
var echoV5 = echocore.Echo[*echo.Context]{
	Header: func(c *echo.Context) http.Header { return c.Response().Header() },
	// On a 404 or 405 answer Echo v5 sets no route path.
	Matched:      func(c *echo.Context) bool { return c.Path() != "" },
	ErrorHandler: DefaultErrorHandler,
}

// CheckRoutes reports the keys of config.Routes that match none of routes,
// typically e.Router().Routes() once every route is registered: a key
// with a typo would otherwise silently leave its route unlocked. The
// error matches ErrInvalidConfig.
func (config Config) CheckRoutes(routes echo.Routes) error {
	return echocore.CheckRoutes(config.Routes, routes, func(r echo.RouteInfo) string { return r.Method + " " + r.Path })
}

// probe finds this package's middleware among a route's (CheckRoute).
var probe = echocore.NewProbe(echo.HandlerFunc(func(*echo.Context) error { return nil }), echo.RouteNotFound)

// CheckRoute reports whether the lock middleware of route (those of this
// package among route.Middlewares) fits it: ErrInvalidConfig when a
// template names a parameter the route's path lacks. Install it as Echo's
// OnAddRoute hook, and such a route fails when it is registered (e.GET
// panics with the error, as for a duplicate route) instead of answering
// 500 at its first request:
//
//	e := echo.New()
//	e.OnAddRoute = zkecho.CheckRoute
//
// It builds each route middleware once more, with a handler that is never
// called.
func CheckRoute(route echo.Route) error {
	return echocore.CheckRoute(probe, route.Method, route.Path, route.Middlewares)
}

// DefaultErrorHandler answers lock failures with an *echo.HTTPError (a JSON
// {"message": ...} body under Echo's default HTTP error handler), as
// middleware.AnswerFor says, wrapping the original error. An error that
// carries an HTTP status (an *echo.HTTPError from a ResourceFunc, Echo's
// predefined errors) is answered as is.
func DefaultErrorHandler(c *echo.Context, err error) error {
	var le *LockError
	if errors.As(err, &le) && echo.StatusCode(le.Err) != 0 {
		return le.Err
	}
	a := middleware.AnswerFor(err)
	middleware.SetRetryAfter(c.Response().Header(), a, err)
	return echo.NewHTTPError(a.Status, a.Message).Wrap(err)
}

// LeaseFrom returns the lease the middleware holds for the request, or nil
// outside a locked route. It shows the lease (Token for fencing, Resource,
// Done, Err) but cannot release it: the middleware releases it after the
// handler returns.
func LeaseFrom(c *echo.Context) *zklock.Lease {
	return zklock.LeaseFromContext(c.Request().Context())
}
