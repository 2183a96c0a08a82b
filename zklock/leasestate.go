package zklock

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/queue"
)

// heldNode is one held node of a lease (a multi-resource lease has several).
type heldNode struct {
	resource  string
	parent    string
	path      string
	token     int64
	sessionID int64
	node      *queue.Node // the Client's record of it (nil for other backends)
	// lender, if set, is the lease this node belongs to: the part was
	// re-entered from a lease in the acquire's context (see borrow), and
	// is given back to it, not deleted.
	lender *leaseState
}

// releaser ends the holds of a lease; every backend implements it.
type releaser interface {
	releaseHolds(ctx context.Context, st *leaseState) error
	dropHolds(st *leaseState) // after a loss, in the background: may run on ZooKeeper's event goroutine
	// abandonHolds lets go of the holds of an acquire that failed, on
	// the caller's goroutine as far as it can (bounded), so that the
	// caller returns with nothing held.
	abandonHolds(st *leaseState)
	observe(ctx context.Context, e Event)
}

// derivedCtx is a context made by Lease.Context: cancel ends it, stop
// unregisters the clean-up that forgets it when it ends first.
type derivedCtx struct {
	cancel context.CancelCauseFunc
	stop   func() bool
	by     *Lease // the Lease whose Context made it
}

type leaseState struct {
	owner     releaser
	id        uint64
	resource  string   // the resources' names joined by commas, in the order given
	resources []string // as given
	mode      Mode
	holds     []*heldNode
	acquired  time.Time
	waited    time.Duration
	ctx       context.Context // done when the lease ends; its cause says why
	cancel    context.CancelCauseFunc

	mu         sync.Mutex
	derived    map[*int]derivedCtx // contexts from Lease.Context
	views      []*Lease            // Leases of this state with a Done of their own (Lease.Done)
	revoke     chan struct{}       // closed on a revocation request
	lenders    []*leaseState       // leases parts were borrowed from (see borrow)
	driverHeld Held                // a Driver's lease (NewLocker), until released or dropped
	unlend     []func() bool       // stop the loss hooks set by borrow
	refs       int
	releasing  bool
	ended      bool
	err        error
	done       chan struct{}
}

func newLeaseState(owner releaser, id uint64, resources []string, mode Mode) *leaseState {
	st := &leaseState{owner: owner, id: id, resource: joinResources(resources), resources: resources, mode: mode, refs: 1, done: make(chan struct{})}
	st.ctx, st.cancel = context.WithCancelCause(context.Background())
	return st
}

// addHold adds a held node to the lease. It reports false, adding nothing,
// when the lease has already ended (a multi-resource lease lost a part
// while waiting for the next one); the caller must then let go of the node.
func (st *leaseState) addHold(h *heldNode) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended {
		return false
	}
	st.holds = append(st.holds, h)
	return true
}

// borrow adds lender's hold on queue key to st: a part of a
// multi-resource acquire that a lease in its context holds already is
// re-entered, as a single acquire would be. lender counts one more
// reference until st ends, and st is lost if lender is. It reports false,
// adding nothing, if lender has ended or st has.
func (st *leaseState) borrow(lender *leaseState, key string) bool {
	lender.mu.Lock()
	i := slices.IndexFunc(lender.holds, func(h *heldNode) bool { return h.parent == key })
	if lender.ended || lender.releasing || i < 0 {
		lender.mu.Unlock()
		return false
	}
	h := *lender.holds[i]
	h.lender = lender
	st.mu.Lock()
	if st.ended {
		st.mu.Unlock()
		lender.mu.Unlock()
		return false
	}
	first := !slices.Contains(st.lenders, lender)
	if first {
		lender.refs++
		st.lenders = append(st.lenders, lender)
	}
	st.holds = append(st.holds, &h)
	st.mu.Unlock()
	lender.mu.Unlock()
	if first {
		stop := context.AfterFunc(lender.ctx, func() { st.lose(LossPartner) })
		st.mu.Lock()
		st.unlend = append(st.unlend, stop)
		st.mu.Unlock()
	}
	return true
}

// giveBack returns st's borrowed parts to their lenders: each counts one
// reference down, and lets its node go if that was the last.
func (st *leaseState) giveBack(ctx context.Context) {
	st.mu.Lock()
	lenders, stops := st.lenders, st.unlend
	st.lenders, st.unlend = nil, nil
	st.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	for _, l := range lenders {
		_ = l.release(ctx, nil) // the lender's own loss, if any, is reported by it
	}
}

// ownHolds returns the holds whose nodes are st's own (not borrowed).
func (st *leaseState) ownHolds() []*heldNode {
	st.mu.Lock()
	defer st.mu.Unlock()
	var hs []*heldNode
	for _, h := range st.holds {
		if h.lender == nil {
			hs = append(hs, h)
		}
	}
	return hs
}

// ownNodes returns the Client's records of st's own nodes.
func (st *leaseState) ownNodes() []*queue.Node {
	hs := st.ownHolds()
	ns := make([]*queue.Node, len(hs))
	for i, h := range hs {
		ns[i] = h.node
	}
	return ns
}

// Token is the fencing token: the czxid of the lease's node, which grows
// across the whole ensemble. For a multi-resource lease it is the largest.
func (st *leaseState) Token() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	var t int64
	for _, h := range st.holds {
		t = max(t, h.token)
	}
	return t
}

