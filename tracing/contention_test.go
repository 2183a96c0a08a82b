package tracing_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Four contenders queue on one resource, one after the other; each is let
// go in turn. The spans must show the queue: the first takes the lock at
// once (a hold span only, with its wait), each of the others has an
// acquire span with its enqueue position 1..3 and a hand-off event
// (position 0), and a hold span linked to it; waits grow in that order.
func TestIntegration_Contention(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs last: after the client is closed

	tel := newTelemetry(t)
	obs := tel.observer()
	seen := newEvents(zklock.EventStarted, zklock.EventEnqueued)
	root := zktest.UniqueRoot(t)
	c := connect(t, root, zklock.WithObserver(obs), zklock.WithObserver(seen))

	const n = 4
	const resource = "accounts/42"
	ctx, batch := tel.tracer().Start(context.Background(), "batch")

	type result struct {
		i     int
		lease *zklock.Lease
		err   error
	}
	acquired := make(chan result, n)
	release := make([]chan struct{}, n)
	for i := range release {
		release[i] = make(chan struct{})
	}
	var once [n]sync.Once
	letGo := func(i int) { once[i].Do(func() { close(release[i]) }) }
	var wg sync.WaitGroup
	defer func() { // on failure, let every contender finish
		for i := range n {
			letGo(i)
		}
		wg.Wait()
	}()

	contenders := make([]trace.Span, n)
	starts := make([]time.Time, n)
	for i := range n {
		cctx, span := tel.tracer().Start(ctx, fmt.Sprintf("contender-%d", i))
		contenders[i] = span
		wg.Go(func() {
			defer span.End()
			l, err := c.Acquire(cctx, resource)
			acquired <- result{i, l, err}
			if err != nil {
				return
			}
			<-release[i]
			if err := l.Release(cctx); err != nil {
				t.Errorf("contender %d: release: %v", i, err)
			}
		})
		// The next contender starts once this one is in the queue.
		starts[i] = seen.next(t, zklock.EventStarted).Time
		if e := seen.next(t, zklock.EventEnqueued); e.Position != i {
			t.Fatalf("contender %d enqueued at position %d", i, e.Position)
		}
	}

	for i := range n {
		var r result
		select {
		case r = <-acquired:
		case <-time.After(patience):
			t.Fatalf("timed out waiting for contender %d to acquire", i)
		}
		if r.err != nil {
			t.Fatalf("contender %d: %v", r.i, r.err)
		}
		if r.i != i {
			t.Fatalf("contender %d acquired in turn %d", r.i, i)
		}
		if i+1 < n {
			// Hold for longer than the gap between this contender's start
			// and the next one's: then the next one waits strictly longer,
			// however slow the machine.
			gap := starts[i+1].Sub(starts[i])
			if d := time.Until(r.lease.Acquired().Add(gap + time.Millisecond)); d > 0 {
				time.Sleep(d)
			}
		}
		letGo(i)
	}
	wg.Wait()
	batch.End()

	// The first contender took the lock at once: it has a hold span only,
	// which carries the acquire's wait and outcome. Every other one waited:
	// an acquire span, and a hold span linked to it.
	acquires := byParent(t, tel.ended(tracing.SpanAcquire), contenders[1:])
	holds := byParent(t, tel.ended(tracing.SpanHold), contenders)
	var waits [n]float64
	var tokens [n]int64
	for i := range n {
		h := holds[i]
		if h.SpanKind() != trace.SpanKindInternal {
			t.Errorf("contender %d: hold span kind %v, want internal", i, h.SpanKind())
		}
		spans := []sdktrace.ReadOnlySpan{h}
		if i > 0 {
			spans = append(spans, acquires[i-1])
		}
		for _, s := range spans {
			if s.SpanKind() != trace.SpanKindInternal {
				t.Errorf("contender %d: %s span kind %v, want internal", i, s.Name(), s.SpanKind())
			}
			wantAttr(t, s, tracing.ResourceNameKey, attribute.StringValue(resource))
			wantAttr(t, s, tracing.ResourceClassKey, attribute.StringValue("accounts/{id}"))
			wantAttr(t, s, tracing.LockKindKey, attribute.StringValue(tracing.KindExclusive))
			if s.Status().Code != codes.Unset {
				t.Errorf("contender %d: %s status %v", i, s.Name(), s.Status())
			}
			if sc := s.InstrumentationScope(); sc.Name != tracing.ScopeName || sc.Version != tracing.Version() {
				t.Errorf("scope %s %s, want %s %s", sc.Name, sc.Version, tracing.ScopeName, tracing.Version())
			}
		}
		// The lease's node, session and token are on its hold span, once.
		wantAttr(t, h, tracing.SessionIDKey, attribute.StringValue(session(c.SessionID())))
		if p, _ := attr(h, tracing.ZnodePathKey); !strings.HasPrefix(p.AsString(), root+"/") {
			t.Errorf("contender %d: hold path %q, want one under %s", i, p.AsString(), root)
		}
		tokens[i] = mustAttr(t, h, tracing.FencingTokenKey).AsInt64()
		if !h.EndTime().After(h.StartTime()) {
			t.Errorf("contender %d: hold span has no duration", i)
		}

		if i == 0 {
			wantAttr(t, h, tracing.QueuePositionKey, attribute.IntValue(0))
			wantAttr(t, h, tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeAcquired))
			waits[0] = mustAttr(t, h, tracing.WaitDurationKey).AsFloat64()
			if links := h.Links(); len(links) != 0 {
				t.Errorf("contender 0: hold links %v, want none (it has no acquire span)", links)
			}
			if names := eventNames(h); len(names) != 0 {
				t.Errorf("contender 0: hold events %v, want none", names)
			}
			continue
		}

		a := acquires[i-1]
		wantAttr(t, a, tracing.QueuePositionKey, attribute.IntValue(i))
		wantAttr(t, a, tracing.OutcomeKey, attribute.StringValue(tracing.OutcomeAcquired))
		waits[i] = mustAttr(t, a, tracing.WaitDurationKey).AsFloat64()
		for _, k := range []attribute.Key{tracing.SessionIDKey, tracing.ZnodePathKey, tracing.FencingTokenKey} {
			if v, ok := attr(a, k); ok {
				t.Errorf("contender %d: the acquire span repeats the hold span's %s=%s", i, k, v.String())
			}
		}
		for _, k := range []attribute.Key{tracing.QueuePositionKey, tracing.WaitDurationKey, tracing.OutcomeKey} {
			if v, ok := attr(h, k); ok {
				t.Errorf("contender %d: the hold span repeats the acquire span's %s=%s", i, k, v.String())
			}
		}
		// Opened when the acquire learned it waited, the span still
		// starts when the acquire started.
		if !a.StartTime().Equal(starts[i]) {
			t.Errorf("contender %d: acquire span starts at %v, the acquire at %v", i, a.StartTime(), starts[i])
		}

		// Events: enqueued at i, then the hand-off (position 0).
		evs := a.Events()
		if len(evs) == 0 || evs[0].Name != tracing.EventEnqueued {
			t.Fatalf("contender %d: acquire events %v, want %s first", i, eventNames(a), tracing.EventEnqueued)
		}
		last := -1
		for j, e := range evs {
			p, ok := lookup(e.Attributes, tracing.QueuePositionKey)
			if !ok {
				t.Fatalf("contender %d: event %s has no position", i, e.Name)
			}
			pos := int(p.AsInt64())
			switch {
			case j == 0 && pos != i:
				t.Errorf("contender %d: enqueued at position %d", i, pos)
			case j > 0 && (e.Name != tracing.EventPosition || pos >= last):
				t.Errorf("contender %d: event %d is %s at %d after %d; want the position to fall", i, j, e.Name, pos, last)
			}
			if e.Time.Before(a.StartTime()) || e.Time.After(a.EndTime()) {
				t.Errorf("contender %d: event %s at %v, outside its span [%v, %v]", i, e.Name, e.Time, a.StartTime(), a.EndTime())
			}
			last = pos
		}
		if last != 0 {
			t.Errorf("contender %d: last position %d, want a hand-off event at position 0", i, last)
		}
		if len(evs) < 2 {
			t.Errorf("contender %d: events %v, want a hand-off after the enqueue", i, eventNames(a))
		}

		// The hold span follows the acquire span, linked to it.
		if links := h.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != a.SpanContext().SpanID() {
			t.Errorf("contender %d: hold links %v, want the acquire span", i, links)
		}
		if !h.StartTime().Equal(a.EndTime()) {
			t.Errorf("contender %d: hold starts at %v, acquire ends at %v", i, h.StartTime(), a.EndTime())
		}
	}
	for i := 1; i < n; i++ {
		if waits[i] <= waits[i-1] {
			t.Errorf("waits %v are not increasing with the queue position", waits)
		}
		if tokens[i] <= tokens[i-1] {
			t.Errorf("fencing tokens %v are not increasing", tokens)
		}
	}

	ms := tel.metrics(t)
	class := []attribute.KeyValue{tracing.ResourceClassKey.String("accounts/{id}"), tracing.LockKindKey.String(tracing.KindExclusive)}
	wait, ok := histogram(t, ms, tracing.MetricAcquireDuration, append(class, tracing.OutcomeKey.String(tracing.OutcomeAcquired))...)
	if !ok || wait.Count != n {
		t.Errorf("%s: %+v, want %d acquired", tracing.MetricAcquireDuration, wait, n)
	}
	var total float64
	for _, w := range waits {
		total += w
	}
	if diff := wait.Sum - total; diff > 1e-6 || diff < -1e-6 {
		t.Errorf("%s sum %v, want the spans' total %v", tracing.MetricAcquireDuration, wait.Sum, total)
	}
	if hold, ok := histogram(t, ms, tracing.MetricHoldDuration, class...); !ok || hold.Count != n {
		t.Errorf("%s: %+v, want %d", tracing.MetricHoldDuration, hold, n)
	}
	if v := sum(t, ms, tracing.MetricAcquireActive, class...); v != 0 {
		t.Errorf("%s = %d after every acquire ended", tracing.MetricAcquireActive, v)
	}
	if v := sum(t, ms, tracing.MetricHoldActive, class...); v != 0 {
		t.Errorf("%s = %d after every release", tracing.MetricHoldActive, v)
	}
	if v := sumAll(t, ms, tracing.MetricHoldLost); v != 0 {
		t.Errorf("%s = %d, want none", tracing.MetricHoldLost, v)
	}
	if k := obs.InFlight(); k != 0 {
		t.Errorf("observer still tracks %d locks", k)
	}
}

// byParent orders spans by the parent span they belong to, one each.
func byParent(t *testing.T, spans []sdktrace.ReadOnlySpan, parents []trace.Span) []sdktrace.ReadOnlySpan {
	t.Helper()
	out := make([]sdktrace.ReadOnlySpan, len(parents))
	for _, s := range spans {
		for i, p := range parents {
			if s.Parent().SpanID() == p.SpanContext().SpanID() {
				if out[i] != nil {
					t.Fatalf("two %s spans under parent %d", s.Name(), i)
				}
				out[i] = s
			}
		}
	}
	for i, s := range out {
		if s == nil {
			t.Fatalf("no span under parent %d among %d", i, len(spans))
		}
	}
	return out
}

func mustAttr(t *testing.T, s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	t.Helper()
	v, ok := attr(s, key)
	if !ok {
		t.Fatalf("%s span has no %s", s.Name(), key)
	}
	return v
}
