package zkdebug

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// The bounds of a History: how far back it remembers and how many
// resource classes it keeps apart. They fix its memory (see History).
const (
	// HistoryMinutes is the window a History remembers, in minutes: it
	// keeps one bucket per minute for the last HistoryMinutes minutes,
	// plus the minute under way.
	HistoryMinutes = 15
	// HistoryMaxClasses is the number of resource classes a History keeps
	// apart; the classes it meets after that share one row, "other
	// classes".
	HistoryMaxClasses = 32
)

// historySlots is the number of buckets a class's ring holds.
const historySlots = HistoryMinutes + 1

// History remembers, per resource class, what the last HistoryMinutes
// minutes of acquires of this process looked like, minute by minute: how
// long acquires waited (a histogram per minute, from which the debug page
// draws the 50th and 99th percentiles), how many waited at once in this
// process, how many lock nodes were ahead of a new node in its queue
// (across every process), how many acquires gave up, and how many leases
// were lost, by reason. Install it as an observer of the Client, and give
// it to Handler:
//
//	hist := zkdebug.NewHistory()
//	c, err := zklock.Connect(ctx, servers, zklock.WithObserver(hist))
//	mux.Handle("/debug/zklock", zkdebug.Handler(c, zkdebug.WithHistory(hist)))
//
// Its memory is bounded: HistoryMaxClasses classes plus one row for the
// classes past them, each a ring of HistoryMinutes+1 buckets of 600 bytes
// (9.4 KiB a class, 310 KiB in all), and one map entry per acquire in
// progress (to pair its end with its start). Recording an event costs a class lookup and a
// few counter updates under a mutex of its class (BenchmarkHistory
// measures it against an uncontended acquire and release).
//
// A History may serve several Clients; it is safe for concurrent use.
type History struct {
	class  func(string) string
	bucket time.Duration // the width of a bucket: a minute (tests shorten it)

	mu      sync.RWMutex
	classes map[string]*classRing
	other   *classRing // the classes past HistoryMaxClasses, once met

	inflight sync.Map // Event.ID → *classRing, from EventStarted to its end
}

var _ zklock.Observer = (*History)(nil)

// HistoryOption configures a History.
type HistoryOption func(*History)

// WithHistoryClass sets how resources are grouped into classes (default
// zklock.ResourceClass, as package tracing's metrics group them by
// default: give both the same function so that the page and the
// dashboards name the same classes). f must be safe for concurrent use.
func WithHistoryClass(f func(resource string) string) HistoryOption {
	return func(h *History) {
		if f != nil {
			h.class = f
		}
	}
}

// NewHistory returns an empty History.
func NewHistory(opts ...HistoryOption) *History {
	h := &History{class: zklock.ResourceClass, bucket: time.Minute, classes: make(map[string]*classRing)}
	for _, o := range opts {
		if o != nil {
			o(h)
		}
	}
	return h
}

// classRing is one class's buckets, indexed by bucket number modulo
// historySlots.
type classRing struct {
	name    string
	other   bool
	mu      sync.Mutex
	waiting int32 // acquires of the class waiting now, in this process
	slots   [historySlots]slot
}

// slot is one bucket (a minute) of a class.
type slot struct {
	n        int64 // bucket number: time since the Unix epoch / bucket width; 0 when unused
	acquired uint32
	gaveUp   uint32 // acquires that failed: busy, timeout, canceled, error
	// Acquires waiting at once in this process: when the bucket began
	// (as far as the class knew), at most, and at its last change.
	startWaiting, maxWaiting, endWaiting int32
	maxAhead                             int32 // most nodes ahead of a new node in its queue
	lost                                 [lossReasons]uint32
	waited                               time.Duration // the waits' sum
	waits                                waitHist      // waits of the acquires that got their lock
}

// lossReasons is one more than the largest zklock.LossReason this page
// names; reason 0 counts losses of any other reason.
const lossReasons = int(zklock.LossPartner) + 1

// lossNames are the zklock.LossReason values the page names, from
// LossSessionExpired on.
var lossNames = []zklock.LossReason{zklock.LossSessionExpired, zklock.LossSessionUnverified,
	zklock.LossNodeDeleted, zklock.LossClientClosed, zklock.LossPartner}

// ring returns the ring of class, creating it (or falling back to the
// overflow ring) on first use.
func (h *History) ring(class string) *classRing {
	h.mu.RLock()
	r := h.classes[class]
	h.mu.RUnlock()
	if r != nil {
		return r
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if r = h.classes[class]; r != nil {
		return r
	}
	if len(h.classes) >= HistoryMaxClasses {
		if h.other == nil {
			h.other = &classRing{other: true}
		}
		return h.other
	}
	r = &classRing{name: class}
	h.classes[class] = r
	return r
}

// at returns the slot of bucket n, cleared if it held an older bucket, or
// nil if n is older than the slot's bucket (an event reported past the
// window). r.mu is held.
func (r *classRing) at(n int64) *slot {
	s := &r.slots[n%historySlots]
	switch {
	case s.n == n:
	case s.n > n:
		return nil
	default:
		*s = slot{n: n, startWaiting: r.waiting, maxWaiting: r.waiting, endWaiting: r.waiting}
	}
	return s
}

// bucketOf returns the bucket number of t (now when t is zero).
func (h *History) bucketOf(t time.Time) int64 {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UnixNano() / int64(h.bucket)
}

// Observe records e. zklock calls it for every lock event of the Client.
func (h *History) Observe(_ context.Context, e zklock.Event) {
	switch e.Kind {
	case zklock.EventStarted:
		r := h.ring(h.class(e.Resource))
		h.inflight.Store(e.ID, r)
		r.mu.Lock()
		s := r.at(h.bucketOf(e.Time)) // before the count changes: it starts with the count before
		r.waiting++
		if s != nil {
			s.maxWaiting = max(s.maxWaiting, r.waiting)
			s.endWaiting = r.waiting
		}
		r.mu.Unlock()
	case zklock.EventEnqueued:
		r := h.ring(h.class(e.Resource))
		r.mu.Lock()
		if s := r.at(h.bucketOf(e.Time)); s != nil {
			s.maxAhead = max(s.maxAhead, int32(min(e.Position, 1<<30)))
		}
		r.mu.Unlock()
	case zklock.EventAcquired, zklock.EventFailed:
		v, ok := h.inflight.LoadAndDelete(e.ID)
		if !ok {
			return // a lease with no acquire (Lease.Downgrade): it never waited
		}
		r := v.(*classRing)
		r.mu.Lock()
		s := r.at(h.bucketOf(e.Time))
		r.waiting--
		if s != nil {
			s.endWaiting = r.waiting
			if e.Kind == zklock.EventAcquired {
				s.acquired++
				s.waited += e.Wait
				s.waits.add(e.Wait)
			} else {
				s.gaveUp++
			}
		}
		r.mu.Unlock()
	case zklock.EventLost:
		reason := 0
		if le, ok := errors.AsType[*zklock.LostError](e.Err); ok && int(le.Reason) < lossReasons {
			reason = int(le.Reason)
		}
		r := h.ring(h.class(e.Resource))
		r.mu.Lock()
		if s := r.at(h.bucketOf(e.Time)); s != nil {
			s.lost[reason]++
		}
		r.mu.Unlock()
	}
}
