package tracing_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
)

// These tests feed the Observer event sequences that ZooKeeper produces
// only by chance (a loss reported, from its own goroutine, before the
// acquire that led to it returned) or never (unknown IDs), to check that
// every span ends once and no state is left behind.

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func ev(kind zklock.EventKind, id uint64, ms int) zklock.Event {
	return zklock.Event{Kind: kind, ID: id, Resource: "accounts/42", Resources: []string{"accounts/42"}, Path: "/zklock/accounts%2F42/_c_x-lock-0000000001",
		Token: 77, SessionID: 0x1234, Time: t0.Add(time.Duration(ms) * time.Millisecond)}
}

func lost(id uint64, ms int, reason zklock.LossReason) zklock.Event {
	e := ev(zklock.EventLost, id, ms)
	e.Err = &zklock.LostError{Resource: e.Resource, Reason: reason}
	return e
}

func feed(o *tracing.Observer, evs ...zklock.Event) {
	for _, e := range evs {
		o.Observe(context.Background(), e)
	}
}

var exclusive = []attribute.KeyValue{tracing.ResourceClassKey.String("accounts/{id}"), tracing.LockKindKey.String(tracing.KindExclusive)}

// A loss reported before the acquire's own end, for an acquire that took
// its lock at once (a hold span only) and for one that waited (an acquire
// span and a hold span): the hold span starts at the acquire's time and
// ends there, lost.
func TestObserver_LostBeforeAcquired(t *testing.T) {
	for _, waited := range []bool{false, true} {
		t.Run(fmt.Sprintf("waited=%v", waited), func(t *testing.T) {
			tel := newTelemetry(t)
			o := tel.observer()
			evs := []zklock.Event{ev(zklock.EventStarted, 1, 0), ev(zklock.EventEnqueued, 1, 1)}
			if waited {
				evs[1].Position = 1
				evs = append(evs, ev(zklock.EventPosition, 1, 1))
			}
			feed(o, append(evs, lost(1, 2, zklock.LossNodeDeleted), ev(zklock.EventAcquired, 1, 3))...)

			if k := o.InFlight(); k != 0 {
				t.Errorf("observer still tracks %d locks", k)
			}
			a := tel.ended(tracing.SpanAcquire)
			h := tel.ended(tracing.SpanHold)
			want := 0
			if waited {
				want = 1
			}
			if len(a) != want || len(h) != 1 {
				t.Fatalf("%d acquire and %d hold spans, want %d and 1", len(a), len(h), want)
			}
			if waited {
				wantAttr(t, a[0], tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeAcquired))
			} else {
				wantAttr(t, h[0], tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeAcquired))
			}
			wantAttr(t, h[0], tracing.LostReasonKey, attribute.StringValue("node_deleted"))
			if h[0].Status().Code != codes.Error {
				t.Errorf("hold status %+v", h[0].Status())
			}
			at := t0.Add(3 * time.Millisecond)
			if !h[0].StartTime().Equal(at) || !h[0].EndTime().Equal(at) {
				t.Errorf("hold span [%v, %v], want both at the acquire's time %v", h[0].StartTime(), h[0].EndTime(), at)
			}
			ms := tel.metrics(t)
			if v := sum(t, ms, tracing.MetricHoldActive, exclusive...); v != 0 {
				t.Errorf("%s = %d", tracing.MetricHoldActive, v)
			}
			if v := sum(t, ms, tracing.MetricAcquireActive, exclusive...); v != 0 {
				t.Errorf("%s = %d", tracing.MetricAcquireActive, v)
			}
			if v := sumAll(t, ms, tracing.MetricHoldLost); v != 1 {
				t.Errorf("%s = %d, want 1", tracing.MetricHoldLost, v)
			}
		})
	}
}

// A part of a multi-resource acquire is lost while it waits for another
// part, and the acquire then fails: the caller never had a lease.
func TestObserver_LostThenFailed(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	failed := ev(zklock.EventFailed, 1, 3)
	failed.Err = context.Canceled
	feed(o, ev(zklock.EventStarted, 1, 0), lost(1, 2, zklock.LossPartner), failed)
	if k := o.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
	if n := len(tel.ended(tracing.SpanHold)); n != 0 {
		t.Errorf("%d hold spans for a failed acquire", n)
	}
	if v := sumAll(t, tel.metrics(t), tracing.MetricHoldLost); v != 0 {
		t.Errorf("%s = %d for a lease that never existed", tracing.MetricHoldLost, v)
	}
}

