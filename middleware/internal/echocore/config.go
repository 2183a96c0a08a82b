package echocore

import (
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/zklockkit/zklockkit/internal/adaptermetrics"
	"github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
)

// Config is the Config of the Echo adapters, generic over Echo's context
// type C and the adapter's Skipper (S) and BeforeFunc (B) types. Each
// adapter converts its own Config to it (zkecho.Config's documentation is
// the reference): Go converts between struct types whose fields are the
// same, so a field that one of them lacks, or has in another order or of
// another type, fails to compile.
type Config[C Context, S ~func(C) bool, B ~func(C)] struct {
	Skipper    S
	BeforeFunc B
	Locker     zklock.Locker
	middleware.Rule
	Routes              map[string]middleware.Rule
	Param               func(c C, name string) string
	ResourceFunc        func(c C) (string, error)
	ErrorHandler        func(c C, err error) error
	OnAcquire           func(c C, lease *zklock.Lease)
	OnRelease           func(c C, lease *zklock.Lease, err error)
	RetryAfter          time.Duration
	ReleaseTimeout      time.Duration
	DisableServerTiming bool
	AcquireOptions      []zklock.AcquireOption
	Logger              *slog.Logger
	MeterProvider       metric.MeterProvider
}

// Echo is what differs between the Echo versions, for New.
type Echo[C Context] struct {
	// Header returns the response's headers.
	Header func(c C) http.Header
	// Matched reports whether the request matched a route handler (no
	// 404 or 405).
	Matched func(c C) bool
	// ErrorHandler is the adapter's DefaultErrorHandler.
	ErrorHandler func(c C, err error) error
}

// core is the part of cfg the net/http core takes, with Echo's patterns;
// its MeterProvider is marked so that the core counts a misconfigured
// request as Echo's.
func (cfg Config[C, S, B]) core() middleware.Config {
	return middleware.Config{
		Locker:              cfg.Locker,
		Rule:                cfg.Rule,
		Routes:              cfg.Routes,
		Router:              middleware.Router{Parse: middleware.ParseEchoPattern},
		RetryAfter:          cfg.RetryAfter,
		ReleaseTimeout:      cfg.ReleaseTimeout,
		DisableServerTiming: cfg.DisableServerTiming,
		AcquireOptions:      cfg.AcquireOptions,
		Logger:              cfg.Logger,
		MeterProvider:       adaptermetrics.ForAdapter(cfg.MeterProvider, tracing.AdapterEcho),
	}
}

// hooks are cfg's hooks, with the defaults filled in.
func (cfg Config[C, S, B]) hooks(e Echo[C]) hooks[C] {
	h := hooks[C]{
		BeforeFunc:   cfg.BeforeFunc,
		Param:        cfg.Param,
		ResourceFunc: cfg.ResourceFunc,
		ErrorHandler: cfg.ErrorHandler,
		OnAcquire:    cfg.OnAcquire,
		OnRelease:    cfg.OnRelease,
		Header:       e.Header,
		Matched:      e.Matched,
	}
	if cfg.Skipper != nil {
		h.Skipper = cfg.Skipper
	}
	if h.ErrorHandler == nil {
		h.ErrorHandler = e.ErrorHandler
	}
	if h.Param == nil {
		h.Param = DecodedParam[C]
	}
	return h
}

// Apply returns cfg adjusted by opts (nil options are skipped): the Lock
// of every front end.
func Apply[Cfg any, O ~func(*Cfg)](cfg Cfg, opts []O) Cfg {
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return cfg
}

// Must returns mw, or panics with err: the LockWithConfig of every Echo
// adapter, which panics at set-up like Echo's own XWithConfig.
func Must[M any](mw M, err error) M {
	if err != nil {
		panic(err)
	}
	return mw
}

// Rule applies o, an option of package middleware (whose documentation is
// the reference), to an Echo adapter's Rule: the adapters' rule options
// are package middleware's.
func Rule(r *middleware.Rule, o middleware.Option) {
	c := middleware.Config{Rule: *r}
	o(&c)
	*r = c.Rule
}

// CheckRoutes reports the keys of routes, a Routes table, that match
// none of registered, the routes registered with Echo, each given as
// "METHOD /path" by route (see middleware.Config.CheckRoutes).
func CheckRoutes[R any](routes map[string]middleware.Rule, registered []R, route func(R) string) error {
	rs := make([]string, 0, len(registered))
	for _, r := range registered {
		rs = append(rs, route(r))
	}
	return middleware.Config{Routes: routes}.CheckRoutes(rs)
}
