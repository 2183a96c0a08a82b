package zklock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zklockkit/zklockkit/internal/canary"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/queue"
)

// acquireParts is one acquire's parts and how to take them.
type acquireParts struct {
	ts       []target
	lenders  map[string]*leaseState // parts a lease in the context holds (re-entered)
	cfg      acquireConfig
	deleteBy time.Time // a try's deadline: when a failed part stops deleting its node on the spot
}

// acquireWith is the acquire shell: Acquire and AcquireAll of the Client,
// the MemoryLocker and every NewLocker. Its goroutine, the caller's, only
// waits: for the acquire's steps (acquisition.step), and, with a stepper,
// between two steps for what the last one said to wait for. With a blocker
// the one step runs right here, and waits in acquireParts.
func acquireWith(ctx context.Context, b backend, resources []string, cfg acquireConfig) (*Lease, error) {
	a := &acquisition{b: b, caller: ctx, at: -1, resources: resources, cfg: cfg}
	return a.acquire()
}

// newAcquisition makes the acquisition for the Client's Acquire and
// AcquireAll, with the config made in it, not on the caller's stack.
func newAcquisition(ctx context.Context, b backend, resources []string, opts []AcquireOption) *acquisition {
	a := &acquisition{b: b, caller: ctx, at: -1, resources: resources}
	a.cfg = newAcquireConfig(opts)
	return a
}

// acquire runs the acquire on the acquiring goroutine (see acquireWith).
func (a *acquisition) acquire() (*Lease, error) {
	if err := a.configure(); err != nil {
		return nil, err
	}
	defer a.cancel()
	for a.runStep() {
		a.woke = a.parked.Wait()
	}
	return a.result()
}

// acquisition is one acquire under way. The acquiring goroutine sets it
// up (configure) and then only waits; its steps take it further, one at a
// time. With a stepper each step runs on a goroutine of the backend's
// (runStep): the acquiring goroutine reads what a step did once it has
// ended, and tells the next what ended its park (woke); if it gives a
// step up, it reads nothing the steps write any more: the acquisition is
// the step's.
type acquisition struct {
	b         backend
	resources []string
	cfg       acquireConfig
	id        uint64 // the acquire's ID (Event.ID)

	// Set up on the acquiring goroutine (configure), and only read since.
	caller context.Context // the caller's context
	ctx    context.Context // caller bounded by MaxWait and a try's bound
	cancel func()          // ends ctx's timers
	start  time.Time

	// Written by the acquiring goroutine between steps.
	woke   queue.Wake // what ended the last park
	spotBy time.Time  // when the acquiring goroutine stops waiting for steps, once ctx ended (see giveUp)
	inline bool       // the step runs on the acquiring goroutine (see partTaker.quick)
	at     int32      // the part the last step left waiting (an index in ts), -1 before
	atSid  int64      // the session of its node
	// gaveUp: a step was given up (see runStep); the acquire has failed.
	// Set by the acquiring goroutine, read by the queues while the step
	// goes on (queue.Request.GivenUp): the acquire's nodes, its parts held
	// and its node waiting, are being deleted from then on.
	gaveUp atomic.Bool

	// Set by the steps.
	started bool
	direct  bool // err is for the caller as is (the acquire never began)

	// Set up by the first step (begin).
	ts      []target
	lenders map[string]*leaseState // parts a lease in the context holds (re-entered)
	st      *leaseState            // the lease, made by lease
	parts   partTaker              // a stepper's, for this attempt

	// The last step's outcome.
	parked parker // what to wait for, or nil: the acquire is over
	whole  *Lease // a lease of the caller's context re-entered
	err    error  // why it failed, if it did
	failed string // the resource of the part it failed at
	sid    int64  // the session of that part's node
}

