package tracing_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
)

// The Observer reuses the memory of a finished acquire's state for the
// next one. Events that come late, or race with the end of the lease they
// name (a loss against a release, a session event against everything),
// must never reach the lease that reuses the state: here, under -race,
// workers take leases while losses of the even ones race with their
// releases and session events go to whatever is in progress, and every
// hold span must name its own lease, and only a lease that was sent a loss
// may end lost.
func TestObserver_ReusedStatesStayApart(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	ctx := context.Background()
	const workers, cycles = 4, 1500
	const session = 0x77
	var next atomic.Uint64
	next.Store(1 << 40)
	losses := make(chan uint64, 64)
	resource := func(id uint64) string { return "reuse/" + strconv.FormatUint(id, 10) }

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range cycles {
				id := next.Add(1)
				e := zklock.Event{ID: id, Resource: resource(id), Resources: []string{resource(id)},
					Path: "/p/" + strconv.FormatUint(id, 10), Token: int64(id), SessionID: session}
				for _, k := range []zklock.EventKind{zklock.EventStarted, zklock.EventEnqueued, zklock.EventAcquired} {
					e.Kind, e.Time = k, time.Now()
					o.Observe(ctx, e)
				}
				if id%2 == 0 {
					losses <- id // races with the release below
				}
				e.Kind, e.Time = zklock.EventReleased, time.Now()
				o.Observe(ctx, e)
			}
		})
	}
	var late sync.WaitGroup
	late.Go(func() {
		for id := range losses {
			o.Observe(ctx, zklock.Event{Kind: zklock.EventLost, ID: id, Resource: resource(id), SessionID: session,
				Time: time.Now(), Err: zklock.ErrLeaseLost})
		}
	})
	stop := make(chan struct{})
	late.Go(func() {
		for kind := zklock.EventSuspended; ; {
			select {
			case <-stop:
				return
			default:
			}
			o.Observe(ctx, zklock.Event{Kind: kind, SessionID: session, Time: time.Now()})
			if kind == zklock.EventSuspended {
				kind = zklock.EventResumed
			} else {
				kind = zklock.EventSuspended
			}
		}
	})
	wg.Wait()
	close(losses)
	close(stop)
	late.Wait()

	holds := tel.ended(tracing.SpanHold)
	if len(holds) != workers*cycles {
		t.Fatalf("%d hold spans, want %d", len(holds), workers*cycles)
	}
	seen := make(map[int64]bool)
	for _, s := range holds {
		v, _ := attr(s, tracing.FencingTokenKey)
		token := v.AsInt64()
		id := uint64(token)
		if seen[token] {
			t.Errorf("two hold spans for lease %d", id)
		}
		seen[token] = true
		if got, _ := attr(s, tracing.ResourceNameKey); got.AsString() != resource(id) {
			t.Errorf("hold span of lease %d names resource %q, want %q", id, got.AsString(), resource(id))
		}
		if got, want := mustAttr(t, s, tracing.ZnodePathKey).AsString(), "/p/"+strconv.FormatUint(id, 10); got != want {
			t.Errorf("hold span of lease %d names node %q, want %q", id, got, want)
		}
		_, lost := attr(s, tracing.LostReasonKey)
		if id%2 == 1 && (lost || s.Status().Code == codes.Error) {
			t.Errorf("hold span of lease %d, which was never lost, ends lost: status %v", id, s.Status())
		}
	}
	for _, s := range tel.ended(tracing.SpanAcquire) {
		if got := mustAttr(t, s, tracing.OutcomeKey).AsString(); got != tracing.OutcomeAcquired {
			t.Errorf("acquire span of %s: outcome %q, want acquired", mustAttr(t, s, tracing.ResourceNameKey).AsString(), got)
		}
	}
	if n := o.InFlight(); n != 0 {
		t.Errorf("%d acquires or leases still tracked after all were released", n)
	}
}

// The Observer reuses the space in which it gathers a span's start
// attributes: each span carries its own attributes and no other, here an
// acquire span opened right after a lease's hold span, on one goroutine
// (where the space is reused for certain).
func TestObserver_SpansCarryOnlyTheirOwnAttributes(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	ctx := context.Background()
	const id = 1 << 41
	observe := func(e zklock.Event) {
		e.Time = time.Now()
		o.Observe(ctx, e)
	}
	lease := zklock.Event{ID: id, Resource: "own/1", Resources: []string{"own/1"}, Path: "/p/own-1", Token: 11, SessionID: 0x77}
	for _, k := range []zklock.EventKind{zklock.EventStarted, zklock.EventEnqueued, zklock.EventAcquired, zklock.EventReleased} {
		lease.Kind = k
		observe(lease)
	}
	waiter := zklock.Event{ID: id + 1, Resource: "own/2", Resources: []string{"own/2"}, Path: "/p/own-2", SessionID: 0x77, Position: 1}
	for _, k := range []zklock.EventKind{zklock.EventStarted, zklock.EventEnqueued, zklock.EventPosition} {
		waiter.Kind = k
		observe(waiter)
	}
	waiter.Kind, waiter.Err = zklock.EventFailed, zklock.ErrWaitTimeout
	observe(waiter)

	keys := func(s sdktrace.ReadOnlySpan) []string {
		var ks []string
		for _, kv := range s.Attributes() {
			ks = append(ks, string(kv.Key))
		}
		slices.Sort(ks)
		return ks
	}
	sorted := func(ks ...attribute.Key) []string {
		var out []string
		for _, k := range ks {
			out = append(out, string(k))
		}
		slices.Sort(out)
		return out
	}
	holds, acquires := tel.ended(tracing.SpanHold), tel.ended(tracing.SpanAcquire)
	if len(holds) != 1 || len(acquires) != 1 {
		t.Fatalf("%d hold and %d acquire spans, want 1 and 1", len(holds), len(acquires))
	}
	if got, want := keys(holds[0]), sorted(tracing.ResourceNameKey, tracing.ResourceClassKey, tracing.LockKindKey, tracing.FencingTokenKey,
		tracing.ZnodePathKey, tracing.SessionIDKey, tracing.QueuePositionKey, tracing.WaitDurationKey, tracing.OutcomeKey); !slices.Equal(got, want) {
		t.Errorf("hold span attributes %v, want %v", got, want)
	}
	if got, want := keys(acquires[0]), sorted(tracing.ResourceNameKey, tracing.ResourceClassKey, tracing.LockKindKey, tracing.ZnodePathKey,
		tracing.SessionIDKey, tracing.QueuePositionKey, tracing.WaitDurationKey, tracing.OutcomeKey, tracing.ErrorTypeKey); !slices.Equal(got, want) {
		t.Errorf("acquire span attributes %v, want %v", got, want)
	}
	for _, s := range []sdktrace.ReadOnlySpan{holds[0], acquires[0]} {
		if n := s.DroppedAttributes(); n != 0 {
			t.Errorf("%s span: %d attributes dropped (invalid or over the limit), want none", s.Name(), n)
		}
	}
	wantAttr(t, acquires[0], tracing.ResourceNameKey, attribute.StringValue("own/2"))
	wantAttr(t, acquires[0], tracing.ZnodePathKey, attribute.StringValue("/p/own-2"))
}
