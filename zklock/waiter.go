package zklock

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
)

// waiter is one acquire's journey through a resource's queue. It may take
// several nodes: when its node vanishes (deleted by someone else, or gone
// with an expired session) it queues again with a new one.
type waiter struct {
	// The acquire's config, ID, resources, try deadline (deleteBy) and
	// lease (lease).
	*acquisition
	c      *Client
	target *target
	sid    int64   // the session of the current node
	park   *parked // where it says what to wait for (see parkOn)

	// n is the current node, nil before the first create. Everything
	// known about a node lives in it, so a waiter that queues again
	// starts clean: a new node has no watch, no token and no listing
	// until it gets its own.
	n *node
}

// node is one lock node of a waiter, from its create until it holds the
// lock, fails, or vanishes.
type node struct {
	path   string
	name   string
	entry  *nodeEntry
	token  int64    // its czxid, once known
	listed []string // the queue as listed right after its create, if it was
	// predSeen: the predecessor's data version that last sent a
	// semaphore waiter back to list the queue (see awaitSlot).
	predSeen nodeVersion
	pos      int32 // position last reported to observers, -1 before
	behind   bool  // the last listing showed nodes behind this one
	// ownWatched: a data watch on the node is set, so its deletion by
	// anyone is delivered to us before any later event. Only a waiter
	// about to take a zero-round-trip hand-off needs it; a holder without
	// it sets it after the client's node watch delay (WithNodeWatchDelay).
	ownWatched bool
	// ownEpoch: the client's connection epoch (Client.epoch) when the
	// watch was asked for. ZooKeeper keeps the order of a session's
	// events only within one connection; see handoffSafe.
	ownEpoch <-chan struct{}
	// cover: the child watch of the listing after its create, if it
	// armed one, which the node may wait on alone (cover.go).
	cover *cover
	// wait is what the node waits for between two steps.
	wait waitFor
}

// setOwnWatched records that our session has a data watch on the node,
// asked for in connection epoch epoch.
func (n *node) setOwnWatched(epoch <-chan struct{}) {
	n.ownWatched = true
	n.ownEpoch = epoch
	n.entry.watched.Store(true)
}

// handoffSafe reports whether the node may take the hand-off its wait
// ended in with no request: its own watch was set on the connection still
// in use. The hand-off trusts that a deletion of our node would have
// reached us before the event that ended the wait, and ZooKeeper keeps
// that order only within one connection: on a reconnection go-zookeeper
// restores its watches in one request (setWatches), and the server
// answers it with an event for every watched node gone meanwhile, in the
// order of that request's list, not of the deletions. A node that lived
// through a reconnection lists its queue instead, which finds it gone if
// it is. A covered node (cover.go) never takes such a hand-off: it lists.
func (w *waiter) handoffSafe() bool {
	n := w.n
	if !n.ownWatched {
		return false
	}
	select {
	case <-n.ownEpoch:
		return false
	default:
		return true
	}
}

// waitFor is what a node waits for between two steps (see step.go), and
// where it goes on from once that is over.
type waitFor struct {
	pred string     // waitPred: the node ahead, watched
	prev *nodeEntry // waitLocal, waitLease: the node of ours ahead
	// ahead: the nodes ahead of ours that remain once the wait is over,
	// with keep.
	ahead []layout.Child
	kind  waitKind
	own   bool // waitPred: our node is watched with it
	// keep: go on from the nodes in ahead, then ours, instead of listing
	// the queue (a hand-off with no round trip).
	keep bool
}

type waitKind uint8

const (
	waitNone  waitKind = iota
	waitPred           // a watch on the node ahead
	waitLocal          // a node of ours ahead going
	waitLease          // then its lease ending
	waitSlot           // a semaphore's watches
)

// step runs the waiter, on a step's goroutine, until it holds (nil, nil),
// fails, or must wait: it then returns what to wait for, and the next step
// goes on from what ended the wait (woke).
func (w *waiter) step(ctx context.Context, woke wake) (*parked, error) {
	if w.n != nil {
		p, err := w.resume(ctx, woke)
		if !errors.Is(err, errRestart) {
			return p, err
		}
		w.requeue()
	}
	for {
		sid, err := w.c.waitReady(ctx)
		if err != nil {
			return nil, err
		}
		w.sid = sid
		if err := w.create(ctx); err != nil {
			if errors.Is(err, errRestart) {
				continue
			}
			return nil, err
		}
		p, err := w.queue(ctx)
		if !errors.Is(err, errRestart) {
			return p, err
		}
		w.requeue()
	}
}

