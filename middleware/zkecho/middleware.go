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
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return LockWithConfig(cfg)
}

// LockWithConfig returns the middleware for config. It panics on a bad
// configuration, at set-up, like Echo's own XWithConfig constructors; use
// Config.ToMiddleware to get the error instead.
func LockWithConfig(config Config) echo.MiddlewareFunc {
	mw, err := config.ToMiddleware()
	if err != nil {
		panic(err)
	}
	return mw
}

// ToMiddleware checks the configuration, fills in defaults and returns the
// middleware. Errors match ErrInvalidConfig.
func (config Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	h := echocore.Hooks[echo.Context]{
		Skipper:      config.Skipper,
		BeforeFunc:   config.BeforeFunc,
		Param:        config.Param,
		ResourceFunc: config.ResourceFunc,
		ErrorHandler: config.ErrorHandler,
		OnAcquire:    config.OnAcquire,
		OnRelease:    config.OnRelease,
		Header:       func(c echo.Context) http.Header { return c.Response().Header() },
		Matched:      routeMatched,
	}
	if h.ErrorHandler == nil {
		h.ErrorHandler = DefaultErrorHandler
	}
	a, err := echocore.New(config.core(), config.ResourceFunc != nil, h)
	if err != nil {
		return nil, err
	}
	return echocore.Middleware(a, probe), nil
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

// core is the part of config the net/http core takes.
func (config Config) core() middleware.Config {
	return middleware.Config{
		Locker:              config.Locker,
		Rule:                config.Rule,
		Routes:              config.Routes,
		RetryAfter:          config.RetryAfter,
		ReleaseTimeout:      config.ReleaseTimeout,
		DisableServerTiming: config.DisableServerTiming,
		AcquireOptions:      config.AcquireOptions,
		Logger:              config.Logger,
	}
}

// CheckRoutes reports the keys of config.Routes that match none of routes,
// typically e.Routes() once every route is registered: a key with a typo
// would otherwise silently leave its route unlocked. The error matches
// ErrInvalidConfig.
func (config Config) CheckRoutes(routes []*echo.Route) error {
	rs := make([]string, 0, len(routes))
	for _, r := range routes {
		rs = append(rs, r.Method+" "+r.Path)
	}
	return middleware.Config{Routes: config.Routes}.CheckRoutes(rs)
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
