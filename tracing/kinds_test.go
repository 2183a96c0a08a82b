package tracing_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Every kind of lock is named on its spans and metrics.
func TestIntegration_Kinds(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer()
	c := connect(t, zktest.UniqueRoot(t), zklock.WithObserver(obs))
	ctx := context.Background()

	cases := []struct {
		name    string
		kind    string
		class   string
		enqueue int // enqueue events: one per resource
		acquire func() (*zklock.Lease, error)
	}{
		{"read", tracing.KindRead, "reports/{id}", 1, func() (*zklock.Lease, error) {
			return c.Acquire(ctx, "reports/2024", zklock.Read)
		}},
		{"write", tracing.KindWrite, "reports/{id}", 1, func() (*zklock.Lease, error) {
			return c.Acquire(ctx, "reports/2024", zklock.Write)
		}},
		{"semaphore", tracing.KindSemaphore, "pool/{id}", 1, func() (*zklock.Lease, error) {
			return c.Acquire(ctx, "pool/3", zklock.Limit(2))
		}},
		{"multi", tracing.KindMulti, "accounts/{id},accounts/{id}", 2, func() (*zklock.Lease, error) {
			return c.AcquireAll(ctx, []string{"accounts/1", "accounts/2"})
		}},
		// One resource whose legal name has a comma: the same name as the
		// multi lease above, but one lock.
		{"comma", tracing.KindExclusive, "accounts/{id},accounts/{id}", 1, func() (*zklock.Lease, error) {
			return c.Acquire(ctx, "accounts/1,accounts/2")
		}},
		// AcquireAll of one resource is that resource's lock.
		{"all-of-one", tracing.KindExclusive, "accounts/{id}", 1, func() (*zklock.Lease, error) {
			return c.AcquireAll(ctx, []string{"accounts/3"})
		}},
		{"election", tracing.KindElection, "leader/orders", 1, func() (*zklock.Lease, error) {
			return c.Campaign(ctx, "leader/orders", []byte("candidate-1"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tel.spans.Reset()
			l, err := tc.acquire()
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
			a := tel.waitEnded(t, tracing.SpanAcquire, 1)[0]
			h := tel.waitEnded(t, tracing.SpanHold, 1)[0]
			for _, s := range []interface {
				Name() string
				Attributes() []attribute.KeyValue
			}{a, h} {
				kv := s.Attributes()
				if v, _ := lookup(kv, tracing.LockKindKey); v.AsString() != tc.kind {
					t.Errorf("%s: kind %q, want %q", s.Name(), v.AsString(), tc.kind)
				}
				if v, _ := lookup(kv, tracing.ResourceClassKey); v.AsString() != tc.class {
					t.Errorf("%s: class %q, want %q", s.Name(), v.AsString(), tc.class)
				}
				if v, ok := lookup(kv, tracing.ErrorTypeKey); ok {
					t.Errorf("%s: error.type %q on a success", s.Name(), v.AsString())
				}
				if v, _ := lookup(kv, tracing.ResourceNameKey); v.AsString() != l.Resource() {
					t.Errorf("%s: resource %q, want %q", s.Name(), v.AsString(), l.Resource())
				}
			}
			wantAttr(t, h, tracing.FencingTokenKey, attribute.Int64Value(l.Token()))
			var parts []string
			for _, e := range a.Events() {
				if e.Name != tracing.EventEnqueued {
					continue
				}
				if v, ok := lookup(e.Attributes, tracing.ResourceNameKey); ok {
					parts = append(parts, v.AsString())
				}
			}
			switch {
			case tc.kind == tracing.KindMulti && (len(parts) != 2 || parts[0] != "accounts/1" || parts[1] != "accounts/2"):
				t.Errorf("enqueue events name %v, want each part", parts)
			case tc.kind != tracing.KindMulti && len(parts) != 0:
				t.Errorf("enqueue events of a single resource name it: %v", parts)
			}
			if n := len(eventNames(a)); n != tc.enqueue {
				t.Errorf("acquire events %v, want %d enqueue events", eventNames(a), tc.enqueue)
			}
			ms := tel.metrics(t)
			class := []attribute.KeyValue{tracing.ResourceClassKey.String(tc.class), tracing.LockKindKey.String(tc.kind)}
			if dp, _ := histogram(t, ms, tracing.MetricAcquireDuration, append(class, tracing.OutcomeKey.String(tracing.OutcomeAcquired))...); dp.Count == 0 {
				t.Errorf("no %s measurement for %v", tracing.MetricAcquireDuration, class)
			}
			if dp, _ := histogram(t, ms, tracing.MetricHoldDuration, class...); dp.Count == 0 {
				t.Errorf("no %s measurement for %v", tracing.MetricHoldDuration, class)
			}
		})
	}
	if k := obs.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

// A write lease downgraded to a read lease: the write lease's hold span
// ends, and the read lease has a hold span of its own (it never waited, so
// it has no acquire span).
func TestIntegration_Downgrade(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer()
	c := connect(t, zktest.UniqueRoot(t), zklock.WithObserver(obs))
	ctx := context.Background()
	w, err := c.Acquire(ctx, "reports/7", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.Downgrade(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(tel.ended(tracing.SpanAcquire)); n != 1 {
		t.Errorf("%d acquire spans, want the write lease's", n)
	}
	holds := tel.waitEnded(t, tracing.SpanHold, 2)
	if len(holds) != 2 {
		t.Fatalf("%d hold spans, want 2", len(holds))
	}
	wantAttr(t, holds[0], tracing.LockKindKey, attribute.StringValue(tracing.KindWrite))
	wantAttr(t, holds[0], tracing.FencingTokenKey, attribute.Int64Value(w.Token()))
	wantAttr(t, holds[1], tracing.LockKindKey, attribute.StringValue(tracing.KindRead))
	wantAttr(t, holds[1], tracing.FencingTokenKey, attribute.Int64Value(r.Token()))
	wantAttr(t, holds[1], tracing.ZnodePathKey, attribute.StringValue(r.Path()))
	if holds[1].StartTime().After(holds[0].EndTime()) {
		t.Error("the read lease's span starts after the write lease's ends: the spans show a gap that never was")
	}
	if k, n := obs.InFlight(), obs.Orphans(); k != 0 || n != 0 {
		t.Errorf("observer still tracks %d locks and %d losses", k, n)
	}
}
