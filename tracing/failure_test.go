package tracing_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Each way an acquire can fail gives an acquire span with an error status,
// the error recorded, the right outcome, no hold span, and a wait
// measurement under that outcome.
func TestIntegration_FailureOutcomes(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer()
	root := zktest.UniqueRoot(t)
	c := connect(t, root, zklock.WithObserver(obs))
	const resource = "jobs/7"
	ctx := context.Background()

	holder, err := c.Acquire(ctx, resource)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		acquire func(ctx context.Context) error
		want    string // outcome
		errType string
		is      error
	}{
		{"try", func(ctx context.Context) error {
			_, err := c.TryAcquire(ctx, resource)
			return err
		}, tracing.OutcomeBusy, "locked", zklock.ErrLocked},
		{"max-wait", func(ctx context.Context) error {
			_, err := c.Acquire(ctx, resource, zklock.MaxWait(200*time.Millisecond))
			return err
		}, tracing.OutcomeTimeout, "wait_timeout", zklock.ErrWaitTimeout},
		{"deadline", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			_, err := c.Acquire(ctx, resource)
			return err
		}, tracing.OutcomeTimeout, "deadline_exceeded", context.DeadlineExceeded},
		{"cancel", func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(200*time.Millisecond, cancel)
			_, err := c.Acquire(ctx, resource)
			return err
		}, tracing.OutcomeCanceled, "canceled", context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tel.spans.Reset()
			pctx, parent := tel.tracer().Start(ctx, "request")
			err := tc.acquire(pctx)
			parent.End()
			if !errors.Is(err, tc.is) {
				t.Fatalf("acquire: %v, want %v", err, tc.is)
			}
			spans := tel.ended(tracing.SpanAcquire)
			if len(spans) != 1 {
				t.Fatalf("%d acquire spans, want 1", len(spans))
			}
			s := spans[0]
			if s.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Error("the acquire span is not a child of the caller's span")
			}
			wantAttr(t, s, tracing.OutcomeKey, attribute.StringValue(tc.want))
			wantAttr(t, s, tracing.ErrorTypeKey, attribute.StringValue(tc.errType))
			// A failed acquire has no hold span: its own span names the
			// node it queued with and the session.
			wantAttr(t, s, tracing.SessionIDKey, attribute.StringValue(session(c.SessionID())))
			if p, _ := attr(s, tracing.ZnodePathKey); !strings.HasPrefix(p.AsString(), root+"/") {
				t.Errorf("path %q, want one under %s", p.AsString(), root)
			}
			if s.Status().Code != codes.Error || s.Status().Description != err.Error() {
				t.Errorf("status %+v, want error %q", s.Status(), err)
			}
			// Whether it waited (a span opened when its position would
			// change) or not (a try, opened as it fails), the span shows
			// the whole acquire: from its start, enqueued behind the
			// holder, then the error.
			wantAttr(t, s, tracing.QueuePositionKey, attribute.IntValue(1))
			names := eventNames(s)
			if len(names) != 2 || names[0] != tracing.EventEnqueued || names[1] != "exception" {
				t.Errorf("events %v, want %s then the error", names, tracing.EventEnqueued)
			} else if e := s.Events()[0]; e.Time.Before(s.StartTime()) || e.Time.After(s.EndTime()) {
				t.Errorf("enqueued at %v, outside its span [%v, %v]", e.Time, s.StartTime(), s.EndTime())
			}
			if w, ok := attr(s, tracing.WaitDurationKey); !ok || w.AsFloat64() <= 0 {
				t.Errorf("wait duration %v", w.String())
			}
			if n := len(tel.ended(tracing.SpanHold)); n != 0 {
				t.Errorf("%d hold spans for a failed acquire", n)
			}
		})
	}

	// A closed Client fails every acquire: outcome error. It has an
	// Observer of its own on the same providers.
	obs2 := tel.observer()
	c2 := connect(t, root, zklock.WithObserver(obs2))
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
	tel.spans.Reset()
	if _, err := c2.Acquire(ctx, resource); !errors.Is(err, zklock.ErrClosed) {
		t.Fatalf("acquire on a closed client: %v", err)
	}
	spans := tel.ended(tracing.SpanAcquire)
	if len(spans) != 1 {
		t.Fatalf("%d acquire spans, want 1", len(spans))
	}
	wantAttr(t, spans[0], tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeError))
	wantAttr(t, spans[0], tracing.ErrorTypeKey, attribute.StringValue("closed"))
	if spans[0].Status().Code != codes.Error {
		t.Errorf("status %+v", spans[0].Status())
	}

	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	ms := tel.metrics(t)
	class := []attribute.KeyValue{tracing.ResourceClassKey.String("jobs/{id}"), tracing.LockKindKey.String(tracing.KindExclusive)}
	// Each failure is a point of its own, with its outcome and error type;
	// the success has no error type.
	for _, p := range []struct {
		outcome, errType string
		want             uint64
	}{
		{tracing.OutcomeAcquired, "", 1},
		{tracing.OutcomeBusy, "locked", 1},
		{tracing.OutcomeTimeout, "wait_timeout", 1},
		{tracing.OutcomeTimeout, "deadline_exceeded", 1},
		{tracing.OutcomeCanceled, "canceled", 1},
		{tracing.OutcomeError, "closed", 1},
	} {
		kvs := append(class[:len(class):len(class)], tracing.OutcomeKey.String(p.outcome))
		if p.errType != "" {
			kvs = append(kvs, tracing.ErrorTypeKey.String(p.errType))
		}
		dp, _ := histogram(t, ms, tracing.MetricAcquireDuration, kvs...)
		if dp.Count != p.want {
			t.Errorf("%s{outcome=%s, error.type=%q} count %d, want %d", tracing.MetricAcquireDuration, p.outcome, p.errType, dp.Count, p.want)
		}
	}
	if n := len(ms[tracing.MetricAcquireDuration].Data.(metricdata.Histogram[float64]).DataPoints); n != 6 {
		t.Errorf("%s has %d points, want the 6 above", tracing.MetricAcquireDuration, n)
	}
	if v := sum(t, ms, tracing.MetricAcquireActive, class...); v != 0 {
		t.Errorf("%s = %d after every acquire ended", tracing.MetricAcquireActive, v)
	}
	if v := sum(t, ms, tracing.MetricHoldActive, class...); v != 0 {
		t.Errorf("%s = %d after the release", tracing.MetricHoldActive, v)
	}
	if k := obs.InFlight() + obs2.InFlight(); k != 0 {
		t.Errorf("observers still track %d locks", k)
	}
}

