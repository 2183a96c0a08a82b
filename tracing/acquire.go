package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/zklockkit/zklockkit/zklock"
)

// started begins the bookkeeping of an acquire. It opens no span: most
// acquires take their lock at once, and their hold span says so (see
// openAcquire).
func (o *Observer) started(ctx context.Context, e zklock.Event) {
	st := newState(lockData{id: e.ID, res: o.resource(e.Resource, lockKind(e)), ctx: ctx, start: e.Time})
	st.res.series.waiting.Add(1)
	o.track(e.ID, st)
	st.mu.Unlock()
}

// queueEvent is a zklock.enqueued or zklock.position span event.
type queueEvent struct {
	name     string
	at       time.Time
	position int
	resource string // the part queued for, in a multi-resource acquire
	path     string // the new node, when the acquire had to enqueue again
}

func (q *queueEvent) attrs() []attribute.KeyValue {
	n := 1
	if q.resource != "" {
		n++
	}
	if q.path != "" {
		n++
	}
	kv := make([]attribute.KeyValue, 1, n)
	kv[0] = QueuePositionKey.Int(q.position)
	if q.resource != "" {
		kv = append(kv, ResourceNameKey.String(q.resource))
	}
	if q.path != "" {
		kv = append(kv, ZnodePathKey.String(q.path))
	}
	return kv
}

// position records the enqueue and each change of queue position as span
// events, so the trace shows the queue draining. An enqueue behind other
// nodes does not by itself open the acquire span (a reader behind readers,
// or a semaphore with a free slot, holds at once); a change of position
// does, since the acquire can only have learned of it by waiting, and so
// does an enqueue again. The span's own attributes are set once, when the
// acquire ends.
func (o *Observer) position(e zklock.Event) {
	st := o.get(e.ID)
	if st == nil {
		return
	}
	defer unlock(st)
	if st.hold != nil {
		return
	}
	newPath := e.Path != "" && e.Path != st.path && st.path != "" // another part's node, or enqueued again after the session expired
	if e.Path != "" {
		st.path = e.Path
	}
	if e.SessionID != 0 {
		st.session = e.SessionID
	}
	q := queueEvent{name: EventPosition, at: e.Time, position: e.Position}
	again := false
	if e.Kind == zklock.EventEnqueued {
		q.name = EventEnqueued
		again = st.enqueued && st.enqueuedBefore(e.Resource)
		if !st.enqueued {
			st.enqueued, st.position = true, e.Position
		}
	}
	if st.res.kind == KindMulti {
		q.resource = e.Resource
	}
	if newPath {
		q.path = e.Path
	}
	if st.acquire == nil {
		st.queued = append(st.queued, q)
		if e.Kind == zklock.EventPosition || again {
			o.openAcquire(st)
		}
		return
	}
	if st.acquire.IsRecording() { // if not, the event would be dropped
		st.acquire.AddEvent(q.name, trace.WithAttributes(q.attrs()...)) // now, by the SDK's clock
	}
}

// enqueuedBefore reports whether the acquire, whose span is not open yet,
// has enqueued for resource before. st.mu is held.
func (st *lockState) enqueuedBefore(resource string) bool {
	for _, q := range st.queued {
		if q.name == EventEnqueued && (st.res.kind != KindMulti || q.resource == resource) {
			return true
		}
	}
	return false
}

// openAcquire opens the acquire span of an acquire that waits, is
// suspended or fails, as it would have been opened when the acquire
// started: at its start time, a child of the span in the acquire's
// context, with the queue events so far. st.mu is held.
func (o *Observer) openAcquire(st *lockState) {
	s := newSpanStart()
	s.attrs = append(s.attrs, ResourceNameKey.String(st.res.resource), ResourceClassKey.String(st.res.class), LockKindKey.String(st.res.kind))
	s.attrs = append(s.attrs, o.spanAttrs...)
	s.opts = append(s.opts, trace.WithTimestamp(st.start))
	st.acquire = s.start(st.ctx, o.tracer, SpanAcquire)
	if st.acquire.IsRecording() {
		for i := range st.queued {
			q := &st.queued[i]
			st.acquire.AddEvent(q.name, trace.WithTimestamp(q.at), trace.WithAttributes(q.attrs()...))
		}
	}
	st.queued = nil
}

