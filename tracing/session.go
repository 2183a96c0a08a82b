package tracing

import (
	"go.opentelemetry.io/otel/trace"

	"github.com/zklockkit/zklockkit/zklock"
)

// session adds a suspended or resumed event to the open spans of the
// session, opening the acquire span of an acquire in progress that has
// none yet.
func (o *Observer) session(e zklock.Event) {
	name := EventSuspended
	if e.Kind == zklock.EventResumed {
		name = EventResumed
	}
	o.mu.Lock()
	type inProgress struct {
		id uint64
		st *lockState
	}
	states := make([]inProgress, 0, len(o.locks))
	for id, st := range o.locks {
		states = append(states, inProgress{id, st})
	}
	o.mu.Unlock()
	opts := []trace.EventOption{trace.WithTimestamp(e.Time)}
	if e.SessionID != 0 {
		opts = append(opts, trace.WithAttributes(SessionIDKey.String(o.sessionHex(e.SessionID))))
	}
	for _, s := range states {
		st := s.st
		st.mu.Lock()
		switch {
		case st.done, st.id != s.id, e.SessionID != 0 && st.session != 0 && st.session != e.SessionID:
		case st.hold != nil:
			st.hold.AddEvent(name, opts...)
		default:
			if st.acquire == nil {
				o.openAcquire(st) // an acquire suspended shows it, whether it waits or not
			}
			st.acquire.AddEvent(name, opts...)
		}
		st.mu.Unlock()
	}
}
