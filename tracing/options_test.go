package tracing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// WithResourceClass replaces the class on spans and metrics (spans keep the
// full name); WithSpanAttributes and WithMetricAttributes add attributes;
// nil options are ignored.
func TestIntegration_Options(t *testing.T) {
	tel := newTelemetry(t)
	tenant := func(r string) string { return strings.SplitN(r, "/", 2)[0] }
	obs := tel.observer(nil, tracing.WithResourceClass(nil), tracing.WithResourceClass(tenant),
		tracing.WithTracerProvider(nil), tracing.WithMeterProvider(nil),
		tracing.WithSpanAttributes(attribute.String("app.component", "billing")),
		tracing.WithMetricAttributes(attribute.String("app.region", "eu")))
	root := zktest.UniqueRoot(t)
	c := connect(t, root, zklock.WithObserver(obs))
	ctx := context.Background()
	l, err := c.Acquire(ctx, "acme/invoices/2041")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// A waiter, so that both spans are made.
	seen := newEvents(zklock.EventEnqueued)
	c2 := connect(t, root, zklock.WithObserver(obs), zklock.WithObserver(seen))
	holder, err := c2.Acquire(ctx, "acme/invoices/2041")
	if err != nil {
		t.Fatal(err)
	}
	seen.next(t, zklock.EventEnqueued)
	go func() {
		seen.next(t, zklock.EventEnqueued)
		if err := holder.Release(ctx); err != nil {
			t.Error(err)
		}
	}()
	l, err = c2.Acquire(ctx, "acme/invoices/2041")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	tel.waitEnded(t, tracing.SpanHold, 3)
	for _, s := range append(tel.ended(tracing.SpanHold), tel.waitEnded(t, tracing.SpanAcquire, 1)...) {
		wantAttr(t, s, tracing.ResourceClassKey, attribute.StringValue("acme"))
		wantAttr(t, s, tracing.ResourceNameKey, attribute.StringValue("acme/invoices/2041"))
		wantAttr(t, s, "app.component", attribute.StringValue("billing"))
		if _, ok := attr(s, "app.region"); ok {
			t.Errorf("%s span has the metric-only attribute", s.Name())
		}
	}
	ms := tel.metrics(t)
	class := []attribute.KeyValue{tracing.ResourceClassKey.String("acme"), tracing.LockKindKey.String(tracing.KindExclusive),
		attribute.String("app.region", "eu")}
	if dp, _ := histogram(t, ms, tracing.MetricAcquireDuration, append(class, tracing.OutcomeKey.String(tracing.OutcomeAcquired))...); dp.Count != 3 {
		t.Errorf("%s with the custom class and attributes: count %d, want 3", tracing.MetricAcquireDuration, dp.Count)
	}
	if dp, _ := histogram(t, ms, tracing.MetricHoldDuration, class...); dp.Count != 3 {
		t.Errorf("%s with the custom class and attributes: count %d, want 3", tracing.MetricHoldDuration, dp.Count)
	}
}

// Without provider options the Observer uses the global providers. (The
// globals cannot be fully restored afterwards: once set, the default global
// delegates for good. No other test depends on them.)
func TestIntegration_GlobalProviders(t *testing.T) {
	tel := newTelemetry(t)
	tp, mp := otel.GetTracerProvider(), otel.GetMeterProvider()
	otel.SetTracerProvider(tel.tp)
	otel.SetMeterProvider(tel.mp)
	t.Cleanup(func() {
		otel.SetTracerProvider(tp)
		otel.SetMeterProvider(mp)
	})
	obs := tracing.NewObserver()
	c := connect(t, zktest.UniqueRoot(t), zklock.WithObserver(obs))
	ctx := context.Background()
	l, err := c.Acquire(ctx, "global/1")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	h := tel.waitEnded(t, tracing.SpanHold, 1)[0]
	if sc := h.InstrumentationScope(); sc.Name != tracing.ScopeName || sc.Version != tracing.Version() {
		t.Errorf("scope %+v, want %s %s", sc, tracing.ScopeName, tracing.Version())
	}
	if _, ok := tel.metrics(t)[tracing.MetricAcquireDuration]; !ok {
		t.Errorf("no %s from the global meter provider", tracing.MetricAcquireDuration)
	}
}

// The Observer works with no-op providers (what the globals are when
// OpenTelemetry is not configured): no spans, no state left behind.
func TestIntegration_NoopProviders(t *testing.T) {
	obs := tracing.NewObserver(tracing.WithTracerProvider(tracenoop.NewTracerProvider()),
		tracing.WithMeterProvider(metricnoop.NewMeterProvider()))
	c := connect(t, zktest.UniqueRoot(t), zklock.WithObserver(obs))
	ctx := context.Background()
	l, err := c.Acquire(ctx, "noop/1")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if k := obs.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

func TestVersion(t *testing.T) {
	if v := tracing.Version(); v == "" {
		t.Error("empty version")
	}
	if tracing.ScopeName != "github.com/zklockkit/zklockkit/tracing" {
		t.Errorf("ScopeName %q is not the import path", tracing.ScopeName)
	}
}

// Under a sampler that records nothing, the Observer makes no spans but
// still measures every acquire and lease.
func TestIntegration_NotSampled(t *testing.T) {
	tel := newTelemetry(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	obs := tracing.NewObserver(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(tel.mp))
	seen := newEvents(zklock.EventEnqueued)
	c := connect(t, zktest.UniqueRoot(t), zklock.WithObserver(obs), zklock.WithObserver(seen))
	ctx := context.Background()
	l, err := c.Acquire(ctx, "unsampled/1")
	if err != nil {
		t.Fatal(err)
	}
	seen.next(t, zklock.EventEnqueued)
	if _, err := c.TryAcquire(ctx, "unsampled/1"); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("try: %v", err)
	}
	seen.next(t, zklock.EventEnqueued)
	// A waiter: its acquire span is opened, not recording, when it learns
	// that it waited.
	go func() {
		seen.next(t, zklock.EventEnqueued)
		if err := l.Release(ctx); err != nil {
			t.Error(err)
		}
	}()
	w, err := c.Acquire(ctx, "unsampled/1")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(spans.Started()); n != 0 {
		t.Errorf("%d spans recorded, want none", n)
	}
	ms := tel.metrics(t)
	class := []attribute.KeyValue{tracing.ResourceClassKey.String("unsampled/{id}"), tracing.LockKindKey.String(tracing.KindExclusive)}
	if dp, _ := histogram(t, ms, tracing.MetricAcquireDuration, append(class, tracing.OutcomeKey.String(tracing.OutcomeAcquired))...); dp.Count != 2 {
		t.Errorf("acquired count %d, want 2", dp.Count)
	}
	if dp, _ := histogram(t, ms, tracing.MetricAcquireDuration, append(class, tracing.OutcomeKey.String(tracing.OutcomeBusy), tracing.ErrorTypeKey.String("locked"))...); dp.Count != 1 {
		t.Errorf("busy count %d, want 1", dp.Count)
	}
	if dp, _ := histogram(t, ms, tracing.MetricHoldDuration, class...); dp.Count != 2 {
		t.Errorf("hold count %d, want 2", dp.Count)
	}
	if k := obs.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}