// ended returns the attributes that an acquire's end adds to its acquire
// span, or to its hold span when it had none: the queue position at
// enqueue, the wait and the outcome. A failed acquire's span also names
// its node and session, which a successful acquire's hold span carries
// anyway (with the fencing token): each fact once per trace.
func (o *Observer) ended(kv []attribute.KeyValue, st *lockState, outcome string, wait time.Duration, failed bool) []attribute.KeyValue {
	if st.enqueued {
		kv = append(kv, QueuePositionKey.Int(st.position))
	}
	if failed {
		if st.path != "" {
			kv = append(kv, ZnodePathKey.String(st.path))
		}
		if st.session != 0 {
			kv = append(kv, SessionIDKey.String(o.sessionHex(st.session)))
		}
	}
	return append(kv, WaitDurationKey.Float64(wait.Seconds()), OutcomeKey.String(outcome))
}

// acquired opens the hold span. An acquire that waited ends its acquire
// span, and the hold span, linked to it, starts at the same instant; one
// that did not wait has no acquire span, and its hold span carries the
// wait and the outcome instead. A lease that comes without an acquire
// (Lease.Downgrade) gets a hold span only.
func (o *Observer) acquired(ctx context.Context, e zklock.Event) {
	st := o.get(e.ID)
	if st == nil {
		o.acquiredAlone(ctx, e)
		return
	}
	defer unlock(st)
	if st.hold != nil {
		return
	}
	st.path, st.session = e.Path, e.SessionID // for AcquireAll: the first part's node
	o.ins.wait.Record(exemplarContext(ctx, st.acquire), e.Wait.Seconds(), st.res.series.acquiredOpts...)
	st.res.series.waiting.Add(-1)
	if st.acquire == nil {
		// Observe is called as the lock is taken, so the SDK's clock
		// gives the same instant, unless a loss came first: then the
		// loss ends the span at the acquire's time, which it must start
		// at.
		s := newSpanStart()
		if st.lost != nil {
			s.opts = append(s.opts, trace.WithTimestamp(e.Time))
		}
		st.hold = o.startHold(ctx, e, st, true, s)
	} else {
		if st.acquire.IsRecording() {
			st.acquire.SetAttributes(o.ended(make([]attribute.KeyValue, 0, 3), st, OutcomeAcquired, e.Wait, false)...)
		}
		at := trace.WithTimestamp(e.Time) // the hand-off: one instant for both spans
		st.acquire.End(at)
		s := newSpanStart()
		s.opts = append(s.opts, at, trace.WithLinks(trace.Link{SpanContext: st.acquire.SpanContext()}))
		st.hold = o.startHold(ctx, e, st, false, s)
	}
	st.ctx, st.queued = nil, nil
	if st.lost != nil {
		// The loss was reported first (it is delivered asynchronously).
		lost := *st.lost
		if lost.Time.Before(e.Time) {
			lost.Time = e.Time
		}
		o.endLost(ctx, e.ID, st, lost, false)
		return
	}
	st.res.series.held.Add(1)
}

// failed ends the acquire span, opening it if the acquire had none yet,
// with an error status and the error's type.
func (o *Observer) failed(ctx context.Context, e zklock.Event) {
	st := o.get(e.ID)
	if st == nil {
		return
	}
	defer unlock(st)
	if st.hold != nil {
		return
	}
	if e.SessionID != 0 {
		st.session = e.SessionID
	}
	if st.acquire == nil {
		o.openAcquire(st)
	}
	out, errType := outcome(e.Err), ErrorType(e.Err)
	if st.acquire.IsRecording() {
		kv := o.ended(make([]attribute.KeyValue, 0, 6), st, out, e.Wait, true)
		st.acquire.SetAttributes(append(kv, ErrorTypeKey.String(errType))...)
		if e.Err != nil {
			st.acquire.RecordError(e.Err)
			st.acquire.SetStatus(codes.Error, e.Err.Error())
		} else {
			st.acquire.SetStatus(codes.Error, out)
		}
	}
	o.ins.wait.Record(exemplarContext(ctx, st.acquire), e.Wait.Seconds(), st.res.series.failed(out, errType))
	st.res.series.waiting.Add(-1)
	st.ctx = nil
	o.finish(e.ID, st)
	st.acquire.End() // Observe is called as the acquire fails: the SDK's clock
}

// exemplarContext is the context a wait is recorded with: the SDK takes
// the measurement's exemplar (trace and span id) from its span. An acquire
// that waited or failed has a span of its own, so a spike on a dashboard
// leads to that span; one that did not keeps its caller's context (its
// hold span is not started yet), whose span is in the same trace.
func exemplarContext(ctx context.Context, acquire trace.Span) context.Context {
	if acquire == nil || !acquire.SpanContext().IsSampled() {
		return ctx
	}
	return trace.ContextWithSpan(ctx, acquire)
}
