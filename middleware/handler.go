package middleware

import (
	"fmt"
	"net/http"

	"github.com/zklockkit/zklockkit/zklock"
)

// Lock returns a middleware that locks the handlers it wraps: a Config
// with locker, adjusted by opts. It panics on a bad configuration, at
// set-up; use Config.ToMiddleware to get the error.
//
//	mux.Handle("POST /accounts/{id}/withdraw", zkmw.Lock(client, zkmw.Resource("accounts/{id}"))(withdraw))
func Lock(locker zklock.Locker, opts ...Option) func(http.Handler) http.Handler {
	cfg := Config{Locker: locker}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return LockWithConfig(cfg)
}

// LockWithConfig returns the middleware for config. It panics on a bad
// configuration, at set-up; use Config.ToMiddleware to get the error.
func LockWithConfig(config Config) func(http.Handler) http.Handler {
	mw, err := config.ToMiddleware()
	if err != nil {
		panic(err)
	}
	return mw
}

// ToMiddleware checks the configuration, fills in defaults and returns the
// middleware. Errors match ErrInvalidConfig.
func (config Config) ToMiddleware() (func(http.Handler) http.Handler, error) {
	core, err := config.Core()
	if err != nil {
		return nil, err
	}
	if config.ResourceFunc != nil && (config.Resource != "" || len(config.Resources) > 0) {
		return nil, fmt.Errorf("%w: Resource and ResourceFunc exclude each other", ErrInvalidConfig)
	}
	h := &handler{cfg: config, core: core, serveMux: config.Router.Param == nil && config.Router.Pattern == nil}
	if h.cfg.ErrorHandler == nil {
		h.cfg.ErrorHandler = DefaultErrorHandler
	}
	if h.cfg.Router.Param == nil {
		h.cfg.Router.Param = func(r *http.Request, name string) string { return r.PathValue(name) }
	}
	if h.cfg.Router.Pattern == nil {
		h.cfg.Router.Pattern = func(r *http.Request) string {
			_, p := splitPattern(r.Pattern)
			return p
		}
	}
	return h.wrap, nil
}

// handler is the net/http middleware over a Core.
type handler struct {
	cfg      Config
	core     *Core
	serveMux bool // the Router is ServeMux's
}

func (h *handler) wrap(next http.Handler) http.Handler {
	var mux *muxRoutes
	if m, ok := next.(*http.ServeMux); ok && h.serveMux {
		mux = &muxRoutes{mux: m}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.cfg.Skipper != nil && h.cfg.Skipper(r) {
			next.ServeHTTP(w, r)
			return
		}
		if mux != nil && !mux.match(r) {
			next.ServeHTTP(w, r) // the mux answers 404, 405 or redirects
			return
		}
		pattern := h.cfg.Router.Pattern(r)
		g := h.core.Guard(r.Method, pattern)
		if g == nil {
			next.ServeHTTP(w, r)
			return
		}
		if h.cfg.BeforeFunc != nil {
			h.cfg.BeforeFunc(r)
		}
		m := Match{Pattern: pattern, Param: func(name string) string { return h.cfg.Router.Param(r, name) }}
		if h.cfg.ResourceFunc != nil {
			m.Func = func() (string, error) { return h.cfg.ResourceFunc(r) }
		}
		held, err := g.Lock(w.Header(), r, m)
		if err != nil {
			h.cfg.ErrorHandler(w, r, err)
			return
		}
		defer func() {
			err := held.Release()
			if h.cfg.OnRelease != nil {
				h.cfg.OnRelease(held.Request(), held.Lease(), err)
			}
		}()
		if h.cfg.OnAcquire != nil {
			h.cfg.OnAcquire(w, held.Request(), held.Lease())
		}
		lw := &lossWriter{ResponseWriter: w}
		next.ServeHTTP(lw, held.Request())
		if lost := held.Lost(held.Request().Context().Err()); lost != nil && !lw.wrote {
			h.cfg.ErrorHandler(w, r, lost)
		}
	})
}

// lossWriter notes whether the handler wrote its answer, so that a lease
// lost while it ran is answered only if it did not.
type lossWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *lossWriter) WriteHeader(code int) {
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *lossWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (Flush,
// Hijack, deadlines).
func (w *lossWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush forwards to the underlying writer when it can flush.
func (w *lossWriter) Flush() {
	w.wrote = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