// end closes the lease with err; it reports whether this call ended it.
func (st *leaseState) end(err error) bool {
	st.mu.Lock()
	if st.ended {
		st.mu.Unlock()
		return false
	}
	st.ended = true
	st.err = err
	derived, views := st.derived, st.views
	st.derived, st.views = nil, nil
	st.mu.Unlock()
	// The lease's contexts first, then Done: whoever sees Done closed
	// finds them cancelled (Lease.Context).
	for _, d := range derived {
		d.stop() // no clean-up goroutine: the map is gone already
		d.cancel(err)
	}
	for _, l := range views {
		close(*l.own.Load())
	}
	close(st.done)
	// Last: a local successor waits for st.ctx (see awaitLocal), so the
	// holder is told everything above before the next one holds.
	st.cancel(err)
	return true
}

// lose ends the lease as lost and lets go of any other holds it has.
func (st *leaseState) lose(reason LossReason) {
	st.mu.Lock()
	releasing := st.releasing
	st.mu.Unlock()
	if releasing {
		// A release is under way: the node is going anyway.
		return
	}
	err := &LostError{Resource: st.resource, Reason: reason}
	if !st.end(err) {
		return
	}
	st.owner.dropHolds(st)
	st.mu.Lock()
	acquired := st.acquired
	borrowed := len(st.lenders) > 0
	st.mu.Unlock()
	if borrowed {
		// lose may run on ZooKeeper's event goroutine: never block it
		go st.giveBack(context.Background())
	}
	if acquired.IsZero() {
		// An acquire still under way (a multi-resource acquire lost a
		// part while waiting for another) queues again: no lease was
		// handed out, so none is reported lost.
		return
	}
	if b, ok := st.owner.(*zkBackend); ok {
		b.c.recordLoss(st, reason, err)
	}
	go st.owner.observe(context.Background(), Event{Kind: EventLost, ID: st.id, Resource: st.resource, Resources: st.resources,
		Mode: st.mode, Held: time.Since(acquired), Token: st.Token(), Err: err, SessionID: st.sessionID()})
}

// abandon gives back the holds of a lease whose acquire failed.
func (st *leaseState) abandon() {
	st.mu.Lock()
	st.ended = true
	st.err = ErrReleased
	st.mu.Unlock()
	st.owner.abandonHolds(st)
	st.cancel(ErrReleased)
	go st.giveBack(context.Background())
}

func (st *leaseState) sessionID() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.holds) == 0 {
		return 0
	}
	return st.holds[0].sessionID
}

func (st *leaseState) release(ctx context.Context, l *Lease) error {
	st.mu.Lock()
	if st.ended && !st.releasing {
		err := st.err
		st.mu.Unlock()
		return err
	}
	st.refs--
	if st.refs > 0 {
		st.countDown(l) // unlocks st.mu
		return nil
	}
	start := !st.releasing
	st.releasing = true
	st.mu.Unlock()
	if start {
		err := st.owner.releaseHolds(ctx, st)
		if err == nil {
			st.finishRelease(ctx)
			return nil
		}
		return errs.Errorf("release of %q not yet confirmed (continuing in the background): %w", st.resource, err)
	}
	select {
	case <-st.done:
		return nil
	case <-ctx.Done():
		return errs.Errorf("release of %q not yet confirmed: %w", st.resource, ctx.Err())
	}
}

// countDown ends l, a Lease of st released while another reference to st
// still holds (a re-entry, or the lease it re-entered): its Err says
// ErrReleased, its contexts are cancelled, then its Done is closed, as
// when a lease ends. The node stays for the other references. st.mu is
// held; countDown unlocks it. l is nil for a lender's count-down (a
// borrowed part given back), which ends no Lease.
func (st *leaseState) countDown(l *Lease) {
	if l == nil {
		st.mu.Unlock()
		return
	}
	l.gone = true
	var cancels []derivedCtx
	for key, d := range st.derived {
		if d.by == l {
			cancels = append(cancels, d)
			delete(st.derived, key)
		}
	}
	var own chan struct{}
	if p := l.own.Load(); p != nil {
		own = *p
		st.views = slices.DeleteFunc(st.views, func(v *Lease) bool { return v == l })
	}
	st.mu.Unlock()
	for _, d := range cancels {
		d.stop()
		d.cancel(ErrReleased)
	}
	if own != nil {
		close(own)
	}
}

func (st *leaseState) finishRelease(ctx context.Context) {
	st.giveBack(ctx)
	if st.end(ErrReleased) {
		st.owner.observe(ctx, Event{Kind: EventReleased, ID: st.id, Resource: st.resource, Resources: st.resources, Mode: st.mode,
			Held: time.Since(st.acquired), Token: st.Token(), SessionID: st.sessionID()})
	}
}

// joinResources names a lease: its resources joined by commas, in the
// order given (Lease.Resource, Event.Resource).
func joinResources(resources []string) string {
	if len(resources) == 1 {
		return resources[0]
	}
	return strings.Join(resources, ",")
}

// takeDriverHeld returns the Driver's lease behind st, once.
func (st *leaseState) takeDriverHeld() Held {
	st.mu.Lock()
	defer st.mu.Unlock()
	h := st.driverHeld
	st.driverHeld = nil
	return h
}

// The lease is a queue.Holder: the Client's recipe tells it of its
// nodes' loss.
var _ queue.Holder = (*leaseState)(nil)

// Lose ends the lease as lost (queue.Holder).
func (st *leaseState) Lose(l queue.Loss) { st.lose(LossReason(l)) }

// Released completes a release that the client's closing made complete
// (queue.Holder).
func (st *leaseState) Released() { st.finishRelease(context.Background()) }

// RevokeRequested passes on a request to release the lease (queue.Holder).
func (st *leaseState) RevokeRequested() { st.requestRevoke() }

// Ended is closed once the lease has ended and its holder has been told
// (queue.Holder): st.ctx is cancelled last (see end).
func (st *leaseState) Ended() <-chan struct{} { return st.ctx.Done() }
