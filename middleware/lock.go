package middleware

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/zklockkit/zklockkit/zklock"
)

// rule is a compiled Rule.
type rule struct {
	tmpl *template
	fn   func(c echo.Context) (string, error)
	mode Mode
	// acquire options for each zklock mode the rule may use, built once
	opts [3][]zklock.AcquireOption // by zklock.Exclusive, Read, Write
}

// locker is a compiled Config.
type locker struct {
	cfg    Config
	single *rule      // when cfg.Routes is empty
	routes routeTable // otherwise
}

func compile(cfg Config) (*locker, error) {
	if cfg.Locker == nil {
		return nil, fmt.Errorf("%w: no Locker", ErrInvalidConfig)
	}
	if cfg.Skipper == nil {
		cfg.Skipper = DefaultSkipper
	}
	if cfg.ErrorHandler == nil {
		cfg.ErrorHandler = DefaultErrorHandler
	}
	switch {
	case cfg.RetryAfter < 0:
		return nil, fmt.Errorf("%w: negative RetryAfter", ErrInvalidConfig)
	case cfg.RetryAfter == 0:
		cfg.RetryAfter = DefaultRetryAfter
	}
	switch {
	case cfg.ReleaseTimeout < 0:
		return nil, fmt.Errorf("%w: negative ReleaseTimeout", ErrInvalidConfig)
	case cfg.ReleaseTimeout == 0:
		cfg.ReleaseTimeout = DefaultReleaseTimeout
	}
	cfg.AcquireOptions = slices.DeleteFunc(slices.Clone(cfg.AcquireOptions),
		func(o zklock.AcquireOption) bool { return o == nil })
	l := &locker{cfg: cfg}
	if len(cfg.Routes) == 0 {
		r, err := compileRule(cfg, cfg.Rule, nil)
		if err != nil {
			return nil, err
		}
		l.single = r
		return l, nil
	}
	if !cfg.Rule.isZero() {
		return nil, fmt.Errorf("%w: set either the Rule fields or Routes, not both", ErrInvalidConfig)
	}
	l.routes = make(routeTable, len(cfg.Routes))
	for key, rr := range cfg.Routes {
		method, path, err := parseRouteKey(key)
		if err != nil {
			return nil, err
		}
		r, err := compileRule(cfg, rr, routeParams(path))
		if err != nil {
			return nil, fmt.Errorf("route %q: %w", key, err)
		}
		if l.routes[path] == nil {
			l.routes[path] = make(map[string]*rule)
		}
		if l.routes[path][method] != nil {
			return nil, fmt.Errorf("%w: route %q is listed twice", ErrInvalidConfig, method+" "+path)
		}
		l.routes[path][method] = r
	}
	return l, nil
}

func (r Rule) isZero() bool {
	return r.Resource == "" && r.ResourceFunc == nil && r.Mode == Exclusive && !r.Try && r.MaxWait == 0
}

// compileRule checks r; params, when not nil, are the parameters of the
// route the rule is for.
func compileRule(cfg Config, r Rule, params []string) (*rule, error) {
	switch {
	case !r.Mode.valid():
		return nil, fmt.Errorf("%w: unknown mode %d", ErrInvalidConfig, int(r.Mode))
	case r.MaxWait < 0:
		return nil, fmt.Errorf("%w: negative MaxWait", ErrInvalidConfig)
	case r.Try && r.MaxWait > 0:
		return nil, fmt.Errorf("%w: Try and MaxWait exclude each other", ErrInvalidConfig)
	case r.Resource != "" && r.ResourceFunc != nil:
		return nil, fmt.Errorf("%w: Resource and ResourceFunc exclude each other", ErrInvalidConfig)
	}
	cr := &rule{fn: r.ResourceFunc, mode: r.Mode}
	if r.Resource != "" {
		t, err := parseTemplate(r.Resource)
		if err != nil {
			return nil, err
		}
		if params != nil {
			for _, p := range t.params() {
				if !slices.Contains(params, p) {
					return nil, fmt.Errorf("%w: resource template %q: the route has no parameter %q", ErrInvalidConfig, r.Resource, p)
				}
			}
		}
		cr.tmpl = t
	}
	for _, m := range []zklock.Mode{zklock.Exclusive, zklock.Read, zklock.Write} {
		opts := slices.Clone(cfg.AcquireOptions)
		opts = append(opts, zklock.WithMode(m))
		if r.Try {
			opts = append(opts, zklock.Try())
		}
		if r.MaxWait > 0 {
			opts = append(opts, zklock.MaxWait(r.MaxWait))
		}
		cr.opts[m] = opts
	}
	return cr, nil
}

// resource computes the request's resource.
func (r *rule) resource(c echo.Context) (string, error) {
	switch {
	case r.fn != nil:
		return r.fn(c)
	case r.tmpl != nil:
		return r.tmpl.render(c)
	}
	return routeResource(c)
}

// middleware is the echo.MiddlewareFunc.
func (l *locker) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if l.cfg.Skipper(c) {
			return next(c)
		}
		r := l.single
		if l.routes != nil {
			r = l.routes.lookup(c)
		}
		if r == nil || !routeMatched(c) {
			return next(c)
		}
		if l.cfg.BeforeFunc != nil {
			l.cfg.BeforeFunc(c)
		}
		return l.serve(c, next, r)
	}
}

// serve runs next under the lock of rule r.
func (l *locker) serve(c echo.Context, next echo.HandlerFunc, r *rule) error {
	req := c.Request()
	mode := r.mode.lockMode(req.Method)
	resource, err := r.resource(c)
	if err != nil {
		return l.cfg.ErrorHandler(c, &LockError{Resource: resource, Mode: mode, RetryAfter: l.cfg.RetryAfter, Err: err})
	}
	start := time.Now()
	lease, err := l.cfg.Locker.Acquire(req.Context(), resource, r.opts[mode]...)
	waited := time.Since(start)
	if err != nil {
		if !errors.Is(err, zklock.ErrInvalidResource) {
			l.serverTiming(c, resource, waited)
		}
		return l.cfg.ErrorHandler(c, &LockError{Resource: resource, Mode: mode, Waited: waited, RetryAfter: l.cfg.RetryAfter, Err: err})
	}
	l.serverTiming(c, resource, waited)
	// Released when the handler returns, fails or panics.
	defer l.release(c, req, lease)
	c.SetRequest(req.WithContext(lease.Context(req.Context())))
	if l.cfg.OnAcquire != nil {
		l.cfg.OnAcquire(c, lease)
	}
	err = next(c)
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, zklock.ErrLeaseLost)) {
		if lost := lease.Err(); errors.Is(lost, zklock.ErrLeaseLost) {
			// The handler stopped because its lock was lost.
			return l.cfg.ErrorHandler(c, &LockError{Resource: resource, Mode: mode, Waited: waited, RetryAfter: l.cfg.RetryAfter, Err: lost})
		}
	}
	return err
}

func (l *locker) serverTiming(c echo.Context, resource string, waited time.Duration) {
	if !l.cfg.DisableServerTiming {
		c.Response().Header().Add(HeaderServerTiming, serverTiming(resource, waited))
	}
}

// release gives the lease back, with a context that outlives the request's
// (a client that went away must not leave the lock held).
func (l *locker) release(c echo.Context, req *http.Request, lease *zklock.Lease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), l.cfg.ReleaseTimeout)
	err := lease.Release(ctx)
	cancel()
	if l.cfg.OnRelease != nil {
		l.cfg.OnRelease(c, lease, err)
	}
}
