package tracing

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/zklockkit/zklockkit/zklock"
)

// startHold opens the hold span of a lease, with the options s holds.
// alone says the lease's acquire has no span of its own: the hold span
// then carries the acquire's ending attributes (see ended).
func (o *Observer) startHold(ctx context.Context, e zklock.Event, st *lockState, alone bool, s *spanStart) trace.Span {
	s.attrs = append(s.attrs, ResourceNameKey.String(e.Resource), ResourceClassKey.String(st.res.class), LockKindKey.String(st.res.kind),
		FencingTokenKey.Int64(e.Token), ZnodePathKey.String(e.Path), SessionIDKey.String(o.sessionHex(e.SessionID)))
	if alone {
		s.attrs = o.ended(s.attrs, st, OutcomeAcquired, e.Wait, false)
	}
	s.attrs = append(s.attrs, o.spanAttrs...)
	return s.start(ctx, o.tracer, SpanHold)
}

// acquiredAlone opens the hold span of a lease that had no acquire. Its
// loss may have been reported already.
func (o *Observer) acquiredAlone(ctx context.Context, e zklock.Event) {
	st := newState(lockData{id: e.ID, res: o.resource(e.Resource, lockKind(e)), path: e.Path, session: e.SessionID})
	defer unlock(st)
	o.mu.Lock()
	lost, orphan := o.orphans[e.ID]
	if orphan {
		delete(o.orphans, e.ID)
	} else {
		o.locks[e.ID] = st
	}
	o.mu.Unlock()
	// Observe is called as the lease is made, so the SDK's clock gives
	// the same instant, unless its loss came first: then the loss ends
	// the span at the lease's time, which it must start at.
	s := newSpanStart()
	if orphan {
		s.opts = append(s.opts, trace.WithTimestamp(e.Time))
	}
	st.hold = o.startHold(ctx, e, st, false, s)
	if orphan {
		if lost.Time.Before(e.Time) {
			lost.Time = e.Time
		}
		o.endLost(ctx, e.ID, st, lost, false)
		return
	}
	st.res.series.held.Add(1)
}

// released ends the hold span.
func (o *Observer) released(ctx context.Context, e zklock.Event) {
	st := o.get(e.ID)
	if st == nil {
		return
	}
	defer unlock(st)
	if st.hold == nil {
		return
	}
	o.ins.hold.Record(ctx, e.Held.Seconds(), st.res.series.baseOpts...)
	st.res.series.held.Add(-1)
	o.finish(e.ID, st)
	st.hold.End() // Observe is called as the lease is released: the SDK's clock
}

// lostLease ends the hold span with an error status and the reason. A loss
// can be reported before the acquire's own end (it comes from another
// goroutine); it is then kept until the acquire ends.
func (o *Observer) lostLease(ctx context.Context, e zklock.Event) {
	o.mu.Lock()
	st := o.locks[e.ID]
	if st == nil {
		o.keepOrphan(e)
		o.mu.Unlock()
		return
	}
	o.mu.Unlock()
	st.mu.Lock()
	defer unlock(st)
	if st.done || st.id != e.ID {
		return
	}
	if st.hold == nil {
		st.lost = &e
		return
	}
	o.endLost(ctx, e.ID, st, e, true)
}

// endLost ends the hold span of a lost lease. st.mu is held.
func (o *Observer) endLost(ctx context.Context, id uint64, st *lockState, e zklock.Event, counted bool) {
	reason := lostReason(e.Err)
	st.hold.SetAttributes(LostReasonKey.String(reason), ErrorTypeKey.String(errorTypeLeaseLost))
	if e.Err != nil {
		st.hold.RecordError(e.Err, trace.WithTimestamp(e.Time))
		st.hold.SetStatus(codes.Error, e.Err.Error())
	} else {
		st.hold.SetStatus(codes.Error, "lease lost: "+reason)
	}
	o.ins.hold.Record(ctx, e.Held.Seconds(), st.res.series.lostHold())
	if counted {
		st.res.series.held.Add(-1)
	}
	o.ins.lost.Add(ctx, 1, st.res.series.lost(reason))
	o.finish(id, st)
	st.hold.End(trace.WithTimestamp(e.Time))
}
