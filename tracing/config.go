package tracing

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope name of the tracer and meter: this
// package's import path. The scope version is Version().
const ScopeName = "github.com/zklockkit/zklockkit/tracing"

// Option configures an Observer. Options are applied in order over the
// documented defaults; a nil Option is ignored.
type Option func(*config)

type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	class          func(resource string) string
	spanAttrs      []attribute.KeyValue
	metricAttrs    []attribute.KeyValue
}

func newConfig(opts []Option) config {
	c := config{class: DefaultResourceClass}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	return c
}

// WithTracerProvider sets the TracerProvider that creates the lock spans.
// The default, also used when tp is nil, is the global provider
// (otel.GetTracerProvider) as it is when NewObserver is called; the global
// provider delegates, so setting it later still takes effect.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp != nil {
			c.tracerProvider = tp
		}
	}
}

// WithMeterProvider sets the MeterProvider that creates the lock metrics.
// The default, also used when mp is nil, is the global provider
// (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.meterProvider = mp
		}
	}
}

// WithResourceClass sets the function that maps a resource name to the
// value of the zklock.resource.class attribute, which labels every metric
// (spans keep the full name in zklock.resource.name as well). It bounds
// the cardinality of the metrics: return few distinct values. The function
// receives Event.Resource, which for AcquireAll is the names joined with
// ","; it must be safe for concurrent use, and return the same class for
// the same name: the Observer remembers the classes of the last few
// thousand resources it saw. The default, also used when f is nil, is
// DefaultResourceClass.
func WithResourceClass(f func(resource string) string) Option {
	return func(c *config) {
		if f != nil {
			c.class = f
		}
	}
}

// WithSpanAttributes adds attributes to every span the Observer starts
// (default: none).
func WithSpanAttributes(attrs ...attribute.KeyValue) Option {
	return func(c *config) { c.spanAttrs = append(c.spanAttrs, attrs...) }
}

// WithMetricAttributes adds attributes to every measurement the Observer
// records (default: none). Keep their values few: each distinct set is a
// separate time series.
func WithMetricAttributes(attrs ...attribute.KeyValue) Option {
	return func(c *config) { c.metricAttrs = append(c.metricAttrs, attrs...) }
}
