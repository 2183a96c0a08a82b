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
	st := &lockState{series: o.seriesOf(class, kind), acquire: span}
	o.ins.waiting.Add(ctx, 1, st.series.base)
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
	attrs := make([]attribute.KeyValue, 1, 3)
	attrs[0] = QueuePositionKey.Int(e.Position)
	if st.series.kind == KindMulti {
		attrs = append(attrs, ResourceNameKey.String(e.Resource)) // the part being queued for
	}
	if e.Path != "" && e.Path != st.path {
		if st.path != "" { // a new node: enqueued again after the session expired
			attrs = append(attrs, ZnodePathKey.String(e.Path))
		}
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
	st.acquire.AddEvent(name, trace.WithTimestamp(e.Time), trace.WithAttributes(attrs...))
}

// ended returns the attributes of an acquire span known when it ends.
func (o *Observer) ended(st *lockState, outcome string, wait time.Duration, token int64) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 7)
	if st.enqueued {
		kv = append(kv, QueuePositionKey.Int(st.position))
	}
	if st.path != "" {
		kv = append(kv, ZnodePathKey.String(st.path))
	}
	if st.session != 0 {
		kv = append(kv, SessionIDKey.String(o.sessionHex(st.session)))
	}
	if token != 0 {
		kv = append(kv, FencingTokenKey.Int64(token))
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
	st.acquire.SetAttributes(o.ended(st, OutcomeAcquired, e.Wait, e.Token)...)
	o.ins.wait.Record(ctx, e.Wait.Seconds(), st.series.acquired)
	o.ins.waiting.Add(ctx, -1, st.series.base)
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
	o.ins.held.Add(ctx, 1, st.series.base)
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
	st.acquire.SetAttributes(append(o.ended(st, out, e.Wait, 0), ErrorTypeKey.String(errType))...)
	if e.Err != nil {
		st.acquire.RecordError(e.Err, trace.WithTimestamp(e.Time))
		st.acquire.SetStatus(codes.Error, e.Err.Error())
	} else {
		st.acquire.SetStatus(codes.Error, out)
	}
	o.ins.wait.Record(ctx, e.Wait.Seconds(), st.series.failed(out, errType))
	o.ins.waiting.Add(ctx, -1, st.series.base)
	o.finish(e.ID, st)
	st.acquire.End(trace.WithTimestamp(e.Time))
}
