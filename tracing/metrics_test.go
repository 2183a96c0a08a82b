package tracing_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// The active counts of several Observers on one MeterProvider (one per
// Client, as the package asks) add up: each reports its own, and the SDK
// sums the observations of one series.
func TestIntegration_ActiveCountsAddUp(t *testing.T) {
	tel := newTelemetry(t)
	root := zktest.UniqueRoot(t)
	c1 := connect(t, root, zklock.WithObserver(tel.observer()))
	c2 := connect(t, root, zklock.WithObserver(tel.observer()))
	ctx := context.Background()
	class := []attribute.KeyValue{tracing.ResourceClassKey.String("jobs/{id}"), tracing.LockKindKey.String(tracing.KindExclusive)}

	l1, err := c1.Acquire(ctx, "jobs/1")
	if err != nil {
		t.Fatal(err)
	}
	l2, err := c2.Acquire(ctx, "jobs/2")
	if err != nil {
		t.Fatal(err)
	}
	// A third acquire waits behind l1, through the second Client.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	waited := make(chan error, 1)
	seen := newEvents(zklock.EventEnqueued)
	c3 := connect(t, root, zklock.WithObserver(tel.observer()), zklock.WithObserver(seen))
	go func() {
		l, err := c3.Acquire(wctx, "jobs/1")
		if err == nil {
			err = l.Release(ctx)
		}
		waited <- err
	}()
	seen.next(t, zklock.EventEnqueued)

	ms := tel.metrics(t)
	if v := sum(t, ms, tracing.MetricHoldActive, class...); v != 2 {
		t.Errorf("%s = %d with a lease held through each of two Observers, want 2", tracing.MetricHoldActive, v)
	}
	if v := sum(t, ms, tracing.MetricAcquireActive, class...); v != 1 {
		t.Errorf("%s = %d with one acquire waiting, want 1", tracing.MetricAcquireActive, v)
	}
	if err := l1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if err := l2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	ms = tel.metrics(t)
	if v := sum(t, ms, tracing.MetricHoldActive, class...); v != 0 {
		t.Errorf("%s = %d after every release", tracing.MetricHoldActive, v)
	}
	if v := sum(t, ms, tracing.MetricAcquireActive, class...); v != 0 {
		t.Errorf("%s = %d after every acquire ended", tracing.MetricAcquireActive, v)
	}
	if s, ok := ms[tracing.MetricHoldActive].Data.(metricdata.Sum[int64]); !ok || s.IsMonotonic {
		t.Errorf("%s is %T (monotonic %v), want a non-monotonic int64 sum", tracing.MetricHoldActive, ms[tracing.MetricHoldActive].Data, ok && s.IsMonotonic)
	}
}

// An Observer that is dropped stops reporting: the callback that reports
// its active counts holds it weakly and is unregistered once it is
// garbage.
func TestObserver_DroppedStopsReporting(t *testing.T) {
	tel := newTelemetry(t)
	func() {
		o := tel.observer()
		feed(o, ev(zklock.EventStarted, 1, 0)) // an acquire in progress, forever
	}()
	if v := sumAll(t, tel.metrics(t), tracing.MetricAcquireActive); v != 1 {
		t.Fatalf("%s = %d, want 1", tracing.MetricAcquireActive, v)
	}
	deadline := time.Now().Add(patience)
	for {
		runtime.GC()
		if _, ok := tel.metrics(t)[tracing.MetricAcquireActive]; !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a dropped Observer still reports %s after %v", tracing.MetricAcquireActive, patience)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// One Observer may serve several Clients: zklock's event IDs are unique in
// the process.
func TestIntegration_SharedObserver(t *testing.T) {
	var mu sync.Mutex
	var errs []error
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}))
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	tel := newTelemetry(t)
	obs := tel.observer()
	root := zktest.UniqueRoot(t)
	clients := []*zklock.Client{connect(t, root, zklock.WithObserver(obs)), connect(t, root, zklock.WithObserver(obs))}
	ctx := context.Background()
	for range 3 {
		for i, c := range clients {
			l, err := c.Acquire(ctx, fmt.Sprintf("shared/%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, m := len(tel.ended(tracing.SpanAcquire)), len(tel.ended(tracing.SpanHold)); n != 0 || m != 6 {
		t.Errorf("%d acquire and %d hold spans, want 0 and 6 (nothing waited)", n, m)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 0 {
		t.Errorf("errors handled: %v", errs)
	}
	if k := obs.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

// The lost-lease counter of a class and kind starts at 0 for every
// reason with its first acquire, before any loss: Prometheus's increase()
// cannot count the first value of a series born at 1, and an alert on
// losses (docs/prometheus/zklock-rules.yml) would miss a class's first.
func TestIntegration_LostCounterStartsAtZero(t *testing.T) {
	tel := newTelemetry(t)
	c := connect(t, zktest.UniqueRoot(t), zklock.WithObserver(tel.observer()))
	l, err := c.Acquire(context.Background(), "accounts/42")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	m, ok := tel.metrics(t)[tracing.MetricHoldLost]
	if !ok {
		t.Fatalf("no %s before any loss", tracing.MetricHoldLost)
	}
	var reasons []string
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		class, _ := dp.Attributes.Value(tracing.ResourceClassKey)
		reason, _ := dp.Attributes.Value(tracing.LostReasonKey)
		errType, _ := dp.Attributes.Value(tracing.ErrorTypeKey)
		if dp.Value != 0 || class.AsString() != "accounts/{id}" || errType.AsString() != "lease_lost" {
			t.Errorf("point %v = %d", dp.Attributes.ToSlice(), dp.Value)
		}
		reasons = append(reasons, reason.AsString())
	}
	slices.Sort(reasons)
	if got := strings.Join(reasons, ","); got != "client_closed,node_deleted,partner_lost,session_expired,session_unverified" {
		t.Errorf("reasons %s", got)
	}
}
