package middleware

import (
	"time"

	"github.com/labstack/echo/v4"
	"github.com/zklockkit/zklockkit/zklock"
)

// Skipper reports whether the middleware should let a request through
// without locking. It has the shape of Echo's middleware.Skipper: any
// func(echo.Context) bool fits, echomw.DefaultSkipper included, and a
// value of Echo's named type converts with zkmw.Skipper(s).
type Skipper func(c echo.Context) bool

// BeforeFunc runs before the lock is acquired (after Skipper). It has the
// shape of Echo's middleware.BeforeFunc.
type BeforeFunc func(c echo.Context)

// DefaultSkipper never skips.
func DefaultSkipper(echo.Context) bool { return false }

// Defaults applied by Config.ToMiddleware to zero fields.
const (
	DefaultRetryAfter     = time.Second
	DefaultReleaseTimeout = 10 * time.Second
)

// Rule says what one route locks and how. The zero Rule takes an exclusive
// lock on the route's path with its parameters filled in, and waits for it
// as long as the request lives.
type Rule struct {
	// Resource is a template for the resource name, e.g. "accounts/{id}".
	// Placeholders: {name} or {param:name} for a route parameter ({*} for
	// the wildcard), {query:name} for a query parameter, {header:Name}
	// for a request header. Values are inserted verbatim; a missing or
	// empty value answers 400. Default (empty Resource and no
	// ResourceFunc): the route's path pattern without its leading slash,
	// with parameter values filled in ("accounts/42/withdraw" for route
	// "/accounts/:id/withdraw").
	Resource string

	// ResourceFunc computes the resource from the request instead of a
	// template. An error it returns goes to the ErrorHandler (an
	// *echo.HTTPError is answered as is).
	ResourceFunc func(c echo.Context) (string, error)

	// Mode is the lock mode (default Exclusive).
	Mode Mode

	// Try makes a busy resource answer 423 Locked at once instead of
	// waiting.
	Try bool

	// MaxWait bounds the wait for the lock; when it passes the request is
	// answered 503 with Retry-After. Zero means no limit of its own: the
	// request waits as long as its context lives (client connected, no
	// server deadline). It also bounds the wait while ZooKeeper is
	// unreachable, so set it on every route that must answer promptly.
	MaxWait time.Duration
}

// Config configures the lock middleware. Build it with
// Config.ToMiddleware, which reports configuration errors, or LockWithConfig,
// which panics on them, at set-up.
//
// The middleware locks in one of two ways:
//   - one rule for the routes it is attached to: the embedded Rule
//     (per-route use, e.POST(path, h, mw));
//   - a table from route to rule: Routes (app-wide use, e.Use(mw)); routes
//     not in the table are not locked.
type Config struct {
	// Skipper defines a function to skip the middleware (default:
	// DefaultSkipper, never).
	Skipper Skipper

	// BeforeFunc, when set, runs before the lock is acquired.
	BeforeFunc BeforeFunc

	// Locker acquires the locks: a *zklock.Client, or any zklock.Locker.
	// Required.
	Locker zklock.Locker

	// Rule is what routes the middleware is attached to lock, when Routes
	// is empty. Setting both is a configuration error.
	Rule

	// Routes maps "METHOD /path" (the route as registered, e.g.
	// "POST /accounts/:id/withdraw"; METHOD "*" matches any method) to the
	// route's Rule. When set, routes not listed are passed through without
	// a lock. A route parameter named in a template must appear in the
	// key's path. Use CheckRoutes to find keys that match no route.
	Routes map[string]Rule

	// ErrorHandler turns a lock failure into the response. It receives a
	// *LockError (wrapping the zklock error) and returns the error for
	// Echo's HTTP error handler, or nil when it wrote a response itself.
	// Default: DefaultErrorHandler.
	ErrorHandler func(c echo.Context, err error) error

	// OnAcquire, when set, runs once the lock is held, before the handler
	// (e.g. to set a header with the lease's fencing token).
	OnAcquire func(c echo.Context, lease *zklock.Lease)

	// OnRelease, when set, runs after the lease is released, with the
	// result of the release: nil, a *zklock.LostError if the lease was lost
	// during the request, or an error if ZooKeeper did not confirm the
	// release within ReleaseTimeout (it goes on in the background).
	OnRelease func(c echo.Context, lease *zklock.Lease, err error)

	// RetryAfter is the Retry-After advice on 423 and 503 answers
	// (default DefaultRetryAfter, 1s; rounded up to whole seconds).
	RetryAfter time.Duration

	// ReleaseTimeout bounds how long the request waits for ZooKeeper to
	// confirm a release (default DefaultReleaseTimeout, 10s).
	ReleaseTimeout time.Duration

	// DisableServerTiming turns off the Server-Timing response header
	// (zklock;dur=<wait ms>;desc="<resource>") that is set by default
	// before the handler runs.
	DisableServerTiming bool

	// AcquireOptions are added to every acquire, e.g. zklock.Label("api").
	// Mode, Try and MaxWait come from the Rule: do not set them here. With
	// zklock.RawPath, resources are absolute znode paths (to share locks
	// with a Java or Python service) and a "/" in a request value adds a
	// path level: prefer names under the root for request input.
	AcquireOptions []zklock.AcquireOption
}

// DefaultConfig is the default configuration. It has no Locker: set one.
var DefaultConfig = Config{
	Skipper:        DefaultSkipper,
	ErrorHandler:   DefaultErrorHandler,
	RetryAfter:     DefaultRetryAfter,
	ReleaseTimeout: DefaultReleaseTimeout,
}

// Option adjusts the Config built by Lock.
type Option func(*Config)

// Resource sets the resource template (see Rule.Resource).
func Resource(template string) Option {
	return func(c *Config) { c.Resource = template }
}

// ResourceFunc sets a function that computes the resource (see
// Rule.ResourceFunc).
func ResourceFunc(f func(c echo.Context) (string, error)) Option {
	return func(c *Config) { c.ResourceFunc = f }
}

// WithMode sets the lock mode (default Exclusive).
func WithMode(m Mode) Option {
	return func(c *Config) { c.Mode = m }
}

// Try makes a busy resource answer 423 Locked at once.
func Try() Option {
	return func(c *Config) { c.Try = true }
}

// MaxWait bounds the wait for the lock (see Rule.MaxWait).
func MaxWait(d time.Duration) Option {
	return func(c *Config) { c.MaxWait = d }
}

// Lock returns a middleware that locks the route it is attached to:
// DefaultConfig with locker, adjusted by opts. It panics on a bad
// configuration, at set-up; use Config.ToMiddleware to get the error.
//
//	e.POST("/accounts/:id/withdraw", withdraw, zkmw.Lock(client, zkmw.Resource("accounts/{id}")))
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
	l, err := compile(config)
	if err != nil {
		return nil, err
	}
	return l.middleware, nil
}
