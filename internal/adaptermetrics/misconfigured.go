package adaptermetrics

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/zklockkit/zklockkit/tracing"
)

// Misconfigured counts the requests of one adapter refused because their
// lock is misconfigured (tracing.MetricMisconfigured).
type Misconfigured struct {
	counter metric.Int64Counter
	adapter attribute.KeyValue
}

// NewMisconfigured returns the counter of adapter (a tracing.Adapter*
// value), made by the meter of mp named scope (the import path of the
// adapter's package), at version tracing.Version(). A nil mp is the
// global provider (otel.GetMeterProvider), which delegates to the one an
// application sets later; a provider that ForAdapter marked names its own
// adapter instead. A counter the provider refuses is reported to
// otel.Handle and replaced by a no-op one, as package tracing does.
func NewMisconfigured(mp metric.MeterProvider, scope, adapter string) *Misconfigured {
	if m, ok := mp.(marked); ok {
		mp, adapter = m.mp, m.adapter
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	counter, err := mp.Meter(scope, metric.WithInstrumentationVersion(tracing.Version())).Int64Counter(
		tracing.MetricMisconfigured,
		metric.WithDescription("Requests and calls refused because their lock is misconfigured (HTTP 500, gRPC Internal)."),
		metric.WithUnit("{request}"))
	if err != nil {
		otel.Handle(err)
		counter = noop.Int64Counter{}
	}
	return &Misconfigured{counter: counter, adapter: tracing.AdapterKey.String(adapter)}
}

// Add counts one refused request of route: the HTTP route's pattern, ""
// when the route is unknown (counted as tracing.RouteUnrouted, never the
// request's path), or the gRPC full method.
func (m *Misconfigured) Add(ctx context.Context, route string) {
	if route == "" {
		route = tracing.RouteUnrouted
	}
	m.counter.Add(ctx, 1, metric.WithAttributes(m.adapter, tracing.RouteKey.String(route)))
}

// ForAdapter returns mp (nil: the global provider) marked as the provider
// of adapter's metrics, for NewMisconfigured. The Echo adapters hand it
// to the net/http core through middleware.Config.MeterProvider: the core
// would count their requests as the net/http middleware's otherwise.
func ForAdapter(mp metric.MeterProvider, adapter string) metric.MeterProvider {
	return marked{mp: mp, adapter: adapter}
}

// marked is a provider that ForAdapter marked. It is a MeterProvider in
// its own right, should anything else use it.
type marked struct {
	embedded.MeterProvider
	mp      metric.MeterProvider
	adapter string
}

func (m marked) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	if m.mp == nil {
		return otel.GetMeterProvider().Meter(name, opts...)
	}
	return m.mp.Meter(name, opts...)
}