// configure checks the acquire's options, and sets up its context: the
// caller's, bounded by MaxWait and a try's bound. The backend's checks are
// the first step's (begin).
func (a *acquisition) configure() error {
	cfg := &a.cfg
	switch {
	case a.caller == nil:
		// Refused here, on the caller's goroutine: a step would read it
		// on a goroutine of the client's, where a panic ends the process.
		return fmt.Errorf("%w: nil Context", ErrInvalidOption)
	case len(a.resources) == 0:
		return &ResourceError{Reason: "no resources given"}
	case cfg.mode < Exclusive || cfg.mode > Election || cfg.mode == Election && cfg.data == nil:
		return fmt.Errorf("%w: mode %v: acquire Exclusive, Read or Write, a semaphore with Limit, an election with Campaign or Lead", ErrInvalidOption, cfg.mode)
	}
	if err := cfg.check(); err != nil {
		return err
	}
	if cfg.mode == Semaphore && cfg.limit < 1 {
		return fmt.Errorf("%w: semaphore limit must be at least 1", ErrInvalidOption)
	}
	a.id, a.start = nextID(), time.Now()
	a.ctx, a.cancel = a.caller, func() {}
	if cfg.maxWait > 0 {
		var cancel context.CancelFunc
		a.ctx, cancel = context.WithTimeoutCause(a.ctx, cfg.maxWait, ErrWaitTimeout)
		a.cancel = cancel
	}
	if bound := a.b.answerBound(); cfg.try && bound > 0 && !canary.On(canary.TryUnbounded) {
		// A try never waits for the queue, nor on the backend past its
		// answer bound: it then answers ErrUnavailable (errs.ErrTryBound), and
		// its on-the-spot delete of a node that found the lock busy stops
		// at the same deadline.
		ctx, cancelTry := context.WithTimeoutCause(a.ctx, bound, errs.ErrTryBound)
		cancel := a.cancel
		a.ctx, a.cancel = ctx, func() { cancelTry(); cancel() }
	}
	return nil
}

// deleteBy is when a failed part of a try stops deleting its node on the
// spot: the try's deadline (zero for any other acquire).
func (a *acquisition) deleteBy() time.Time {
	if !a.cfg.try || a.ctx == nil {
		return time.Time{}
	}
	d, _ := a.ctx.Deadline()
	return d
}

// lease returns the acquire's lease. A stepper's is made on first use (a
// waiting acquire has none yet), any other backend's before its parts are
// taken.
func (a *acquisition) lease() *leaseState {
	if a.st == nil {
		a.st = newLeaseState(a.b, a.id, a.resources, a.cfg.mode)
	}
	return a.st
}

// step takes the acquire one step further: it sets the acquire up the
// first time, then takes its parts (acquireParts, or a stepper's
// partTaker) until they wait (a.parked), are all held, or failed.
func (a *acquisition) step() {
	a.parked = nil
	if !a.started {
		a.started = true
		if !a.begin() {
			return
		}
	}
	for {
		var err error
		if a.parts != nil {
			var p parker
			var failed target
			p, failed, a.sid, err = a.parts.next(a.woke)
			if p != nil {
				a.parked = p
				return
			}
			a.failed = failed.resource
		} else {
			p := acquireParts{ts: a.ts, lenders: a.lenders, cfg: a.cfg, deleteBy: a.deleteBy()}
			var failed target
			failed, a.sid, err = a.b.(blocker).acquireParts(a.ctx, a.lease(), p)
			a.failed = failed.resource
		}
		if err == nil {
			return
		}
		if a.err = a.again(err); a.err != nil {
			return
		}
	}
}

// begin sets the acquire up: the backend's checks, its resources
// resolved, and leases of the caller's context to re-enter. It reports
// false if the acquire ends there (a.whole or a.err).
func (a *acquisition) begin() bool {
	cfg := &a.cfg
	a.direct = true
	if a.err = a.b.check(*cfg); a.err != nil {
		return false
	}
	if a.ts, a.err = targets(a.b, a.resources, cfg.raw); a.err != nil {
		return false
	}
	if a.whole, a.lenders, a.err = reenter(a.caller, a.b, queues(a.ts), cfg.mode); a.whole != nil || a.err != nil {
		return false
	}
	a.direct = false
	a.b.observe(a.caller, Event{Kind: EventStarted, ID: a.id, Resource: joinResources(a.resources), Resources: a.resources,
		Mode: cfg.mode, Time: a.start})
	a.takeParts()
	return true
}

// takeParts starts an attempt at the parts, with a stepper.
func (a *acquisition) takeParts() {
	if s, ok := a.b.(stepper); ok {
		a.parts = s.takeParts(a)
	}
}

