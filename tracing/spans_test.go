package tracing_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// An acquire that takes its lock at once makes one span: the hold span, a
// child of the caller's span, with the lease's node, session and token and
// the acquire's wait, queue position and outcome, and no link.
func TestIntegration_Uncontended(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer()
	seen := newEvents(zklock.EventStarted, zklock.EventAcquired)
	root := zktest.UniqueRoot(t)
	c := connect(t, root, zklock.WithObserver(obs), zklock.WithObserver(seen))
	ctx, parent := tel.tracer().Start(context.Background(), "request")
	l, err := c.Acquire(ctx, "accounts/1")
	if err != nil {
		t.Fatal(err)
	}
	started, acquired := seen.next(t, zklock.EventStarted), seen.next(t, zklock.EventAcquired)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	parent.End()

	if n := len(tel.spans.Started()); n != 2 {
		t.Errorf("%d spans started, want 2: the caller's and the hold span", n)
	}
	if n := len(tel.ended(tracing.SpanAcquire)); n != 0 {
		t.Errorf("%d acquire spans, want none", n)
	}
	h := tel.waitEnded(t, tracing.SpanHold, 1)[0]
	if h.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Error("the hold span is not a child of the caller's span")
	}
	wantAttr(t, h, tracing.ResourceNameKey, attribute.StringValue("accounts/1"))
	wantAttr(t, h, tracing.ResourceClassKey, attribute.StringValue("accounts/{id}"))
	wantAttr(t, h, tracing.LockKindKey, attribute.StringValue(tracing.KindExclusive))
	wantAttr(t, h, tracing.FencingTokenKey, attribute.Int64Value(l.Token()))
	wantAttr(t, h, tracing.ZnodePathKey, attribute.StringValue(l.Path()))
	wantAttr(t, h, tracing.SessionIDKey, attribute.StringValue(session(c.SessionID())))
	wantAttr(t, h, tracing.QueuePositionKey, attribute.IntValue(0))
	wantAttr(t, h, tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeAcquired))
	wantAttr(t, h, tracing.WaitDurationKey, attribute.Float64Value(acquired.Wait.Seconds()))
	if len(h.Links()) != 0 || len(h.Events()) != 0 || h.Status().Code != codes.Unset {
		t.Errorf("hold span links %v, events %v, status %+v; want none, none, unset", h.Links(), eventNames(h), h.Status())
	}
	// Its times are the SDK's clock, taken as zklock reports the events:
	// not before the acquire's end, and within the caller's span.
	if h.StartTime().Before(acquired.Time) || h.StartTime().Before(started.Time) || !h.EndTime().After(h.StartTime()) {
		t.Errorf("hold span [%v, %v], acquired at %v", h.StartTime(), h.EndTime(), acquired.Time)
	}
	ms := tel.metrics(t)
	class := []attribute.KeyValue{tracing.ResourceClassKey.String("accounts/{id}"), tracing.LockKindKey.String(tracing.KindExclusive)}
	if dp, _ := histogram(t, ms, tracing.MetricAcquireDuration, append(class, tracing.OutcomeKey.String(tracing.OutcomeAcquired))...); dp.Count != 1 || dp.Sum != acquired.Wait.Seconds() {
		t.Errorf("%s: count %d sum %v, want 1 and %v", tracing.MetricAcquireDuration, dp.Count, dp.Sum, acquired.Wait.Seconds())
	}
	if dp, _ := histogram(t, ms, tracing.MetricHoldDuration, class...); dp.Count != 1 {
		t.Errorf("%s: count %d, want 1", tracing.MetricHoldDuration, dp.Count)
	}
	if k := obs.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

