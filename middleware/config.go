package middleware

import (
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/zklockkit/zklockkit/zklock"
)

// ScopeName is the instrumentation scope name of the meter of the
// misconfiguration metric (see Config): this package's import path. The
// Echo adapters record it through this package too.
const ScopeName = "github.com/zklockkit/zklockkit/middleware"

// Defaults applied to zero fields of a Config.
const (
	DefaultRetryAfter     = time.Second
	DefaultReleaseTimeout = 10 * time.Second
)

// Rule says what one route locks and how. The zero Rule takes an exclusive
// lock on the route's path with its parameters filled in, and waits for it
// as long as the request lives. The Echo adapters (package zkecho) take
// the same Rule.
type Rule struct {
	// Resource is a template for the resource name, e.g. "accounts/{id}".
	// Placeholders: {name} or {param:name} for a route parameter ({*}
	// for Echo's wildcard; {path} for ServeMux's {path...}),
	// {query:name} for a query parameter, {header:Name} for a request
	// header, {cookie:name} for a cookie. Values are escaped ("/" as
	// "%2F", "%" as "%25"); a missing or empty value answers 400. Two
	// placeholders must be separated by text containing "/"; "{{" and
	// "}}" are literal braces. Default (no Resource, Resources or
	// ResourceFunc): the route's pattern without its leading slash, with
	// parameter values filled in ("accounts/42/withdraw" for route
	// "/accounts/{id}/withdraw").
	Resource string

	// Resources are several templates: the request locks every resource
	// they name, all or nothing (zklock.Locker.AcquireAll, in canonical
	// order, so two requests naming the same resources in another order
	// cannot deadlock). Templates that name the same resource for a
	// request lock it once. Resource and Resources exclude each other. An
	// empty but non-nil Resources (what Resource() with no template sets)
	// is a configuration error.
	Resources []string

	// Mode is the lock mode: zklock.Exclusive (the default), zklock.Read
	// or zklock.Write.
	Mode zklock.Mode

	// ReadWrite picks the mode by method: GET and HEAD requests share a
	// read lock, every other method takes the write lock, which excludes
	// readers and writers. Mode must be left unset.
	ReadWrite bool

	// Limit, when positive, makes the lock a semaphore: up to Limit
	// requests hold each resource at once (zklock.Limit). Mode must be
	// Exclusive (the default).
	Limit int

	// Try makes a busy resource answer 423 Locked at once instead of
	// waiting. While ZooKeeper is unreachable a Try answers 503 within
	// the core's bound for a try.
	Try bool

	// MaxWait bounds the wait for the lock; when it passes the request is
	// answered 503 with Retry-After. Zero means no limit of its own: the
	// request waits as long as its context lives (client connected, no
	// server deadline). It also bounds the wait while ZooKeeper is
	// unreachable, so set it on every route that must answer promptly.
	// Try and MaxWait exclude each other (zklock.ErrInvalidOption).
	MaxWait time.Duration
}

func (r Rule) isZero() bool {
	return r.Resource == "" && r.Resources == nil && r.Mode == zklock.Exclusive && !r.ReadWrite && r.Limit == 0 && !r.Try && r.MaxWait == 0
}

// Router tells the middleware what the router in front of it matched. The
// zero Router is the standard library's ServeMux (Go 1.22 patterns,
// r.PathValue and r.Pattern): the middleware wraps the mux's handlers, or
// the *http.ServeMux itself, which it then asks for the route it will
// serve (http.ServeMux.Handler).
//
// chi:
//
//	zkmw.Router{
//		Param:   chi.URLParam,
//		Pattern: func(r *http.Request) string { return chi.RouteContext(r.Context()).RoutePattern() },
//	}
//
// gorilla/mux:
//
//	zkmw.Router{
//		Param: func(r *http.Request, name string) string { return mux.Vars(r)[name] },
//		Pattern: func(r *http.Request) string {
//			p, _ := mux.CurrentRoute(r).GetPathTemplate()
//			return p
//		},
//	}
//
// ParseServeMuxPattern reads chi's and gorilla's patterns too.
type Router struct {
	// Param returns the value of a parameter of the matched route
	// (default: r.PathValue). The value should be decoded, as
	// r.PathValue's are: a key then names the same resource whatever the
	// front end (chi's URLParam gives the raw value of an escaped path:
	// wrap it in url.PathUnescape).
	Param func(r *http.Request, name string) string

	// Pattern returns the pattern of the matched route as it was
	// registered, without a method (default: r.Pattern without its
	// method), or "" when unknown. It keys Routes, names the default
	// resource and checks the templates' route parameters.
	Pattern func(r *http.Request) string

	// Parse reads a pattern (default: ParseServeMuxPattern).
	Parse PatternParser
}

