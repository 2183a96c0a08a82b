package zklock

import (
	"context"
	"sync/atomic"
	"time"
)

// EventKind says what happened to a lock.
type EventKind int

// Event kinds, in the order an acquire reports them.
const (
	// EventStarted: an acquire began (before its node exists).
	EventStarted EventKind = iota + 1
	// EventEnqueued: the node was created; Position is the number of nodes
	// ahead of it.
	EventEnqueued
	// EventPosition: the position changed while waiting.
	EventPosition
	// EventAcquired: the lock is held; Wait and Token are set.
	EventAcquired
	// EventReleased: the lease was released; Held is set.
	EventReleased
	// EventLost: the lease was lost; Err is a *LostError, Held is set.
	EventLost
	// EventFailed: the acquire failed; Err says why.
	EventFailed
	// EventSuspended: the connection to ZooKeeper was lost; leases are
	// kept until the session can no longer be proven alive.
	EventSuspended
	// EventResumed: reconnected to the same session in time.
	EventResumed
	// EventDiverged: a waiter listed its queue and the listing held two
	// live nodes with one sequence number, which a server consistent with
	// its ensemble never shows (ZooKeeper 3.8.0 was seen to keep an
	// uncommitted transaction across a resynchronization). The waiter
	// decides nothing on it: it lists again after a sync, then from
	// another server, until its context ends. Path is its node.
	EventDiverged
	// EventState: the session's state changed (Client.State); State
	// says to what. Changes are reported in order, on one goroutine.
	EventState
)

func (k EventKind) String() string {
	switch k {
	case EventStarted:
		return "started"
	case EventEnqueued:
		return "enqueued"
	case EventPosition:
		return "position"
	case EventAcquired:
		return "acquired"
	case EventReleased:
		return "released"
	case EventLost:
		return "lost"
	case EventFailed:
		return "failed"
	case EventSuspended:
		return "suspended"
	case EventResumed:
		return "resumed"
	case EventDiverged:
		return "diverged"
	case EventState:
		return "state"
	}
	return "unknown"
}

// Event describes one step of a lock's life. ID is the same for every event
// of one acquire and of the lease it produced, so an observer can pair them;
// IDs are unique in the process, across Clients and MemoryLockers. Session
// events (EventSuspended, EventResumed, EventState) have ID 0. A lease made by
// Lease.Downgrade reports EventAcquired (Wait 0) with no EventStarted.
type Event struct {
	Kind EventKind
	ID   uint64
	// Resource is the lease's name: its resources joined by commas, in
	// the order given (a name may itself contain a comma: use Resources
	// to tell the parts apart). For EventEnqueued and EventPosition it is
	// the one resource whose queue the event is about.
	Resource string
	// Resources are the acquire's resources, as given (nil for session
	// events).
	Resources []string
	Mode      Mode
	Path      string // the lock node's znode path, once it exists
	Position  int    // nodes ahead in the queue
	Wait      time.Duration
	Held      time.Duration
	Token     int64
	SessionID int64
	Err       error
	Time      time.Time
	// State is the session's new state, for EventState.
	State SessionState
}

// Observer receives lock events. Observe is called synchronously, within
// the acquire or release call and with that call's context (so a tracer can
// parent spans), for acquire and release events: EventAcquired, EventFailed
// and EventReleased on the calling goroutine itself; a Client's acquire
// reports EventStarted, EventEnqueued and EventPosition from the goroutine
// of a step the call waits for. Losses and session events come on a
// separate goroutine with a background context. It must not block for
// long, and must be safe for concurrent use.
//
// Ordering: events of one acquire arrive in order up to EventAcquired or
// EventFailed. EventLost is delivered asynchronously (it may come from
// ZooKeeper's receive loop, which must not wait on an observer), so it can
// arrive before EventAcquired when a lease is lost at once, or after
// EventFailed for a multi-resource acquire that lost a part; likewise
// EventSuspended and EventResumed may arrive out of order. EventState
// events arrive in order, from one goroutine.
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(ctx context.Context, e Event)

// Observe calls f(ctx, e).
func (f ObserverFunc) Observe(ctx context.Context, e Event) { f(ctx, e) }

var _ Observer = ObserverFunc(nil)

var eventIDs atomic.Uint64

// nextID returns a process-wide unique acquire ID.
func nextID() uint64 { return eventIDs.Add(1) }

// notify stamps e with the time when it has none and hands it to each
// observer in turn.
func notify(ctx context.Context, observers []Observer, e Event) {
	if len(observers) == 0 {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	for _, o := range observers {
		o.Observe(ctx, e)
	}
}
