package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/internal/adaptermetrics"
	"github.com/zklockkit/zklockkit/internal/keycache"
	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
)

// Core is a compiled Config without its framework: the rules and route
// table, the resource templates, and how to acquire, answer and release.
// The net/http middleware of this package and the Echo adapters (package
// zkecho, for Echo v4 and v5) are built on it, and so can be an adapter
// for another router: find the request's Guard, Lock, run the handler
// with Held.Request, then Release.
//
// Core uses the Config's Locker, Rule, Routes, Router.Parse, RetryAfter,
// ReleaseTimeout, DisableServerTiming, AcquireOptions, Logger and
// MeterProvider; the hooks (Skipper, ErrorHandler, OnAcquire...) belong to
// the net/http middleware. The requests it refuses for a misconfiguration
// count as the net/http middleware's (zklock.adapter "http").
type Core struct {
	locker       zklock.Locker
	parse        PatternParser
	retryAfter   time.Duration
	release      time.Duration
	serverTiming bool
	logger       *slog.Logger
	misconf      *adaptermetrics.Misconfigured

	single   *Guard                   // when Routes is empty
	unrouted *Guard                   // a request whose route the table cannot know
	routes   routeTable               // otherwise
	guards   sync.Map                 // *rule → *Guard, for the table
	bound    keycache.Map[*routeInfo] // pattern → its routeInfo, for the single rule
}

// errUnrouted answers a request that reaches a Routes table with no route
// pattern: the middleware runs before the router matched the request.
var errUnrouted = fmt.Errorf("%w: the request's route is unknown: a Routes table middleware must wrap the *http.ServeMux itself, or each handler, or run after the router matched the route (see Router)", ErrInvalidConfig)

// Guard is the lock of one rule: the single Rule of a Config, or the rule
// of one route of its table.
type Guard struct {
	core    *Core
	rule    *rule
	pattern string // the table's pattern, or "" for the single rule
}

// Match is what the router matched for a request.
type Match struct {
	// Pattern is the route pattern as registered ("/accounts/{id}",
	// "/accounts/:id"), without a method; "" when unknown.
	Pattern string
	// Param returns the value of a parameter of the matched route.
	Param func(name string) string
	// Func, when set, computes the resource of a rule that names none,
	// instead of the route's path (the adapter's ResourceFunc).
	Func func() (string, error)
}