// A reader enqueued behind another reader, or a semaphore's second
// holder, is behind a node in the queue but does not wait: it makes no
// acquire span, and its hold span names the position it held at.
func TestIntegration_HeldAtOnceBehindOthers(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer()
	c := connect(t, zktest.UniqueRoot(t), zklock.WithObserver(obs))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts []zklock.AcquireOption
	}{
		{"read", []zklock.AcquireOption{zklock.Read}},
		{"semaphore", []zklock.AcquireOption{zklock.Limit(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel.spans.Reset()
			first, err := c.Acquire(ctx, "reports/"+tc.name, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			second, err := c.Acquire(ctx, "reports/"+tc.name, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range []*zklock.Lease{second, first} {
				if err := l.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(tel.ended(tracing.SpanAcquire)); n != 0 {
				t.Errorf("%d acquire spans, want none", n)
			}
			holds := tel.waitEnded(t, tracing.SpanHold, 2)
			if len(holds) != 2 {
				t.Fatalf("%d hold spans, want 2", len(holds))
			}
			wantAttr(t, holds[0], tracing.FencingTokenKey, attribute.Int64Value(second.Token()))
			wantAttr(t, holds[0], tracing.QueuePositionKey, attribute.IntValue(1))
			wantAttr(t, holds[0], tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeAcquired))
			wantAttr(t, holds[1], tracing.QueuePositionKey, attribute.IntValue(0))
		})
	}
	if k := obs.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

// AcquireAll that takes its first part at once and waits for its second:
// the acquire span shows both enqueues, each naming its part (the first
// one reported before the span was opened), and the hand-off; the hold
// span is linked to it.
func TestIntegration_MultiWaits(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer()
	seen := newEvents(zklock.EventStarted, zklock.EventEnqueued)
	c := connect(t, zktest.UniqueRoot(t), zklock.WithObserver(obs), zklock.WithObserver(seen))
	ctx := context.Background()
	holder, err := c.Acquire(ctx, "accounts/2")
	if err != nil {
		t.Fatal(err)
	}
	seen.next(t, zklock.EventEnqueued)
	done := inBackground(func() (*zklock.Lease, error) { return c.AcquireAll(ctx, []string{"accounts/1", "accounts/2"}) })
	start := seen.next(t, zklock.EventStarted).Time
	if e := seen.next(t, zklock.EventEnqueued); e.Resource != "accounts/1" || e.Position != 0 {
		t.Fatalf("first enqueue: %s at %d", e.Resource, e.Position)
	}
	if e := seen.next(t, zklock.EventEnqueued); e.Resource != "accounts/2" || e.Position != 1 {
		t.Fatalf("second enqueue: %s at %d", e.Resource, e.Position)
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := r.l.Release(ctx); err != nil {
		t.Fatal(err)
	}

	a := tel.waitEnded(t, tracing.SpanAcquire, 1)[0]
	holds := tel.waitEnded(t, tracing.SpanHold, 2)
	h := holds[len(holds)-1]
	wantAttr(t, a, tracing.LockKindKey, attribute.StringValue(tracing.KindMulti))
	wantAttr(t, a, tracing.ResourceNameKey, attribute.StringValue("accounts/1,accounts/2"))
	wantAttr(t, a, tracing.QueuePositionKey, attribute.IntValue(0)) // at the first enqueue
	wantAttr(t, a, tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeAcquired))
	if !a.StartTime().Equal(start) {
		t.Errorf("acquire span starts at %v, the acquire at %v", a.StartTime(), start)
	}
	type qe struct {
		name, part string
		pos        int64
	}
	var got []qe
	for _, e := range a.Events() {
		part, _ := lookup(e.Attributes, tracing.ResourceNameKey)
		pos, _ := lookup(e.Attributes, tracing.QueuePositionKey)
		got = append(got, qe{e.Name, part.AsString(), pos.AsInt64()})
	}
	want := []qe{{tracing.EventEnqueued, "accounts/1", 0}, {tracing.EventEnqueued, "accounts/2", 1}, {tracing.EventPosition, "accounts/2", 0}}
	if len(got) != len(want) {
		t.Fatalf("acquire events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("acquire event %d: %v, want %v", i, got[i], want[i])
		}
	}
	wantAttr(t, h, tracing.LockKindKey, attribute.StringValue(tracing.KindMulti))
	if links := h.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != a.SpanContext().SpanID() {
		t.Errorf("hold links %v, want the acquire span", links)
	}
	if _, ok := attr(h, tracing.OutcomeKey); ok {
		t.Error("the hold span repeats the acquire span's outcome")
	}
	if k := obs.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

// The acquire span of an acquire that waited is opened when it learns it
// waited (its position changed) but shows the acquire whole: from its
// start, with the queue events reported before, at their times.
func TestObserver_WaitedSpans(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	enq := ev(zklock.EventEnqueued, 1, 1)
	enq.Position = 2
	pos1 := ev(zklock.EventPosition, 1, 5)
	pos1.Position = 1
	feed(o, ev(zklock.EventStarted, 1, 0), enq)
	if n := len(tel.spans.Started()); n != 0 {
		t.Fatalf("%d spans started at the enqueue: behind others, it may yet hold at once", n)
	}
	feed(o, pos1)
	if n := len(tel.spans.Started()); n != 1 {
		t.Fatalf("%d spans started once the position changed, want the acquire span", n)
	}
	feed(o, ev(zklock.EventPosition, 1, 8), ev(zklock.EventAcquired, 1, 9), ev(zklock.EventReleased, 1, 10))

	a, h := tel.ended(tracing.SpanAcquire), tel.ended(tracing.SpanHold)
	if len(a) != 1 || len(h) != 1 {
		t.Fatalf("%d acquire and %d hold spans, want 1 and 1", len(a), len(h))
	}
	if !a[0].StartTime().Equal(t0) || !a[0].EndTime().Equal(t0.Add(9*time.Millisecond)) {
		t.Errorf("acquire span [%v, %v], want [%v, %v]", a[0].StartTime(), a[0].EndTime(), t0, t0.Add(9*time.Millisecond))
	}
	evs := a[0].Events()
	if len(evs) != 3 {
		t.Fatalf("acquire events %v, want enqueued, position, position", eventNames(a[0]))
	}
	for i, want := range []struct {
		name string
		pos  int64
		at   time.Time // zero: the SDK's clock
	}{
		{tracing.EventEnqueued, 2, t0.Add(time.Millisecond)},
		{tracing.EventPosition, 1, t0.Add(5 * time.Millisecond)},
		{tracing.EventPosition, 0, time.Time{}},
	} {
		p, _ := lookup(evs[i].Attributes, tracing.QueuePositionKey)
		if evs[i].Name != want.name || p.AsInt64() != want.pos || !want.at.IsZero() && !evs[i].Time.Equal(want.at) {
			t.Errorf("event %d: %s at %d, %v; want %s at %d, %v", i, evs[i].Name, p.AsInt64(), evs[i].Time, want.name, want.pos, want.at)
		}
	}
	wantAttr(t, a[0], tracing.QueuePositionKey, attribute.IntValue(2))
	wantAttr(t, a[0], tracing.WaitDurationKey, attribute.Float64Value(0))
	wantAttr(t, a[0], tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeAcquired))
	if !h[0].StartTime().Equal(a[0].EndTime()) {
		t.Errorf("hold starts at %v, acquire ends at %v", h[0].StartTime(), a[0].EndTime())
	}
	if links := h[0].Links(); len(links) != 1 || links[0].SpanContext.SpanID() != a[0].SpanContext().SpanID() {
		t.Errorf("hold links %v, want the acquire span", links)
	}
	for _, k := range []attribute.Key{tracing.QueuePositionKey, tracing.WaitDurationKey, tracing.OutcomeKey} {
		if _, ok := attr(h[0], k); ok {
			t.Errorf("the hold span repeats the acquire span's %s", k)
		}
	}
}

// An acquire enqueued behind others that holds at once (a reader behind
// readers) makes no acquire span; one that has to enqueue again (its node
// vanished) does, and the second enqueue names its new node.
func TestObserver_EnqueuedBehindOrAgain(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	enq := ev(zklock.EventEnqueued, 1, 1)
	enq.Position = 2
	feed(o, ev(zklock.EventStarted, 1, 0), enq, ev(zklock.EventAcquired, 1, 2), ev(zklock.EventReleased, 1, 3))
	if a := tel.ended(tracing.SpanAcquire); len(a) != 0 {
		t.Errorf("%d acquire spans for an acquire held at once", len(a))
	}
	h := tel.ended(tracing.SpanHold)
	if len(h) != 1 {
		t.Fatalf("%d hold spans", len(h))
	}
	wantAttr(t, h[0], tracing.QueuePositionKey, attribute.IntValue(2))

	tel.spans.Reset()
	again := ev(zklock.EventEnqueued, 2, 3)
	again.Path = "/zklock/accounts%2F42/_c_y-lock-0000000002"
	feed(o, ev(zklock.EventStarted, 2, 0), ev(zklock.EventEnqueued, 2, 1), again, ev(zklock.EventAcquired, 2, 4), ev(zklock.EventReleased, 2, 5))
	a := tel.ended(tracing.SpanAcquire)
	if len(a) != 1 {
		t.Fatalf("%d acquire spans for an acquire that enqueued again, want 1", len(a))
	}
	evs := a[0].Events()
	if len(evs) != 2 || evs[0].Name != tracing.EventEnqueued || evs[1].Name != tracing.EventEnqueued {
		t.Fatalf("acquire events %v, want two enqueues", eventNames(a[0]))
	}
	if _, ok := lookup(evs[0].Attributes, tracing.ZnodePathKey); ok {
		t.Error("the first enqueue names its node")
	}
	if p, _ := lookup(evs[1].Attributes, tracing.ZnodePathKey); p.AsString() != again.Path {
		t.Errorf("the second enqueue names %q, want %q", p.AsString(), again.Path)
	}
	if k := o.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

// A session event opens the acquire span of an acquire in progress, so
// that the trace shows the outage it went through; an acquire of another
// session is left alone.
func TestObserver_SuspendedOpensAcquire(t *testing.T) {
	tel := newTelemetry(t)
	o := tel.observer()
	other := ev(zklock.EventEnqueued, 2, 1)
	other.SessionID = 0x9999
	susp, res := ev(zklock.EventSuspended, 0, 2), ev(zklock.EventResumed, 0, 3)
	feed(o, ev(zklock.EventStarted, 1, 0), ev(zklock.EventEnqueued, 1, 1), ev(zklock.EventStarted, 2, 0), other, susp, res,
		ev(zklock.EventAcquired, 1, 4), ev(zklock.EventReleased, 1, 5))
	other.Kind, other.Time = zklock.EventAcquired, t0.Add(4*time.Millisecond)
	feed(o, other, ev(zklock.EventReleased, 2, 5))
	a := tel.ended(tracing.SpanAcquire)
	if len(a) != 1 {
		t.Fatalf("%d acquire spans, want the suspended acquire's", len(a))
	}
	if got, want := eventNames(a[0]), []string{tracing.EventEnqueued, tracing.EventSuspended, tracing.EventResumed}; !slices.Equal(got, want) {
		t.Errorf("acquire events %v, want %v", got, want)
	}
	if !a[0].StartTime().Equal(t0) || !a[0].Events()[1].Time.Equal(susp.Time) {
		t.Errorf("acquire span starts at %v, suspended at %v; want %v, %v", a[0].StartTime(), a[0].Events()[1].Time, t0, susp.Time)
	}
	if h := tel.ended(tracing.SpanHold); len(h) != 2 || len(h[0].Links()) != 1 || len(h[1].Links()) != 0 {
		t.Errorf("%d hold spans; want 2, the first linked to its acquire span", len(h))
	}
	if k := o.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

// Under a sampler that records nothing, acquires that wait, fail or are
// suspended make no span, and leave nothing behind.
func TestObserver_NotSampled(t *testing.T) {
	tel := newTelemetry(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	o := tracing.NewObserver(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(tel.mp))
	enq := ev(zklock.EventEnqueued, 1, 1)
	enq.Position = 1
	failed := ev(zklock.EventFailed, 2, 2)
	failed.Err = zklock.ErrLocked
	feed(o, ev(zklock.EventStarted, 1, 0), enq, ev(zklock.EventPosition, 1, 2), ev(zklock.EventAcquired, 1, 3),
		ev(zklock.EventStarted, 2, 0), ev(zklock.EventEnqueued, 2, 1), failed,
		ev(zklock.EventStarted, 3, 0), ev(zklock.EventSuspended, 0, 1), ev(zklock.EventFailed, 3, 2),
		ev(zklock.EventReleased, 1, 4))
	if n := len(spans.Started()); n != 0 {
		t.Errorf("%d spans recorded, want none", n)
	}
	if k := o.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
	if dp, _ := histogram(t, tel.metrics(t), tracing.MetricAcquireDuration, append(exclusive, tracing.OutcomeKey.String(tracing.OutcomeAcquired))...); dp.Count != 1 {
		t.Errorf("acquired count %d, want 1", dp.Count)
	}
}
