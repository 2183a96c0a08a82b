// Package echocore is what the Echo v4 and v5 adapters share, generic over
// Echo's context type (an interface in v4, a struct pointer in v5): their
// Config (config.go), the request flow over the net/http core (this
// file), and the check of a route's middleware at registration
// (probe.go).
package echocore

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/zklock"
)

// Context is the part of Echo's context the adapters use.
type Context interface {
	Request() *http.Request
	SetRequest(r *http.Request)
	Param(name string) string
	Path() string
}

// hooks are an adapter's Config hooks, with defaults filled in, and what
// differs between Echo versions (Header, Matched).
type hooks[C Context] struct {
	Skipper      func(c C) bool
	BeforeFunc   func(c C)
	Param        func(c C, name string) string
	ResourceFunc func(c C) (string, error)
	ErrorHandler func(c C, err error) error
	OnAcquire    func(c C, lease *zklock.Lease)
	OnRelease    func(c C, lease *zklock.Lease, err error)

	Header  func(c C) http.Header // the response's headers
	Matched func(c C) bool        // the request matched a route handler (no 404 or 405)
}

// Adapter serves requests of one Config.
type Adapter[C Context] struct {
	core *middleware.Core
	h    hooks[C]
}

// New compiles cfg for the Echo of e. Errors match
// middleware.ErrInvalidConfig.
func New[C Context, S ~func(C) bool, B ~func(C)](cfg Config[C, S, B], e Echo[C]) (*Adapter[C], error) {
	core, err := cfg.core().Core()
	if err != nil {
		return nil, err
	}
	if cfg.ResourceFunc != nil && (cfg.Resource != "" || len(cfg.Resources) > 0) {
		return nil, fmt.Errorf("%w: Resource and ResourceFunc exclude each other", middleware.ErrInvalidConfig)
	}
	return &Adapter[C]{core: core, h: cfg.hooks(e)}, nil
}

// Build returns the middleware of cfg for the Echo of e, in Echo's shape,
// noted by probe p (see Middleware): an adapter's Config.ToMiddleware.
func Build[C Context, S ~func(C) bool, B ~func(C), H ~func(C) error](cfg Config[C, S, B], e Echo[C], p *Probe[C, H]) (func(next H) H, error) {
	a, err := New(cfg, e)
	if err != nil {
		return nil, err
	}
	return Middleware(a, p), nil
}

// DecodedParam is c.Param(name), decoded when Echo matched the route on
// the request's escaped path (URL.RawPath, set when the path holds an
// escape such as %2F that decoding would lose): Echo then gives raw
// values.
func DecodedParam[C Context](c C, name string) string {
	v := c.Param(name)
	if c.Request().URL.RawPath != "" {
		if d, err := url.PathUnescape(v); err == nil {
			return d
		}
	}
	return v
}

// Guard returns the guard of the route pattern for method (see
// middleware.Core.Guard).
func (a *Adapter[C]) Guard(method, pattern string) *middleware.Guard {
	return a.core.Guard(method, pattern)
}

// Serve runs next under the lock of c's route.
func (a *Adapter[C]) Serve(c C, next func(C) error) error {
	if a.h.Skipper != nil && a.h.Skipper(c) || !a.h.Matched(c) {
		return next(c)
	}
	req := c.Request()
	pattern := c.Path()
	g := a.core.Guard(req.Method, pattern)
	if g == nil {
		return next(c)
	}
	if a.h.BeforeFunc != nil {
		a.h.BeforeFunc(c)
	}
	m := middleware.Match{Pattern: pattern, Param: func(name string) string { return a.h.Param(c, name) }}
	if a.h.ResourceFunc != nil {
		m.Func = func() (string, error) { return a.h.ResourceFunc(c) }
	}
	held, err := g.Lock(a.h.Header(c), req, m)
	if err != nil {
		return a.h.ErrorHandler(c, err)
	}
	// Released when the handler returns, fails or panics.
	defer func() {
		err := held.Release()
		if a.h.OnRelease != nil {
			a.h.OnRelease(c, held.Lease(), err)
		}
	}()
	c.SetRequest(held.Request())
	if a.h.OnAcquire != nil {
		a.h.OnAcquire(c, held.Lease())
	}
	err = next(c)
	if lost := held.Lost(err); lost != nil {
		return a.h.ErrorHandler(c, lost)
	}
	return err
}
