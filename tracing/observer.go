package tracing

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/zklockkit/zklockkit/zklock"
)

// Observer turns zklock events into OpenTelemetry spans and metrics. Pass
// it to the Client once, at connect:
//
//	c, err := zklock.Connect(ctx, servers, zklock.WithObserver(tracing.NewObserver()))
//
// Every acquire through that Client, whoever makes it (the Echo middleware,
// the gRPC interceptors, generated code), is then traced as a child of the
// span in the acquire's context.
//
// An Observer keeps a little state per acquire and lease in progress and
// drops it when the acquire fails or the lease ends. It may serve several
// Clients (zklock's event IDs are unique in the process), and it is safe
// for concurrent use.
type Observer struct {
	tracer      trace.Tracer
	class       func(string) string
	spanAttrs   []attribute.KeyValue
	ins         instruments
	series      *registry
	resources   resourceCache
	lastSession atomic.Pointer[sessionName]

	mu      sync.Mutex
	locks   map[uint64]*lockState   // by Event.ID, from EventStarted to the end
	orphans map[uint64]zklock.Event // losses of leases not (yet) known
}

// Losses of leases the Observer does not know are kept for a while: a
// lease that comes without an acquire (Lease.Downgrade) can be lost before
// its Acquired event arrives. Most such losses belong to acquires that have
// already failed (a part of an AcquireAll lost, then the acquire canceled)
// and are dropped after orphanTTL.
const (
	maxOrphans = 256
	orphanTTL  = 10 * time.Second
)

// keepOrphan keeps the loss e of an unknown lease. o.mu is held.
func (o *Observer) keepOrphan(e zklock.Event) {
	now := time.Now()
	for id, l := range o.orphans {
		if now.Sub(l.Time) > orphanTTL {
			delete(o.orphans, id)
		}
	}
	if len(o.orphans) < maxOrphans {
		o.orphans[e.ID] = e
	}
}

var _ zklock.Observer = (*Observer)(nil)

// lockState is one acquire and, once acquired, its lease. Its memory is
// reused (see newState): whoever finds a state in Observer.locks and then
// locks it checks that it is still the one it looked up (id) and not done.
type lockState struct {
	mu sync.Mutex
	lockData
}

// lockStates holds the states finished, for reuse: an acquire then writes
// into memory that the previous one has just used, instead of allocating.
var lockStates = sync.Pool{New: func() any { return new(lockState) }}

// lockData is a lockState's data, all of it reset when the state is reused.
type lockData struct {
	id  uint64 // Event.ID
	res *resourceInfo

	// The acquire span is opened only for an acquire that waits, is
	// suspended or fails (openAcquire), as if it had been opened at the
	// start: ctx and start are kept for it until the acquire ends, and so
	// are the queue events reported before it is opened.
	ctx     context.Context
	start   time.Time
	acquire trace.Span    // nil until opened
	queued  []queueEvent  // before the acquire span is opened
	queued1 [1]queueEvent // queued's first array: one enqueue, no allocation

	hold     trace.Span    // set once acquired
	lost     *zklock.Event // a loss reported before the acquire ended
	path     string        // the lock node
	session  int64
	position int  // at enqueue
	enqueued bool // the three flags share a word
	done     bool // the state is finished and removed
	free     bool // done by the event in hand: reuse the state once unlocked
}

// newState returns a state for the acquire or lease id, locked.
func newState(d lockData) *lockState {
	st := lockStates.Get().(*lockState)
	st.mu.Lock() // someone may still hold it from its previous use
	st.lockData = d
	st.queued = st.queued1[:0]
	return st
}

// unlock unlocks st, and puts it back for reuse if the event in hand
// finished it. Its data is cleared first (done, and no longer id), so that
// whoever holds it still sees it finished.
func unlock(st *lockState) {
	free := st.free
	if free {
		st.lockData = lockData{done: true}
	}
	st.mu.Unlock()
	if free {
		lockStates.Put(st)
	}
}

// NewObserver returns an Observer configured by opts.
func NewObserver(opts ...Option) *Observer {
	cfg := newConfig(opts)
	o := &Observer{
		tracer: cfg.tracerProvider.Tracer(ScopeName,
			trace.WithInstrumentationVersion(Version())),
		class:     cfg.class,
		spanAttrs: cfg.spanAttrs,
		series:    newRegistry(cfg.metricAttrs),
		locks:     make(map[uint64]*lockState),
		orphans:   make(map[uint64]zklock.Event),
	}
	o.ins = newInstruments(cfg.meterProvider.Meter(ScopeName,
		metric.WithInstrumentationVersion(Version())), o.series, o)
	o.series.onNew = o.ins.zeroLost
	return o
}

// Observe implements zklock.Observer.
func (o *Observer) Observe(ctx context.Context, e zklock.Event) {
	if ctx == nil {
		ctx = context.Background()
	}
	switch e.Kind {
	case zklock.EventStarted:
		o.started(ctx, e)
	case zklock.EventEnqueued, zklock.EventPosition:
		o.position(e)
	case zklock.EventAcquired:
		o.acquired(ctx, e)
	case zklock.EventFailed:
		o.failed(ctx, e)
	case zklock.EventReleased:
		o.released(ctx, e)
	case zklock.EventLost:
		o.lostLease(ctx, e)
	case zklock.EventSuspended, zklock.EventResumed:
		o.session(e)
	}
}

// get returns the state of an acquire or lease in progress, locked (see
// unlock), or nil.
func (o *Observer) get(id uint64) *lockState {
	o.mu.Lock()
	st := o.locks[id]
	o.mu.Unlock()
	if st == nil {
		return nil
	}
	st.mu.Lock()
	if st.done || st.id != id {
		st.mu.Unlock()
		return nil
	}
	return st
}

// finish marks st done and forgets it. st.mu is held. Callers record
// their metrics and finish before they end the last span, so that whoever
// sees the span ended sees the bookkeeping done.
func (o *Observer) finish(id uint64, st *lockState) {
	st.done, st.free = true, true
	o.mu.Lock()
	if o.locks[id] == st {
		delete(o.locks, id)
	}
	o.mu.Unlock()
}

// errIDReused is reported through otel.Handle when an Observer sees an
// event ID that is already in progress: something other than zklock (a
// Locker of its own, a test) reports events with IDs it reuses.
type errIDReused uint64

func (e errIDReused) Error() string {
	return fmt.Sprintf("tracing: lock event ID %d is already in progress: event IDs must be unique in the process", uint64(e))
}

func (o *Observer) track(id uint64, st *lockState) {
	o.mu.Lock()
	old := o.locks[id]
	o.locks[id] = st
	o.mu.Unlock()
	if old != nil {
		otel.Handle(errIDReused(id))
	}
}

// sessionHex formats a session id as "0x..."; the last one is kept, since
// a Client has one session at a time.
func (o *Observer) sessionHex(id int64) string {
	if last := o.lastSession.Load(); last != nil && last.id == id {
		return last.hex
	}
	hex := "0x" + strconv.FormatUint(uint64(id), 16)
	o.lastSession.Store(&sessionName{id, hex})
	return hex
}

type sessionName struct {
	id  int64
	hex string
}

// spanInternal is the span kind option of every lock span.
var spanInternal = trace.WithSpanKind(trace.SpanKindInternal)