// A lease that comes without an acquire (Lease.Downgrade) gets a hold span
// only; its loss may be reported first, and a loss that no lease claims is
// forgotten after a while.
func TestObserver_LeaseWithoutAcquire(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	down := ev(zklock.EventAcquired, 5, 1)
	down.Mode = zklock.Read
	feed(o, down)
	if k := o.InFlight(); k != 1 {
		t.Fatalf("observer tracks %d locks, want the new lease", k)
	}
	feed(o, ev(zklock.EventReleased, 5, 2))
	h := tel.ended(tracing.SpanHold)
	if len(h) != 1 || len(tel.ended(tracing.SpanAcquire)) != 0 {
		t.Fatalf("%d hold and %d acquire spans, want 1 and 0", len(h), len(tel.ended(tracing.SpanAcquire)))
	}
	wantAttr(t, h[0], tracing.LockKindKey, attribute.StringValue(tracing.KindRead))
	if len(h[0].Links()) != 0 || h[0].Status().Code != codes.Unset {
		t.Errorf("hold span links %v, status %+v", h[0].Links(), h[0].Status())
	}

	// Lost before its Acquired event.
	feed(o, lost(6, 3, zklock.LossNodeDeleted), ev(zklock.EventAcquired, 6, 2))
	if h := tel.ended(tracing.SpanHold); len(h) != 2 || h[1].Status().Code != codes.Error {
		t.Errorf("%d hold spans; want the second ended lost", len(h))
	}
	if k, n := o.InFlight(), o.Orphans(); k != 0 || n != 0 {
		t.Errorf("observer tracks %d locks and %d losses", k, n)
	}

	// A loss nobody claims: kept, then dropped when stale.
	old := lost(7, 0, zklock.LossPartner) // t0 is long past
	recent := lost(8, 0, zklock.LossPartner)
	recent.Time = time.Now()
	feed(o, old)
	if n := o.Orphans(); n != 1 {
		t.Fatalf("%d losses kept, want 1", n)
	}
	feed(o, recent)
	if n := o.Orphans(); n != 1 {
		t.Errorf("%d losses kept, want only the recent one", n)
	}
	ms := tel.metrics(t)
	read := []attribute.KeyValue{tracing.ResourceClassKey.String("accounts/{id}"), tracing.LockKindKey.String(tracing.KindRead)}
	if v := sum(t, ms, tracing.MetricHoldActive, read...); v != 0 {
		t.Errorf("%s{kind=read} = %d", tracing.MetricHoldActive, v)
	}
	if v := sum(t, ms, tracing.MetricHoldActive, exclusive...); v != 0 {
		t.Errorf("%s = %d", tracing.MetricHoldActive, v)
	}
	if v := sumAll(t, ms, tracing.MetricHoldLost); v != 1 {
		t.Errorf("%s = %d, want 1", tracing.MetricHoldLost, v)
	}
}

func TestObserver_UnknownAndRepeatedEvents(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	feed(o, ev(zklock.EventEnqueued, 9, 0), ev(zklock.EventPosition, 9, 0),
		ev(zklock.EventFailed, 9, 0), ev(zklock.EventReleased, 9, 0), lost(9, 0, zklock.LossSessionExpired),
		ev(zklock.EventResumed, 0, 0), ev(zklock.EventKind(99), 9, 0))
	if n := len(tel.spans.Started()); n != 0 {
		t.Errorf("%d spans for events of no acquire", n)
	}
	if n := o.Orphans(); n != 1 {
		t.Errorf("%d losses of unknown leases kept, want 1", n)
	}
	rel1, rel2 := ev(zklock.EventReleased, 1, 4), ev(zklock.EventReleased, 1, 5)
	rel1.Held, rel2.Held = 3*time.Millisecond, 4*time.Millisecond
	feed(o, ev(zklock.EventStarted, 1, 0), ev(zklock.EventAcquired, 1, 1), ev(zklock.EventAcquired, 1, 2),
		ev(zklock.EventFailed, 1, 3), rel1, rel2, lost(1, 6, zklock.LossSessionExpired))
	if n, m := len(tel.ended(tracing.SpanAcquire)), len(tel.ended(tracing.SpanHold)); n != 0 || m != 1 {
		t.Errorf("%d acquire and %d hold spans, want 0 and 1", n, m)
	}
	if h := tel.ended(tracing.SpanHold); len(h) == 1 && h[0].Status().Code != codes.Unset {
		t.Errorf("the hold span ended with %+v, want a release", h[0].Status())
	}
	if k := o.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
	ms := tel.metrics(t)
	if v := sumAll(t, ms, tracing.MetricHoldLost); v != 0 {
		t.Errorf("%s = %d after a release", tracing.MetricHoldLost, v)
	}
	if dp, _ := histogram(t, ms, tracing.MetricHoldDuration, exclusive...); dp.Count != 1 || dp.Sum != rel1.Held.Seconds() {
		t.Errorf("%s: count %d sum %v, want the first release only (%v)", tracing.MetricHoldDuration, dp.Count, dp.Sum, rel1.Held.Seconds())
	}
}