// A lease lost because someone deleted its node, and one lost because its
// Client closed, end their hold spans with an error and the reason, and
// count as lost.
func TestIntegration_Lost(t *testing.T) {
	tel := newTelemetry(t)
	root := zktest.UniqueRoot(t)
	ctx := context.Background()
	other := connect(t, root)

	for _, tc := range []struct {
		reason zklock.LossReason
		lose   func(c *zklock.Client, l *zklock.Lease)
	}{
		{zklock.LossNodeDeleted, func(c *zklock.Client, l *zklock.Lease) {
			if err := other.Conn().Delete(l.Path(), -1); err != nil {
				t.Fatal(err)
			}
		}},
		{zklock.LossClientClosed, func(c *zklock.Client, l *zklock.Lease) { _ = c.Close() }},
	} {
		t.Run(tc.reason.String(), func(t *testing.T) {
			tel.spans.Reset()
			obs := tel.observer()
			c := connect(t, root, zklock.WithObserver(obs))
			l, err := c.Acquire(ctx, "accounts/7")
			if err != nil {
				t.Fatal(err)
			}
			tc.lose(c, l)
			select {
			case <-l.Done():
			case <-time.After(patience):
				t.Fatal("the lease was not lost")
			}
			if !errors.Is(l.Err(), zklock.ErrLeaseLost) {
				t.Fatalf("lease error %v", l.Err())
			}
			// The loss is reported on another goroutine.
			h := tel.waitEnded(t, tracing.SpanHold, 1)[0]
			wantAttr(t, h, tracing.LostReasonKey, attribute.StringValue(tc.reason.String()))
			wantAttr(t, h, tracing.ErrorTypeKey, attribute.StringValue("lease_lost"))
			if h.Status().Code != codes.Error || h.Status().Description != l.Err().Error() {
				t.Errorf("hold status %+v, want error %q", h.Status(), l.Err())
			}
			if names := eventNames(h); len(names) != 1 || names[0] != "exception" {
				t.Errorf("hold events %v, want the error recorded", names)
			}
			if err := l.Release(ctx); !errors.Is(err, zklock.ErrLeaseLost) {
				t.Errorf("release after loss: %v", err)
			}
			if n := len(tel.ended(tracing.SpanHold)); n != 1 {
				t.Errorf("%d hold spans, want 1", n)
			}
			if k := obs.InFlight(); k != 0 {
				t.Errorf("observer still tracks %d locks", k)
			}
		})
	}

	ms := tel.metrics(t)
	class := []attribute.KeyValue{tracing.ResourceClassKey.String("accounts/{id}"), tracing.LockKindKey.String(tracing.KindExclusive)}
	for _, r := range []zklock.LossReason{zklock.LossNodeDeleted, zklock.LossClientClosed} {
		if v := sum(t, ms, tracing.MetricHoldLost, append(class, tracing.LostReasonKey.String(r.String()), tracing.ErrorTypeKey.String("lease_lost"))...); v != 1 {
			t.Errorf("%s{reason=%s} = %d, want 1", tracing.MetricHoldLost, r, v)
		}
	}
	if dp, _ := histogram(t, ms, tracing.MetricHoldDuration, append(class, tracing.ErrorTypeKey.String("lease_lost"))...); dp.Count != 2 {
		t.Errorf("%s{error.type=lease_lost} count %d, want 2", tracing.MetricHoldDuration, dp.Count)
	}
	if dp, ok := histogram(t, ms, tracing.MetricHoldDuration, class...); ok {
		t.Errorf("%s without error.type: count %d, want no point (no lease was released)", tracing.MetricHoldDuration, dp.Count)
	}
	if v := sum(t, ms, tracing.MetricHoldActive, class...); v != 0 {
		t.Errorf("%s = %d after both losses", tracing.MetricHoldActive, v)
	}
}
