package zkecho

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/metric"

	"github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/middleware/internal/echocore"
	"github.com/zklockkit/zklockkit/zklock"
)

// Rule, LockError and ErrInvalidConfig are the net/http core's: every
// front end takes the same rules (modes are zklock's: zklock.Read,
// zklock.Write) and fails with the same errors.
type (
	Rule      = middleware.Rule
	LockError = middleware.LockError
)

// ErrInvalidConfig is middleware.ErrInvalidConfig.
var ErrInvalidConfig = middleware.ErrInvalidConfig

// HeaderServerTiming is the response header that reports the lock wait.
const HeaderServerTiming = middleware.HeaderServerTiming

// Defaults applied to zero fields of a Config.
const (
	DefaultRetryAfter     = middleware.DefaultRetryAfter
	DefaultReleaseTimeout = middleware.DefaultReleaseTimeout
)

// Skipper reports whether the middleware should let a request through
// without locking. Any func(echo.Context) bool fits, Echo's
// middleware.DefaultSkipper included.
type Skipper func(c echo.Context) bool

// BeforeFunc runs before the lock is acquired (after Skipper).
type BeforeFunc func(c echo.Context)

// DefaultSkipper never skips.
func DefaultSkipper(echo.Context) bool { return false }

// Config configures the lock middleware for Echo v4. Its fields are those
// of middleware.Config, with Echo's types for the hooks.
//
// The middleware locks in one of two ways:
//   - one rule for the routes it is attached to: the embedded Rule
//     (per-route use, e.POST(path, h, mw));
//   - a table from route to rule: Routes (app-wide use, e.Use(mw)); routes
//     not in the table are not locked.
//
// A per-route template that names a parameter its route lacks, when
// CheckRoute is not Echo's hook, is found only by a request: every request
// to the route is answered 500 "lock misconfigured" rather than let
// through unlocked, the reason is logged once to Logger, and every such
// request is counted in the metric zklock.misconfigured (Prometheus:
// zklock_misconfigured_total) through MeterProvider.
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

	// Param returns the value of a route parameter (default: c.Param,
	// decoded with url.PathUnescape when Echo matched on the request's
	// escaped path, as it does when the path has an escaped "/"; so a key
	// names the same resource as through net/http).
	Param func(c echo.Context, name string) string

	// ResourceFunc computes the resource of a rule that names none, from
	// the request, instead of the route's path. An error it returns goes
	// to the ErrorHandler (an *echo.HTTPError is answered as is). It
	// excludes the Rule's Resource and Resources.
	ResourceFunc func(c echo.Context) (string, error)

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
	// (zklock;dur=<wait ms>;desc="<resource>") set before the handler
	// runs.
	DisableServerTiming bool

	// AcquireOptions are added to every acquire, e.g. zklock.LeaseLabel("api").
	// Mode, Limit, Try and MaxWait come from the Rule: set them there.
	AcquireOptions []zklock.AcquireOption

	// Logger receives a misconfiguration that only a request can reveal
	// (a per-route template naming a parameter its route lacks, when
	// CheckRoute is not installed): once per route, at Error level, with
	// the route, the template and the parameter. Default: slog.Default().
	Logger *slog.Logger

	// MeterProvider makes the counter of requests refused for a
	// misconfiguration (zklock.misconfigured, labelled zklock.adapter
	// "echo" and zklock.route, the route's path as registered; the names
	// are package tracing's). Every such request counts, not only the
	// first, which is what is logged. Default: the global provider
	// (otel.GetMeterProvider), which follows one set later.
	MeterProvider metric.MeterProvider
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

// rule is o, an option of package middleware, for the Rule of a Config:
// the rule options are package middleware's.
func rule(o middleware.Option) Option { return func(c *Config) { echocore.Rule(&c.Rule, o) } }

// Resource sets the resource templates: one (Rule.Resource) or several
// (Rule.Resources). At least one: Resource() is a configuration error.
func Resource(templates ...string) Option { return rule(middleware.Resource(templates...)) }

// ResourceFunc sets a function that computes the resource (see
// Config.ResourceFunc).
func ResourceFunc(f func(c echo.Context) (string, error)) Option {
	return func(c *Config) { c.ResourceFunc = f }
}

// Mode sets the lock mode: zklock.Exclusive (the default), zklock.Read or
// zklock.Write.
func Mode(m zklock.Mode) Option { return rule(middleware.Mode(m)) }

// ReadWrite makes GET and HEAD requests share a read lock and every other
// method take the write lock (see Rule.ReadWrite).
func ReadWrite() Option { return rule(middleware.ReadWrite()) }

// Limit makes the lock a semaphore of n holders (see Rule.Limit).
func Limit(n int) Option { return rule(middleware.Limit(n)) }

// Try makes a busy resource answer 423 Locked at once.
func Try() Option { return rule(middleware.Try()) }

// MaxWait bounds the wait for the lock (see Rule.MaxWait).
func MaxWait(d time.Duration) Option { return rule(middleware.MaxWait(d)) }

// WithLogger sets the logger of misconfigurations found at request time
// (see Config.Logger).
func WithLogger(l *slog.Logger) Option { return func(c *Config) { c.Logger = l } }

// WithMeterProvider sets the provider of the misconfiguration metric (see
// Config.MeterProvider). A nil mp is the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *Config) { c.MeterProvider = mp }
}