func TestObserver_Outcomes(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	wrap := func(err error) error { return fmt.Errorf("zklock: acquire %q: %w", "accounts/42", err) }
	cases := []struct {
		err     error
		want    string
		errType string
	}{
		{wrap(zklock.ErrLocked), tracing.OutcomeBusy, "locked"},
		{wrap(zklock.ErrWaitTimeout), tracing.OutcomeTimeout, "wait_timeout"},
		{wrap(context.DeadlineExceeded), tracing.OutcomeTimeout, "deadline_exceeded"},
		{wrap(fmt.Errorf("%w: %w", zklock.ErrUnavailable, context.DeadlineExceeded)), tracing.OutcomeTimeout, "unavailable"},
		{wrap(fmt.Errorf("%w: %w", zklock.ErrUnavailable, context.Canceled)), tracing.OutcomeCanceled, "unavailable"},
		{wrap(context.Canceled), tracing.OutcomeCanceled, "canceled"},
		{wrap(zklock.ErrClosed), tracing.OutcomeError, "closed"},
		{wrap(zklock.ErrNoAuth), tracing.OutcomeError, "no_auth"},
		{errors.New("boom"), tracing.OutcomeError, "_OTHER"},
		{nil, tracing.OutcomeError, "_OTHER"},
	}
	for i, tc := range cases {
		tel.spans.Reset()
		f := ev(zklock.EventFailed, uint64(i+1), 5)
		f.Err = tc.err
		feed(o, ev(zklock.EventStarted, uint64(i+1), 0), f)
		s := tel.ended(tracing.SpanAcquire)
		if len(s) != 1 {
			t.Fatalf("%v: %d spans", tc.err, len(s))
		}
		if !s[0].StartTime().Equal(t0) {
			t.Errorf("%v: the span starts at %v, want the acquire's start %v", tc.err, s[0].StartTime(), t0)
		}
		wantAttr(t, s[0], tracing.OutcomeKey, attribute.StringValue(tc.want))
		wantAttr(t, s[0], tracing.ErrorTypeKey, attribute.StringValue(tc.errType))
		if s[0].Status().Code != codes.Error {
			t.Errorf("%v: status %+v", tc.err, s[0].Status())
		}
	}
	if k := o.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

func TestObserver_Multi(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	start := ev(zklock.EventStarted, 1, 0)
	start.Resource, start.Resources = "accounts/1,ledger/2024-01", []string{"accounts/1", "ledger/2024-01"}
	feed(o, start, ev(zklock.EventFailed, 1, 1))
	s := tel.ended(tracing.SpanAcquire)
	if len(s) != 1 {
		t.Fatalf("%d spans", len(s))
	}
	wantAttr(t, s[0], tracing.LockKindKey, attribute.StringValue(tracing.KindMulti))
	wantAttr(t, s[0], tracing.ResourceClassKey, attribute.StringValue("accounts/{id},ledger/2024-01"))

	// One resource whose name has a comma is not a multi-resource lock.
	tel.spans.Reset()
	start = ev(zklock.EventStarted, 2, 0)
	start.Resource, start.Resources = "a,b", []string{"a,b"}
	feed(o, start, ev(zklock.EventFailed, 2, 1))
	if s = tel.ended(tracing.SpanAcquire); len(s) != 1 {
		t.Fatalf("%d spans", len(s))
	}
	wantAttr(t, s[0], tracing.LockKindKey, attribute.StringValue(tracing.KindExclusive))
}

// An Observer fed an ID that is already in progress (zklock's IDs are
// unique in the process: a Locker of one's own might not) says so through
// otel.Handle.
func TestObserver_IDReused(t *testing.T) {
	var mu sync.Mutex
	var errs []error
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}))
	tel := newTelemetry(t)
	o := tel.observer()
	feed(o, ev(zklock.EventStarted, 1, 0), ev(zklock.EventStarted, 1, 1), ev(zklock.EventAcquired, 1, 2), ev(zklock.EventReleased, 1, 3))
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "must be unique") {
		t.Errorf("errors handled: %v", errs)
	}
	if k := o.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

// Losses race with the acquires that produced them, from other goroutines;
// whichever comes first, each lease gets one hold span, ended lost.
func TestObserver_ConcurrentLoss(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		id := uint64(i + 1)
		o.Observe(context.Background(), ev(zklock.EventStarted, id, 0))
		wg.Go(func() {
			feed(o, ev(zklock.EventEnqueued, id, 1), ev(zklock.EventPosition, id, 2), ev(zklock.EventAcquired, id, 3))
		})
		wg.Go(func() { feed(o, lost(id, 4, zklock.LossSessionExpired)) })
		wg.Go(func() { feed(o, ev(zklock.EventSuspended, 0, 3)) })
	}
	wg.Wait()
	if k := o.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
	holds := tel.ended(tracing.SpanHold)
	if len(holds) != n || len(tel.ended(tracing.SpanAcquire)) != n {
		t.Fatalf("%d hold and %d acquire spans, want %d each", len(holds), len(tel.ended(tracing.SpanAcquire)), n)
	}
	for _, h := range holds {
		if h.Status().Code != codes.Error {
			t.Fatalf("hold span status %+v, want error", h.Status())
		}
	}
	ms := tel.metrics(t)
	if v := sumAll(t, ms, tracing.MetricHoldLost); v != n {
		t.Errorf("%s = %d, want %d", tracing.MetricHoldLost, v, n)
	}
	if v := sum(t, ms, tracing.MetricHoldActive, exclusive...); v != 0 {
		t.Errorf("%s = %d", tracing.MetricHoldActive, v)
	}
	if v := sum(t, ms, tracing.MetricAcquireActive, exclusive...); v != 0 {
		t.Errorf("%s = %d", tracing.MetricAcquireActive, v)
	}
}
