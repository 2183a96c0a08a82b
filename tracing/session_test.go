package tracing_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// When the connection drops and the client gets back to its session, the
// open spans show it: a held lease's hold span, and a waiting acquire's
// acquire span, which the outage opens.
func TestIntegration_SuspendResume(t *testing.T) {
	proxy, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	tel := newTelemetry(t)
	obs := tel.observer()
	seen := newEvents(zklock.EventEnqueued, zklock.EventSuspended, zklock.EventResumed)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{proxy.Addr()}, zklock.WithRoot(zktest.UniqueRoot(t)),
		zklock.WithObserver(obs), zklock.WithObserver(seen))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	holder, err := c.Acquire(ctx, "accounts/9")
	if err != nil {
		t.Fatal(err)
	}
	seen.next(t, zklock.EventEnqueued)
	waiting := inBackground(func() (*zklock.Lease, error) { return c.Acquire(ctx, "accounts/9") })
	if e := seen.next(t, zklock.EventEnqueued); e.Position != 1 {
		t.Fatalf("waiter enqueued at %d", e.Position)
	}

	sid := c.SessionID()
	proxy.DropAll()
	// The two events come from separate goroutines, in either order.
	got := map[zklock.EventKind]bool{}
	for len(got) < 2 {
		select {
		case e := <-seen.ch:
			if e.Kind == zklock.EventSuspended || e.Kind == zklock.EventResumed {
				got[e.Kind] = true
			}
		case <-time.After(patience):
			t.Fatalf("saw %v of suspended and resumed", got)
		}
	}
	if c.SessionID() != sid {
		t.Fatal("the session changed: the test wants a resumed session")
	}

	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	var r acquisition
	select {
	case r = <-waiting:
	case <-time.After(patience):
		t.Fatal("the waiter never acquired")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := r.l.Release(ctx); err != nil {
		t.Fatal(err)
	}

	holds := tel.waitEnded(t, tracing.SpanHold, 2)
	// The holder took its lock at once: no acquire span. The waiter's
	// acquire span was opened by the outage (enqueued behind the holder,
	// it had not yet learned that it waited).
	acquires := tel.waitEnded(t, tracing.SpanAcquire, 1)
	if len(acquires) != 1 {
		t.Errorf("%d acquire spans, want the waiter's", len(acquires))
	}
	if names := eventNames(acquires[0]); len(names) == 0 || names[0] != tracing.EventEnqueued {
		t.Errorf("the waiter's acquire events %v, want %s first", names, tracing.EventEnqueued)
	}
	check := func(what string, s sdktrace.ReadOnlySpan) {
		t.Helper()
		names := eventNames(s)
		if !slices.Contains(names, tracing.EventSuspended) || !slices.Contains(names, tracing.EventResumed) {
			t.Errorf("%s events %v, want %s and %s", what, names, tracing.EventSuspended, tracing.EventResumed)
		}
		for _, e := range s.Events() {
			if e.Name == tracing.EventSuspended || e.Name == tracing.EventResumed {
				if v, _ := lookup(e.Attributes, tracing.SessionIDKey); v != attribute.StringValue(session(sid)) {
					t.Errorf("%s: %s event session %s, want %s", what, e.Name, v.String(), session(sid))
				}
			}
		}
	}
	checked := 0
	for _, s := range holds {
		if v, _ := attr(s, tracing.FencingTokenKey); v.AsInt64() == holder.Token() {
			check("the held lease's hold span", s)
			checked++
		}
	}
	for _, s := range acquires {
		if v, _ := attr(s, tracing.QueuePositionKey); v.AsInt64() == 1 {
			check("the waiter's acquire span", s)
			checked++
		}
	}
	if checked != 2 {
		t.Errorf("found %d of the 2 spans open during the outage", checked)
	}
	if k := obs.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}
