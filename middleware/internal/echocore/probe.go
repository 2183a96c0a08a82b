package echocore

import (
	"reflect"
	"sync"
)

// Probe finds, among the middleware of a route, those an adapter package
// built, so that the route can be checked when it is registered: it
// builds each middleware once more with its handler, which is never
// called, and the adapters' middleware note themselves when they are
// built with it (see Middleware).
type Probe[C Context, H ~func(C) error] struct {
	handler  H
	pc       uintptr // the handler's code: func values do not compare
	notFound string  // the method of Echo's RouteNotFound routes

	mu    sync.Mutex // one check at a time
	found []*Adapter[C]
}

// NewProbe returns a probe that builds middleware with handler, a
// function of the adapter package's own that nothing else uses. notFound
// is the method of Echo's RouteNotFound routes (echo.RouteNotFound),
// which answer 404 and are not checked: Echo adds them to every group
// that has middleware, with the group's prefix for a path.
func NewProbe[C Context, H ~func(C) error](handler H, notFound string) *Probe[C, H] {
	return &Probe[C, H]{handler: handler, pc: reflect.ValueOf(handler).Pointer(), notFound: notFound}
}

// Middleware returns a's middleware in Echo's shape. Built with p's
// handler, it notes a for the check in progress.
func Middleware[C Context, H ~func(C) error](a *Adapter[C], p *Probe[C, H]) func(next H) H {
	return func(next H) H {
		if reflect.ValueOf(next).Pointer() == p.pc {
			p.found = append(p.found, a) // p.mu is held by CheckRoute, on this goroutine
		}
		return func(c C) error { return a.Serve(c, next) }
	}
}

// CheckRoute checks the route (method, path as registered) against the
// lock middleware among mws, the route's middleware: an error matching
// middleware.ErrInvalidConfig when a template names a parameter the
// route's path lacks.
func CheckRoute[C Context, H ~func(C) error, M ~func(H) H](p *Probe[C, H], method, path string, mws []M) error {
	if method == p.notFound {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.found = p.found[:0]
	for _, mw := range mws {
		if mw != nil {
			mw(p.handler)
		}
	}
	for _, a := range p.found {
		if g := a.Guard(method, path); g != nil {
			if err := g.Check(path); err != nil {
				return err
			}
		}
	}
	return nil
}