// Core compiles the configuration. Errors match ErrInvalidConfig.
func (config Config) Core() (*Core, error) {
	if config.Locker == nil {
		return nil, fmt.Errorf("%w: no Locker", ErrInvalidConfig)
	}
	c := &Core{locker: config.Locker, parse: config.Router.Parse, serverTiming: !config.DisableServerTiming, logger: config.Logger}
	if c.parse == nil {
		c.parse = ParseServeMuxPattern
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	c.misconf = adaptermetrics.NewMisconfigured(config.MeterProvider, ScopeName, tracing.AdapterHTTP)
	switch {
	case config.RetryAfter < 0:
		return nil, fmt.Errorf("%w: negative RetryAfter", ErrInvalidConfig)
	case config.RetryAfter == 0:
		c.retryAfter = DefaultRetryAfter
	default:
		c.retryAfter = config.RetryAfter
	}
	switch {
	case config.ReleaseTimeout < 0:
		return nil, fmt.Errorf("%w: negative ReleaseTimeout", ErrInvalidConfig)
	case config.ReleaseTimeout == 0:
		c.release = DefaultReleaseTimeout
	default:
		c.release = config.ReleaseTimeout
	}
	base := slices.DeleteFunc(slices.Clone(config.AcquireOptions),
		func(o zklock.AcquireOption) bool { return o == nil })
	if len(config.Routes) == 0 {
		r, err := compileRule(config.Rule, base)
		if err != nil {
			return nil, err
		}
		c.single = &Guard{core: c, rule: r}
		return c, nil
	}
	if !config.Rule.isZero() {
		return nil, fmt.Errorf("%w: set either the Rule fields or Routes, not both", ErrInvalidConfig)
	}
	c.unrouted = &Guard{core: c, rule: &rule{route: &routeInfo{err: errUnrouted}}}
	c.routes = make(routeTable, len(config.Routes))
	for key, rr := range config.Routes {
		method, pattern, err := parseRouteKey(key)
		if err != nil {
			return nil, err
		}
		r, err := compileRule(rr, base)
		if err != nil {
			return nil, fmt.Errorf("route %q: %w", key, err)
		}
		r.route = r.bindRoute(c.parse, pattern)
		if r.route.err != nil {
			return nil, fmt.Errorf("route %q: %w", key, r.route.err)
		}
		if c.routes[pattern] == nil {
			c.routes[pattern] = make(map[string]*rule)
		}
		if c.routes[pattern][method] != nil {
			return nil, fmt.Errorf("%w: route %q is listed twice", ErrInvalidConfig, method+" "+pattern)
		}
		c.routes[pattern][method] = r
	}
	return c, nil
}

// Guard returns the guard of a request's route (method, and pattern as
// in Match.Pattern), or nil when the route is not locked: with a Routes
// table, routes not in it.
func (c *Core) Guard(method, pattern string) *Guard {
	if c.single != nil {
		return c.single
	}
	if pattern == "" {
		return c.unrouted
	}
	r := c.routes.lookup(method, pattern)
	if r == nil {
		return nil
	}
	if g, ok := c.guards.Load(r); ok {
		return g.(*Guard)
	}
	g, _ := c.guards.LoadOrStore(r, &Guard{core: c, rule: r, pattern: strings.Clone(pattern)})
	return g.(*Guard)
}

// Check reports whether the guard's templates fit the route of pattern:
// ErrInvalidConfig when a template names a parameter the route lacks. An
// adapter calls it when a route is registered, if the router tells; Lock
// calls it otherwise, once per pattern.
func (g *Guard) Check(pattern string) error {
	return g.route(pattern).err
}

// route returns what the guard's rule needs of a route pattern.
func (g *Guard) route(pattern string) *routeInfo {
	if g.rule.route != nil {
		return g.rule.route
	}
	if pattern == "" {
		return nil
	}
	return g.core.bound.Get(pattern, func(p string) *routeInfo { return g.rule.bindRoute(g.core.parse, p) })
}

// Held is a request's lock, from Lock to Release.
type Held struct {
	guard    *Guard
	req      *http.Request
	lease    *zklock.Lease
	resource string
	mode     zklock.Mode
	waited   time.Duration

	// Room for the common case, so that a request makes fewer
	// allocations: one resource, and the Server-Timing header's value.
	one    [1]string
	timing [1]string
}

// Lock computes the request's resources and acquires them, with the
// request's context, and sets the Server-Timing header on h (the
// response's headers) unless disabled. A failure is a *LockError, for the
// adapter's error handler.
func (g *Guard) Lock(h http.Header, r *http.Request, m Match) (*Held, error) {
	mode := g.rule.mode.lockMode(r.Method)
	if g.rule.src.Limit > 0 {
		mode = zklock.Semaphore
	}
	ri := g.route(m.Pattern)
	if ri != nil && ri.err != nil {
		g.core.misconfigured(r, m.Pattern, ri)
		return nil, g.lockError("", mode, 0, ri.err)
	}
	held := &Held{guard: g, mode: mode}
	rs, err := g.rule.resources(r, ri, m, held.one[:0])
	if err != nil {
		return nil, g.lockError("", mode, 0, err)
	}
	held.resource = resourceList(rs)
	opts := g.rule.opts[g.rule.mode.lockMode(r.Method)]
	start := time.Now()
	if len(rs) == 1 {
		held.lease, err = g.core.locker.Acquire(r.Context(), rs[0], opts...)
	} else {
		held.lease, err = g.core.locker.AcquireAll(r.Context(), rs, opts...)
	}
	held.waited = time.Since(start)
	if g.core.serverTiming && (err == nil || !errors.Is(err, zklock.ErrInvalidResource)) {
		held.setServerTiming(h)
	}
	if err != nil {
		return nil, g.lockError(held.resource, mode, held.waited, g.rule.hideValues(err, ri, m))
	}
	held.req = r.WithContext(held.lease.Context(r.Context()))
	return held, nil
}

// setServerTiming adds the Server-Timing entry of the lock wait to h.
func (held *Held) setServerTiming(h http.Header) {
	desc := held.resource
	if d := held.guard.rule.timingDesc; d != "" {
		desc = d
	}
	v := serverTiming(desc, held.waited)
	if len(h[HeaderServerTiming]) > 0 {
		h.Add(HeaderServerTiming, v)
		return
	}
	held.timing[0] = v
	h[HeaderServerTiming] = held.timing[:1:1] // an Add copies it
}

func (g *Guard) lockError(resource string, mode zklock.Mode, waited time.Duration, err error) *LockError {
	return &LockError{Resource: resource, Mode: mode, Waited: waited, RetryAfter: g.core.retryAfter, Err: err}
}

// Request returns the request to hand to the handler: its context is the
// lease's (cancelled if the lease is lost, carrying the lease for
// LeaseFrom and for re-entry).
func (h *Held) Request() *http.Request { return h.req }

// Lease returns the lease.
func (h *Held) Lease() *zklock.Lease { return h.lease }

// Lost returns a *LockError when the handler, which returned err, stopped
// because the lease was lost; the adapter answers it instead of err.
func (h *Held) Lost(err error) error {
	if err == nil || !(errors.Is(err, context.Canceled) || errors.Is(err, zklock.ErrLeaseLost)) {
		return nil
	}
	if lost := h.lease.Err(); errors.Is(lost, zklock.ErrLeaseLost) {
		return h.guard.lockError(h.resource, h.mode, h.waited, lost)
	}
	return nil
}

// Release gives the lease back, with a context that outlives the
// request's (a client that went away must not leave the lock held),
// bounded by the ReleaseTimeout. It returns the release's error: nil, a
// *zklock.LostError if the lease was lost meanwhile, or the error of a
// release ZooKeeper did not confirm in time (it goes on in the
// background).
func (h *Held) Release() error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.req.Context()), h.guard.core.release)
	defer cancel()
	return h.lease.Release(ctx)
}

// misconfigured counts a request to the route of pattern answered 500
// because of ri's error, and logs it once per route.
func (c *Core) misconfigured(r *http.Request, pattern string, ri *routeInfo) {
	route := strings.Clone(pattern) // the request's pattern stays on the stack
	c.misconf.Add(r.Context(), route)
	if ri.logged.Swap(true) {
		return
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("route", route)}
	if route == "" {
		attrs = append(attrs, slog.String("path", r.URL.Path))
	}
	if ri.template != "" {
		attrs = append(attrs, slog.String("template", ri.template), slog.String("parameter", ri.param))
	}
	attrs = append(attrs, slog.String("error", ri.err.Error()))
	c.logger.LogAttrs(r.Context(), slog.LevelError,
		"zklock/middleware: lock misconfigured: requests to this route are answered 500 until it is fixed", attrs...)
}
