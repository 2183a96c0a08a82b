package tracing

import (
	"context"
	"runtime"
	"weak"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/zklockkit/zklockkit/zklock"
)

// Metric names.
const (
	// MetricAcquireDuration is the histogram of acquire wait times, in
	// seconds, by resource class, lock kind and outcome (and error type,
	// for failures).
	MetricAcquireDuration = "zklock.acquire.duration"
	// MetricHoldDuration is the histogram of hold times (acquired to
	// released or lost), in seconds, by resource class and lock kind (and
	// error type, for lost leases).
	MetricHoldDuration = "zklock.hold.duration"
	// MetricAcquireActive counts the acquires in progress (waiting).
	MetricAcquireActive = "zklock.acquire.active"
	// MetricHoldActive counts the leases currently held.
	MetricHoldActive = "zklock.hold.active"
	// MetricHoldLost counts lost leases, by resource class, lock kind,
	// reason and error type.
	MetricHoldLost = "zklock.hold.lost"
	// MetricMisconfigured counts the requests and calls an adapter refused
	// because its lock is misconfigured in a way only a request can reveal
	// (HTTP 500 "lock misconfigured", gRPC Internal), by adapter
	// (AdapterKey) and route (RouteKey). The adapters record it, not the
	// Observer: package middleware, its Echo adapters and package
	// interceptor, each through its own MeterProvider option.
	MetricMisconfigured = "zklock.misconfigured"
)

// durationBuckets are the histogram bucket boundaries, in seconds: from
// 1 ms to 60 s, about three per decade. A View of the SDK can replace them.
var durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// instruments are the synchronous instruments. The two active counts are
// asynchronous: each series keeps its own counts (an atomic add per
// change), and a callback reports them when the reader collects, which
// saves four SDK measurements per acquire and release.
type instruments struct {
	wait metric.Float64Histogram
	hold metric.Float64Histogram
	lost metric.Int64Counter
}

// newInstruments creates the instruments, and registers the callback that
// reports the active counts of reg's series. The callback holds reg
// weakly and is unregistered once owner is garbage: an Observer that is
// dropped stops reporting. An instrument or callback the provider refuses
// is reported to otel.Handle (a refused histogram or counter is replaced
// by a no-op one).
func newInstruments(m metric.Meter, reg *registry, owner *Observer) instruments {
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
	ins.lost, err = m.Int64Counter(MetricHoldLost,
		metric.WithDescription("Leases lost (session expired or unverified, node deleted, client closed)."),
		metric.WithUnit("{lease}"))
	if err != nil {
		otel.Handle(err)
		ins.lost = noop.Int64Counter{}
	}

	waiting, err := m.Int64ObservableUpDownCounter(MetricAcquireActive,
		metric.WithDescription("Acquires in progress: waiting for a lock."),
		metric.WithUnit("{acquire}"))
	if err != nil {
		otel.Handle(err)
		return ins
	}
	held, err := m.Int64ObservableUpDownCounter(MetricHoldActive,
		metric.WithDescription("Leases currently held."),
		metric.WithUnit("{lease}"))
	if err != nil {
		otel.Handle(err)
		return ins
	}
	weakReg := weak.Make(reg)
	cb, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		reg := weakReg.Value()
		if reg == nil {
			return nil
		}
		reg.each(func(s *series) {
			o.ObserveInt64(waiting, s.waiting.Load(), s.base)
			o.ObserveInt64(held, s.held.Load(), s.base)
		})
		return nil
	}, waiting, held)
	if err != nil {
		otel.Handle(err)
		return ins
	}
	runtime.AddCleanup(owner, func(cb metric.Registration) { _ = cb.Unregister() }, cb)
	return ins
}

// lostReasons are the values of zklock.lost.reason: the zklock.LossReason
// names.
var lostReasons = []zklock.LossReason{zklock.LossSessionExpired, zklock.LossSessionUnverified,
	zklock.LossNodeDeleted, zklock.LossClientClosed, zklock.LossPartner}

// zeroLost starts the lost-lease counter of a new series at 0 for every
// reason, so that its first loss is an increase from 0: Prometheus's
// increase() and rate() cannot count the first value of a series that is
// born at 1, and an alert on losses would miss a class's first one.
func (ins instruments) zeroLost(s *series) {
	for _, r := range lostReasons {
		ins.lost.Add(context.Background(), 0, s.lost(r.String()))
	}
}