// parkOn returns p as what the waiter waits for before its next step.
func (w *waiter) parkOn(p parked) *parked {
	*w.park = p
	return w.park
}

// requeue drops what we knew of our node, which is gone, before queueing
// again with a new one.
func (w *waiter) requeue() {
	w.c.log.Debug("zklock: lock node vanished; enqueueing again", "resource", w.target.resource)
	w.forget()
}

// queue reads the queue after our node's create, and looks where it
// stands.
func (w *waiter) queue(ctx context.Context) (*parked, error) {
	if w.cfg.mode == Semaphore {
		if err := w.checkLimit(ctx); err != nil {
			return nil, w.fail(err)
		}
	}
	kids, err := w.firstLook(ctx)
	if err != nil {
		return nil, w.fail(err)
	}
	return w.look(ctx, kids)
}

// resume goes on after a park, from what ended it.
func (w *waiter) resume(ctx context.Context, woke wake) (*parked, error) {
	p, err := w.woken(ctx, woke)
	if err == nil && p == nil {
		var kids []layout.Child
		if kids, err = w.next(ctx); err == nil {
			return w.look(ctx, kids)
		}
	}
	if err != nil {
		return nil, w.fail(err)
	}
	return p, nil
}

// look goes through the queue as kids shows it (the nodes up to and
// including ours, in order) until our node holds the lock (nil, nil), the
// acquire fails, or it must wait for a node ahead: it then returns what to
// wait for, and w.n.wait says where to go on from.
func (w *waiter) look(ctx context.Context, kids []layout.Child) (*parked, error) {
	for {
		idx := slices.IndexFunc(kids, func(k layout.Child) bool { return k.Name == w.n.name })
		if idx < 0 {
			return nil, errRestart
		}
		held, watch := layout.Rule(kids, idx, w.cfg.limit)
		w.report(ctx, idx)
		if held {
			return nil, w.hold(ctx)
		}
		if w.cfg.try {
			return nil, w.fail(ErrLocked)
		}
		p, err := w.ahead(ctx, kids, idx, watch)
		if err != nil {
			return nil, w.fail(err)
		}
		if p != nil {
			return p, nil
		}
		// What we would have waited for is over already.
		if kids, err = w.next(ctx); err != nil {
			return nil, w.fail(err)
		}
	}
}

// ahead sets up the wait for the node at index watch of kids, ahead of
// ours at idx, and returns what to park on, or nil if that node is gone
// already.
func (w *waiter) ahead(ctx context.Context, kids []layout.Child, idx, watch int) (*parked, error) {
	if w.cfg.mode == Semaphore {
		return w.awaitSlot(ctx, kids, idx)
	}
	pred := w.target.parent + "/" + kids[watch].Name
	if p := w.c.ownNode(ctx, pred, w.sid); p != nil && provesFirst(p.mode) {
		// If pred held, nothing is ahead of it, so nothing but what lies
		// between it and us (readers, if we read): keep only that, not
		// the snapshot (see below).
		var between []layout.Child
		if watch+1 < idx {
			between = slices.Clone(kids[watch+1 : idx])
		}
		return w.awaitLocal(ctx, p, between)
	}
	// Nodes ahead of ours can only disappear (sequence numbers only
	// grow), so if pred is the last obstacle in our snapshot, its
	// deletion hands us the lock without another round trip. That
	// hand-off relies on a watch on our own node, set with pred's.
	rest := slices.Delete(slices.Clone(kids), watch, watch+1)
	direct, _ := layout.Rule(rest, idx-1, w.cfg.limit)
	var others []layout.Child
	if direct && idx > 1 {
		// A direct hand-off goes on from what else lies ahead of us in
		// the snapshot (readers, if we read). Otherwise nothing of the
		// snapshot is kept while we wait (we list again once pred is
		// gone): n waiters of one queue on one client would keep O(n²)
		// names alive, and every garbage collection would mark them.
		others = rest[:idx-1]
	}
	// With a cover (cover.go), the queue's child watch stands in for both
	// watches: we list again when it fires.
	if direct && w.c.covering(w.n.cover) {
		w.n.wait = waitFor{kind: waitPred, pred: pred}
		return w.parkOn(parked{done: w.n.cover.fired, covered: true}), nil
	}
	w.n.wait = waitFor{kind: waitPred, pred: pred, own: direct, keep: direct, ahead: others}
	return w.watch(ctx)
}