// again handles the failure err of an acquire: the lease never existed for
// the caller, so what was taken is given back. It returns nil if the
// acquire goes on: a part already held was lost while it waited for
// another, and keeping the others while queueing again for it would wait
// out of canonical order (a deadlock with an acquire of the same set); so,
// everything given back, it queues again for every part, within the same
// context and MaxWait. Otherwise it returns the error to report.
func (a *acquisition) again(err error) error {
	if a.st != nil {
		a.st.abandon()
	}
	if !errors.Is(err, errs.ErrPartLost) {
		return err
	}
	if a.ctx.Err() != nil {
		return errs.CtxErr(a.ctx) // the caller's context ended too: that is the news
	}
	a.st = nil // a new lease
	if _, a.lenders, err = reenter(a.caller, a.b, queues(a.ts), a.cfg.mode); err != nil {
		return err
	}
	a.takeParts()
	return nil
}

// abandoned cleans up after a step given up by the acquiring goroutine,
// whose context has ended: nobody waits for this acquire any more.
func (a *acquisition) abandoned() {
	switch {
	case a.parked != nil:
		a.parts.abandon(errs.CtxErr(a.ctx))
		if a.st != nil {
			a.st.abandon()
		}
	case a.whole != nil:
		_ = a.whole.Release(context.Background()) // counts the re-entry down
	case a.st != nil && a.err == nil:
		a.st.abandon() // every part held: give them back
	}
}

// result ends the acquire on the acquiring goroutine (observers are told
// there): the lease, or the error for the caller.
func (a *acquisition) result() (*Lease, error) {
	switch {
	case a.gaveUp.Load():
		// The step is on its own: only what this goroutine knows counts.
		failed := joinResources(a.resources)
		if a.at >= 0 {
			failed = a.ts[a.at].resource
		}
		return nil, a.failure(errs.CtxErr(a.ctx), failed, a.atSid)
	case a.whole != nil || a.direct:
		return a.whole, a.err
	case a.err != nil:
		return nil, a.failure(a.err, a.failed, a.sid)
	}
	st := a.st
	st.mu.Lock()
	slices.SortFunc(st.holds, func(a, b *heldNode) int { return strings.Compare(a.parent, b.parent) })
	st.acquired = time.Now()
	st.waited = st.acquired.Sub(a.start)
	st.mu.Unlock()
	a.b.observe(a.caller, Event{Kind: EventAcquired, ID: st.id, Resource: st.resource, Resources: a.resources, Mode: a.cfg.mode,
		Path: st.holds[0].path, Wait: st.waited, Token: st.Token(), SessionID: st.holds[0].sessionID, Time: st.acquired})
	a.b.acquired()
	return &Lease{st: st}, nil
}

// failure reports the acquire's failure with err at resource failed, whose
// node was on session sid, and returns the error for the caller.
func (a *acquisition) failure(err error, failed string, sid int64) error {
	err = errs.Errorf("acquire %q: %w", failed, a.b.annotate(err))
	a.b.observe(a.caller, Event{Kind: EventFailed, ID: a.id, Resource: joinResources(a.resources), Resources: a.resources, Mode: a.cfg.mode,
		Wait: time.Since(a.start), Err: err, SessionID: sid})
	return err
}

// targets resolves resources to their queues, in canonical order (by
// queue key), refusing a resource listed twice.
func targets(b backend, resources []string, raw bool) ([]target, error) {
	ts := make([]target, 0, len(resources))
	for _, r := range resources {
		k, err := b.key(r, raw)
		if err != nil {
			return nil, err
		}
		ts = append(ts, target{r, k})
	}
	slices.SortFunc(ts, func(a, b target) int { return strings.Compare(a.parent, b.parent) })
	for i := 1; i < len(ts); i++ {
		if ts[i].parent == ts[i-1].parent {
			return nil, &ResourceError{Resource: ts[i].resource, Reason: "listed twice"}
		}
	}
	return ts, nil
}

// queues returns the queue keys of ts.
func queues(ts []target) []string {
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = t.parent
	}
	return keys
}

var (
	_ blocker = (*MemoryLocker)(nil)
	_ blocker = (*driverLocker)(nil)
)
