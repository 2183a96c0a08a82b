package tracing_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"

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