// next returns the queue to go on with once a wait is over: what the wait
// left of the snapshot (see waitFor), or a new listing.
func (w *waiter) next(ctx context.Context) ([]layout.Child, error) {
	keep := w.n.wait.keep && w.handoffSafe()
	wf := w.n.wait
	w.n.wait = waitFor{}
	if !keep {
		return w.list(ctx)
	}
	me, _ := layout.Parse(w.n.name)
	return append(wf.ahead, me), nil
}

func (w *waiter) report(ctx context.Context, pos int) {
	n := w.n
	n.entry.position.Store(int64(pos))
	if int32(pos) == n.pos {
		return
	}
	kind := EventPosition
	if n.pos < 0 {
		kind = EventEnqueued // a node of its own: a re-queue is reported again
	}
	n.pos = int32(pos)
	w.c.observe(ctx, Event{Kind: kind, ID: w.id, Resource: w.target.resource, Resources: w.resources, Mode: w.cfg.mode,
		Path: n.path, Position: pos, Token: n.token, SessionID: w.sid})
}

// proveAlive makes sure, before a lease is handed out, that the leader is
// known to have heard from our session recently enough (quorum.go): if the
// proof has run out, it sends a sync through the leader, then reads our
// node (answered in order, after the sync). Like every read of ours, it
// waits out a lost connection (within ctx); it returns errRestart if the
// session changed or our node is gone.
func (w *waiter) proveAlive(ctx context.Context) error {
	c := w.c
	for time.Now().After(c.lossDeadline()) {
		ok, err := retryRead(ctx, w, func() (bool, error) {
			sent := time.Now()
			if _, err := c.conn.Sync("/"); err != nil {
				return false, err
			}
			c.quorum.answered(w.sid, sent)
			ok, _, err := c.conn.Exists(w.n.path)
			return ok, err
		})
		switch {
		case err != nil:
			return err
		case !ok:
			return errRestart
		}
	}
	return nil
}

// hold turns our node into a held lock.
func (w *waiter) hold(ctx context.Context) error {
	c := w.c
	if err := ctx.Err(); err != nil {
		// The acquire stopped waiting for the step that got here (see
		// runStep): the node is not the caller's to hold.
		return w.fail(errs.CtxErr(ctx))
	}
	if err := w.proveAlive(ctx); err != nil {
		return w.fail(err)
	}
	c.mu.Lock()
	select {
	case <-w.n.entry.gone:
		c.mu.Unlock()
		return errRestart
	default:
	}
	c.mu.Unlock()
	h := &heldNode{resource: w.target.resource, parent: w.target.parent, path: w.n.path, token: w.n.token, sessionID: w.sid, entry: w.n.entry}
	st := w.lease()
	if !st.addHold(h) {
		// Another part of this multi-resource lease was lost while we
		// waited: give this node back, and queue again for every part.
		return w.fail(errs.PartLost)
	}
	if w.cfg.mode == Semaphore && w.n.behind {
		c.poke(w.n.entry, c.nodeData(w.cfg)) // see slot.go
	}
	if !w.n.ownWatched {
		delay := c.cfg.nodeWatchDelay
		if len(w.ts) > 1 {
			// A part of a multi-resource acquire is held while the others
			// are awaited: not a short critical section, so watch at once.
			delay = 0
		}
		w.n.entry.watchLater(c, delay)
	}
	c.mu.Lock()
	w.n.entry.st = st
	w.n.entry.position.Store(0)
	var gone bool
	select {
	case <-w.n.entry.gone:
		gone = true // deleted between the two steps above
	default:
	}
	c.mu.Unlock()
	if gone {
		st.lose(LossNodeDeleted)
	}
	return nil
}

// fail deletes our node (with a fresh context: the caller's may be dead)
// and returns err.
func (w *waiter) fail(err error) error {
	if errors.Is(err, errRestart) {
		w.forget() // the node is gone
		return err
	}
	if w.n != nil {
		deadline := w.deleteBy()
		if deadline.IsZero() {
			deadline = time.Now().Add(w.c.answerBound())
		}
		w.c.removeNode(w.n.entry, deadline)
	}
	return err
}

// forget drops our record of the current node, which is already gone.
func (w *waiter) forget() {
	n := w.n
	if n == nil {
		return
	}
	w.c.mu.Lock()
	w.c.nodes.drop(n.entry)
	w.c.mu.Unlock()
	w.n = nil
}
