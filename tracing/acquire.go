package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/zklockkit/zklockkit/zklock"
)

// started opens the acquire span as a child of the caller's span.
func (o *Observer) started(ctx context.Context, e zklock.Event) {
	class, kind := o.class(e.Resource), lockKind(e)
	attrs := make([]attribute.KeyValue, 0, 3+len(o.spanAttrs))
	attrs = append(attrs, ResourceNameKey.String(e.Resource), ResourceClassKey.String(class), LockKindKey.String(kind))
	attrs = append(attrs, o.spanAttrs...)
	_, span := o.tracer.Start(ctx, SpanAcquire, spanInternal,
		trace.WithTimestamp(e.Time), trace.WithAttributes(attrs...))
	st := &lockState{class: class, kind: kind, series: o.series.get(class, kind), acquire: span}
	st.series.waiting.Add(1)
	o.track(e.ID, st)
}

// position records the enqueue and each change of queue position as span
// events, so the trace shows the queue draining. The span's own attributes
// are set once, when the acquire ends.
func (o *Observer) position(e zklock.Event) {
	st := o.get(e.ID)
	if st == nil {
		return
	}
	defer st.mu.Unlock()
	if st.hold != nil {
		return
	}
	newPath := e.Path != "" && e.Path != st.path && st.path != "" // enqueued again after the session expired
	if e.Path != "" {
		st.path = e.Path
	}
	if e.SessionID != 0 {
		st.session = e.SessionID
	}
	name := EventPosition
	if e.Kind == zklock.EventEnqueued {
		name = EventEnqueued
		if !st.enqueued {
			st.enqueued, st.position = true, e.Position
		}
	}
	if !st.acquire.IsRecording() {
		return // not sampled: the event would be dropped
	}
	n := 1
	if st.kind == KindMulti {
		n++
	}
	if newPath {
		n++
	}
	attrs := make([]attribute.KeyValue, 1, n)
	attrs[0] = QueuePositionKey.Int(e.Position)
	if st.kind == KindMulti {
		attrs = append(attrs, ResourceNameKey.String(e.Resource)) // the part being queued for
	}
	if newPath {
		attrs = append(attrs, ZnodePathKey.String(e.Path))
	}
	st.acquire.AddEvent(name, trace.WithTimestamp(e.Time), trace.WithAttributes(attrs...))
}

// ended returns the attributes of an acquire span known when it ends:
// the queue position at enqueue, the wait and the outcome. A failed
// acquire's span also names its node and session, which a successful
// acquire's hold span carries instead (with the fencing token): each fact
// once per trace.
func (o *Observer) ended(st *lockState, outcome string, wait time.Duration, failed bool) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 6)
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

// acquired ends the acquire span and opens the hold span, linked to it. A
// lease that comes without an acquire (Lease.Downgrade) gets a hold span
// only.
func (o *Observer) acquired(ctx context.Context, e zklock.Event) {
	st := o.get(e.ID)
	if st == nil {
		o.acquiredAlone(ctx, e)
		return
	}
	defer st.mu.Unlock()
	if st.hold != nil {
		return
	}
	st.path, st.session = e.Path, e.SessionID // for AcquireAll: the first part's node
	if st.acquire.IsRecording() {
		st.acquire.SetAttributes(o.ended(st, OutcomeAcquired, e.Wait, false)...)
	}
	o.ins.wait.Record(ctx, e.Wait.Seconds(), st.series.acquired)
	st.series.waiting.Add(-1)
	st.acquire.End(trace.WithTimestamp(e.Time))

	st.hold = o.startHold(ctx, e, st, trace.WithLinks(trace.Link{SpanContext: st.acquire.SpanContext()}))
	if st.lost != nil {
		// The loss was reported first (it is delivered asynchronously).
		lost := *st.lost
		if lost.Time.Before(e.Time) {
			lost.Time = e.Time
		}
		o.endLost(ctx, e.ID, st, lost, false)
		return
	}
	st.series.held.Add(1)
}

// failed ends the acquire span with an error status and the error's
// type.
func (o *Observer) failed(ctx context.Context, e zklock.Event) {
	st := o.get(e.ID)
	if st == nil {
		return
	}
	defer st.mu.Unlock()
	if st.hold != nil {
		return
	}
	if e.SessionID != 0 {
		st.session = e.SessionID
	}
	out, errType := outcome(e.Err), ErrorType(e.Err)
	if st.acquire.IsRecording() {
		st.acquire.SetAttributes(append(o.ended(st, out, e.Wait, true), ErrorTypeKey.String(errType))...)
		if e.Err != nil {
			st.acquire.RecordError(e.Err, trace.WithTimestamp(e.Time))
			st.acquire.SetStatus(codes.Error, e.Err.Error())
		} else {
			st.acquire.SetStatus(codes.Error, out)
		}
	}
	o.ins.wait.Record(ctx, e.Wait.Seconds(), st.series.failed(out, errType))
	st.series.waiting.Add(-1)
	o.finish(e.ID, st)
	st.acquire.End(trace.WithTimestamp(e.Time))
}
