package tracing_test

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Every kind of lock is named on its span and metrics. None of these
// acquires waits, so each makes one span: the hold span, which carries the
// acquire's wait and outcome.
func TestIntegration_Kinds(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer()
	c := connect(t, zktest.UniqueRoot(t), zklock.WithObserver(obs))
	ctx := context.Background()

	cases := []struct {
		name    string
		kind    string
		class   string
		acquire func(ctx context.Context) (*zklock.Lease, error)
	}{
		{"read", tracing.KindRead, "reports/{id}", func(ctx context.Context) (*zklock.Lease, error) {
			return c.Acquire(ctx, "reports/2024", zklock.Read)
		}},
		{"write", tracing.KindWrite, "reports/{id}", func(ctx context.Context) (*zklock.Lease, error) {
			return c.Acquire(ctx, "reports/2024", zklock.Write)
		}},
		{"semaphore", tracing.KindSemaphore, "pool/{id}", func(ctx context.Context) (*zklock.Lease, error) {
			return c.Acquire(ctx, "pool/3", zklock.Limit(2))
		}},
		{"multi", tracing.KindMulti, "accounts/{id},accounts/{id}", func(ctx context.Context) (*zklock.Lease, error) {
			return c.AcquireAll(ctx, []string{"accounts/1", "accounts/2"})
		}},
		// One resource whose legal name has a comma: the same name as the
		// multi lease above, but one lock.
		{"comma", tracing.KindExclusive, "accounts/{id},accounts/{id}", func(ctx context.Context) (*zklock.Lease, error) {
			return c.Acquire(ctx, "accounts/1,accounts/2")
		}},
		// AcquireAll of one resource is that resource's lock.
		{"all-of-one", tracing.KindExclusive, "accounts/{id}", func(ctx context.Context) (*zklock.Lease, error) {
			return c.AcquireAll(ctx, []string{"accounts/3"})
		}},
		{"election", tracing.KindElection, "leader/orders", func(ctx context.Context) (*zklock.Lease, error) {
			return c.Campaign(ctx, "leader/orders", []byte("candidate-1"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tel.spans.Reset()
			pctx, parent := tel.tracer().Start(ctx, "request")
			l, err := tc.acquire(pctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Release(pctx); err != nil {
				t.Fatal(err)
			}
			parent.End()
			// Nothing waits here: one hold span, no acquire span.
			h := tel.waitEnded(t, tracing.SpanHold, 1)[0]
			if n := len(tel.ended(tracing.SpanAcquire)); n != 0 {
				t.Errorf("%d acquire spans for an acquire that did not wait", n)
			}
			if h.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Error("the hold span is not a child of the caller's span")
			}
			wantAttr(t, h, tracing.LockKindKey, attribute.StringValue(tc.kind))
			wantAttr(t, h, tracing.ResourceClassKey, attribute.StringValue(tc.class))
			wantAttr(t, h, tracing.ResourceNameKey, attribute.StringValue(l.Resource()))
			wantAttr(t, h, tracing.FencingTokenKey, attribute.Int64Value(l.Token()))
			wantAttr(t, h, tracing.QueuePositionKey, attribute.IntValue(0))
			wantAttr(t, h, tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeAcquired))
			if v, ok := attr(h, tracing.ErrorTypeKey); ok {
				t.Errorf("error.type %q on a success", v.AsString())
			}
			if w := mustAttr(t, h, tracing.WaitDurationKey).AsFloat64(); w <= 0 {
				t.Errorf("wait %v", w)
			}
			if names := eventNames(h); len(names) != 0 {
				t.Errorf("hold events %v, want none", names)
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
// ends, and the read lease has a hold span of its own, without an acquire
// span, a link, or an acquire's attributes: it never waited. The write
// lease is taken at once (a hold span only) or after waiting behind a
// reader (an acquire span, and its hold span linked to it).
func TestIntegration_Downgrade(t *testing.T) {
	for _, waited := range []bool{false, true} {
		t.Run(fmt.Sprintf("waited=%v", waited), func(t *testing.T) {
			tel := newTelemetry(t)
			obs := tel.observer()
			seen := newEvents(zklock.EventEnqueued)
			c := connect(t, zktest.UniqueRoot(t), zklock.WithObserver(obs), zklock.WithObserver(seen))
			ctx := context.Background()
			var reader *zklock.Lease
			if waited {
				var err error
				if reader, err = c.Acquire(ctx, "reports/7", zklock.Read); err != nil {
					t.Fatal(err)
				}
				seen.next(t, zklock.EventEnqueued)
				go func() {
					seen.next(t, zklock.EventEnqueued) // the writer is in the queue, behind the reader
					if err := reader.Release(ctx); err != nil {
						t.Error(err)
					}
				}()
			}
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
			holds := tel.waitEnded(t, tracing.SpanHold, 2)
			if waited {
				holds = holds[1:] // the first reader's
			}
			if len(holds) != 2 {
				t.Fatalf("%d hold spans, want 2", len(holds))
			}
			wantAttr(t, holds[0], tracing.LockKindKey, attribute.StringValue(tracing.KindWrite))
			wantAttr(t, holds[0], tracing.FencingTokenKey, attribute.Int64Value(w.Token()))
			acquires := tel.ended(tracing.SpanAcquire)
			if waited {
				if len(acquires) != 1 {
					t.Fatalf("%d acquire spans, want the write lease's", len(acquires))
				}
				wantAttr(t, acquires[0], tracing.LockKindKey, attribute.StringValue(tracing.KindWrite))
				wantAttr(t, acquires[0], tracing.QueuePositionKey, attribute.IntValue(1))
				if links := holds[0].Links(); len(links) != 1 || links[0].SpanContext.SpanID() != acquires[0].SpanContext().SpanID() {
					t.Errorf("write hold links %v, want its acquire span", links)
				}
			} else {
				if len(acquires) != 0 {
					t.Errorf("%d acquire spans, want none", len(acquires))
				}
				wantAttr(t, holds[0], tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeAcquired))
			}
			wantAttr(t, holds[1], tracing.LockKindKey, attribute.StringValue(tracing.KindRead))
			wantAttr(t, holds[1], tracing.FencingTokenKey, attribute.Int64Value(r.Token()))
			wantAttr(t, holds[1], tracing.ZnodePathKey, attribute.StringValue(r.Path()))
			for _, k := range []attribute.Key{tracing.OutcomeKey, tracing.WaitDurationKey, tracing.QueuePositionKey} {
				if v, ok := attr(holds[1], k); ok {
					t.Errorf("the downgraded lease's hold span has %s=%s: it made no acquire", k, v.String())
				}
			}
			if len(holds[1].Links()) != 0 || holds[1].Status().Code != codes.Unset {
				t.Errorf("read hold links %v, status %+v", holds[1].Links(), holds[1].Status())
			}
			if holds[1].StartTime().After(holds[0].EndTime()) {
				t.Error("the read lease's span starts after the write lease's ends: the spans show a gap that never was")
			}
			if k, n := obs.InFlight(), obs.Orphans(); k != 0 || n != 0 {
				t.Errorf("observer still tracks %d locks and %d losses", k, n)
			}
		})
	}
}