// Config configures the lock middleware for net/http. Build it with
// Config.ToMiddleware, which reports configuration errors, or Lock and
// LockWithConfig, which panic on them, at set-up.
//
// The middleware locks in one of two ways:
//   - one rule for the handlers it wraps: the embedded Rule (per-route
//     use, mux.Handle(pattern, mw(h)));
//   - a table from route to rule: Routes; routes not in the table are not
//     locked. The middleware must know the route a request matched.
//     Wrapping a *http.ServeMux itself (app-wide use, mw(mux)), it asks
//     the mux which of its routes will serve the request (404, 405 and
//     redirects are not locked); wrapping each handler
//     (mux.Handle(pattern, mw(h))) works too. With another router, place
//     it where the router has matched the route (see Router).
//
// A request whose route the middleware cannot know, or whose route lacks
// a parameter a template names (found only at request time), is answered
// 500 "lock misconfigured" rather than let through unlocked. The reason is
// logged once per route, at Error level, to Logger, and every such
// request is counted in the metric zklock.misconfigured
// (Prometheus: zklock_misconfigured_total), labelled zklock.adapter
// "http" and zklock.route, the route's pattern or "(unrouted)" (never
// the request's path), through MeterProvider.
type Config struct {
	// Skipper, when set and true for a request, lets it through without a
	// lock.
	Skipper func(r *http.Request) bool

	// BeforeFunc, when set, runs before the lock is acquired (after
	// Skipper).
	BeforeFunc func(r *http.Request)

	// Locker acquires the locks: a *zklock.Client, or any zklock.Locker.
	// Required.
	Locker zklock.Locker

	// Rule is what the middleware locks when Routes is empty. Setting both
	// is a configuration error.
	Rule

	// Routes maps "METHOD /pattern" (the route as registered, e.g.
	// "POST /accounts/{id}/withdraw"; METHOD "*" matches any method) to
	// the route's Rule. When set, routes not listed are passed through
	// without a lock. A route parameter named in a template must appear
	// in the key's pattern. Use CheckRoutes to find keys that match no
	// route.
	Routes map[string]Rule

	// Router says how to read the matched route (default: ServeMux).
	Router Router

	// ResourceFunc computes the resource of a rule that names none, from
	// the request, instead of the route's path. An error it returns goes
	// to the ErrorHandler. It excludes the Rule's Resource and Resources.
	ResourceFunc func(r *http.Request) (string, error)

	// ErrorHandler answers a lock failure. It receives a *LockError
	// (wrapping the zklock error). Default: DefaultErrorHandler.
	ErrorHandler func(w http.ResponseWriter, r *http.Request, err error)

	// OnAcquire, when set, runs once the lock is held, before the handler
	// (e.g. to set a header with the lease's fencing token).
	OnAcquire func(w http.ResponseWriter, r *http.Request, lease *zklock.Lease)

	// OnRelease, when set, runs after the lease is released, with the
	// result of the release: nil, a *zklock.LostError if the lease was
	// lost during the request, or an error if ZooKeeper did not confirm
	// the release within ReleaseTimeout (it goes on in the background).
	OnRelease func(r *http.Request, lease *zklock.Lease, err error)

	// RetryAfter is the Retry-After advice on 423 and 503 answers
	// (default DefaultRetryAfter, 1s; rounded up to whole seconds).
	RetryAfter time.Duration

	// ReleaseTimeout bounds how long the request waits for ZooKeeper to
	// confirm a release (default DefaultReleaseTimeout, 10s).
	ReleaseTimeout time.Duration

	// DisableServerTiming turns off the Server-Timing response header
	// (zklock;dur=<wait ms>;desc="<resource>") set before the handler
	// runs. A rule whose template reads a header or a cookie shows its
	// template instead of the resource: the header is readable by the
	// page's scripts, and the value may be a secret.
	DisableServerTiming bool

	// AcquireOptions are added to every acquire, e.g. zklock.LeaseLabel("api").
	// Mode, Limit, Try and MaxWait come from the Rule: set them there. With
	// zklock.RawPath, resources are absolute znode paths (to share locks
	// with a Java or Python service).
	AcquireOptions []zklock.AcquireOption

	// Logger receives a misconfiguration that only a request can reveal
	// (see Config): once per route, at Error level, with the route, the
	// template and the parameter. Default: slog.Default().
	Logger *slog.Logger

	// MeterProvider makes the counter of requests refused for a
	// misconfiguration (see Config; the names are package tracing's:
	// tracing.MetricMisconfigured). Default: the global provider
	// (otel.GetMeterProvider), which follows one set later.
	MeterProvider metric.MeterProvider
}

// Option adjusts the Config built by Lock.
type Option func(*Config)

// Resource sets the resource templates: one (Rule.Resource) or several
// (Rule.Resources). At least one: Resource() is a configuration error, as
// is an empty template (Resource("") does not mean the route's default).
func Resource(templates ...string) Option {
	return func(c *Config) {
		c.Resource, c.Resources = "", nil
		switch {
		case len(templates) == 0:
			c.Resources = []string{} // refused by compileRule
		case len(templates) == 1 && templates[0] != "":
			c.Resource = templates[0]
		default:
			c.Resources = templates
		}
	}
}

// ResourceFunc sets a function that computes the resource (see
// Config.ResourceFunc).
func ResourceFunc(f func(r *http.Request) (string, error)) Option {
	return func(c *Config) { c.ResourceFunc = f }
}

// Mode sets the lock mode: zklock.Exclusive (the default), zklock.Read or
// zklock.Write.
func Mode(m zklock.Mode) Option { return func(c *Config) { c.Mode = m } }

// ReadWrite makes GET and HEAD requests share a read lock and every other
// method take the write lock (see Rule.ReadWrite).
func ReadWrite() Option { return func(c *Config) { c.ReadWrite = true } }

// Limit makes the lock a semaphore of n holders (see Rule.Limit).
func Limit(n int) Option { return func(c *Config) { c.Limit = n } }

// Try makes a busy resource answer 423 Locked at once.
func Try() Option { return func(c *Config) { c.Try = true } }

// MaxWait bounds the wait for the lock (see Rule.MaxWait).
func MaxWait(d time.Duration) Option { return func(c *Config) { c.MaxWait = d } }

// WithRouter sets how the matched route is read (see Router).
func WithRouter(r Router) Option { return func(c *Config) { c.Router = r } }

// WithLogger sets the logger of misconfigurations found at request time
// (see Config.Logger).
func WithLogger(l *slog.Logger) Option { return func(c *Config) { c.Logger = l } }

// WithMeterProvider sets the provider of the misconfiguration metric (see
// Config.MeterProvider). A nil mp is the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *Config) { c.MeterProvider = mp }
}
