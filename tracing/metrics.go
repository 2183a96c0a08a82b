package tracing

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Metric names.
const (
	// MetricAcquireDuration is the histogram of acquire wait times, in
	// seconds, by resource class, lock kind and outcome.
	MetricAcquireDuration = "zklock.acquire.duration"
	// MetricHoldDuration is the histogram of hold times (acquired to
	// released or lost), in seconds, by resource class and lock kind.
	MetricHoldDuration = "zklock.hold.duration"
	// MetricAcquireActive counts the acquires in progress (waiting).
	MetricAcquireActive = "zklock.acquire.active"
	// MetricHoldActive counts the leases currently held.
	MetricHoldActive = "zklock.hold.active"
	// MetricHoldLost counts lost leases, by resource class, lock kind and
	// reason.
	MetricHoldLost = "zklock.hold.lost"
)

// durationBuckets are the histogram bucket boundaries, in seconds: from
// 1 ms to 60 s, about three per decade. A View of the SDK can replace them.
var durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

type instruments struct {
	wait    metric.Float64Histogram
	hold    metric.Float64Histogram
	waiting metric.Int64UpDownCounter
	held    metric.Int64UpDownCounter
	lost    metric.Int64Counter
}

// newInstruments creates the instruments. An instrument the provider
// refuses is reported to otel.Handle and replaced by a no-op one.
func newInstruments(m metric.Meter) instruments {
	var ins instruments
	var err error
	ins.wait, err = m.Float64Histogram(MetricAcquireDuration,
		metric.WithDescription("Time an acquire waited for a lock, until acquired or failed."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		otel.Handle(err)
		ins.wait = noop.Float64Histogram{}
	}
	ins.hold, err = m.Float64Histogram(MetricHoldDuration,
		metric.WithDescription("Time a lease was held, until released or lost."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		otel.Handle(err)
		ins.hold = noop.Float64Histogram{}
	}
	ins.waiting, err = m.Int64UpDownCounter(MetricAcquireActive,
		metric.WithDescription("Acquires in progress: waiting for a lock."),
		metric.WithUnit("{acquire}"))
	if err != nil {
		otel.Handle(err)
		ins.waiting = noop.Int64UpDownCounter{}
	}
	ins.held, err = m.Int64UpDownCounter(MetricHoldActive,
		metric.WithDescription("Leases currently held."),
		metric.WithUnit("{lease}"))
	if err != nil {
		otel.Handle(err)
		ins.held = noop.Int64UpDownCounter{}
	}
	ins.lost, err = m.Int64Counter(MetricHoldLost,
		metric.WithDescription("Leases lost (session expired or unverified, node deleted, client closed)."),
		metric.WithUnit("{lease}"))
	if err != nil {
		otel.Handle(err)
		ins.lost = noop.Int64Counter{}
	}
	return ins
}
