package zklock

import (
	"context"
	"errors"
	"slices"
	"time"
)

// waiter is one acquire's journey through a resource's queue. It may take
// several nodes: when its node vanishes (deleted by someone else, or gone
// with an expired session) it queues again with a new one.
type waiter struct {
	c      *Client
	st     *leaseState
	target target
	cfg    acquireConfig
	data   []byte
	multi  bool  // one part of a multi-resource acquire
	sid    int64 // the session of the current node
	// deleteBy, if set, is when a failed acquire stops deleting its node
	// on the spot (see removeNode): a try's deadline.
	deleteBy time.Time

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
	pos    int      // position last reported to observers, -1 before
	listed []string // the queue as listed right after its create, if it was
	behind bool     // the last listing showed nodes behind this one
	// predSeen: the predecessor's data version that last sent a
	// semaphore waiter back to list the queue (see awaitSlot).
	predSeen nodeVersion
	// ownWatched: a data watch on the node is set, so its deletion by
	// anyone is delivered to us before any later event. Only a waiter
	// about to take a zero-round-trip hand-off needs it; a holder without
	// it sets it after the client's node watch delay (WithNodeWatchDelay).
	ownWatched bool
}

// setOwnWatched records that our session has a data watch on the node.
func (n *node) setOwnWatched() {
	n.ownWatched = true
	n.entry.watched.Store(true)
}

func (w *waiter) wait(ctx context.Context) error {
	for {
		sid, err := w.c.waitReady(ctx)
		if err != nil {
			return err
		}
		w.sid = sid
		if err := w.create(ctx); err != nil {
			if errors.Is(err, errRestart) {
				continue
			}
			return err
		}
		err = w.queue(ctx)
		if errors.Is(err, errRestart) {
			// Our node is gone: drop what we knew of it, and queue again.
			w.c.log.Debug("zklock: lock node vanished; enqueueing again", "resource", w.target.resource)
			w.forget()
			continue
		}
		return err
	}
}

// queue reads the queue, and waits until our node holds the lock.
func (w *waiter) queue(ctx context.Context) error {
	if w.cfg.mode == Semaphore {
		if err := w.checkLimit(ctx); err != nil {
			return w.fail(err)
		}
	}
	kids, err := w.firstLook(ctx)
	if err != nil {
		return w.fail(err)
	}
	for {
		idx := slices.IndexFunc(kids, func(k child) bool { return k.name == w.n.name })
		if idx < 0 {
			return errRestart
		}
		held, watch := rule(kids, idx, w.cfg.limit)
		w.report(ctx, idx)
		if held {
			return w.hold(ctx)
		}
		if w.cfg.try {
			return w.fail(ErrLocked)
		}
		if w.cfg.mode == Semaphore {
			var err error
			if kids, err = w.awaitSlot(ctx, kids, idx); err != nil {
				return w.fail(err)
			}
			continue
		}
		pred := w.target.parent + "/" + kids[watch].name
		if p := w.c.ownNode(ctx, pred, w.sid); p != nil && provesFirst(p.mode) {
			// Keep only what lies between pred and us (nothing, unless
			// we read behind readers), not the snapshot (see below).
			behind := slices.Clone(kids[watch+1 : idx+1])
			kids = nil
			held, err := w.awaitLocal(ctx, p)
			if err != nil {
				return w.fail(err)
			}
			if held {
				// Nothing is ahead of pred, so nothing but what lay
				// between it and us: the lock is ours, with no request.
				kids = behind
				continue
			}
			if kids, err = w.list(ctx); err != nil {
				return w.fail(err)
			}
			continue
		}
		// Nodes ahead of ours can only disappear (sequence numbers only
		// grow), so if pred is the last obstacle in our snapshot, its
		// deletion hands us the lock without another round trip. That
		// hand-off relies on a watch on our own node, set with pred's.
		rest := slices.Delete(slices.Clone(kids), watch, watch+1)
		direct, _ := rule(rest, idx-1, w.cfg.limit)
		if !direct {
			// We list again once pred is gone, so nothing of the
			// snapshot is kept while we wait: n waiters of one queue
			// on one client would otherwise keep O(n²) names alive
			// (and every garbage collection would mark them).
			rest = nil
		}
		if err := w.watch(ctx, pred, direct); err != nil {
			return w.fail(err)
		}
		if direct {
			kids = rest
			continue
		}
		var err error
		if kids, err = w.list(ctx); err != nil {
			return w.fail(err)
		}
	}
}

func (w *waiter) report(ctx context.Context, pos int) {
	n := w.n
	n.entry.position.Store(int64(pos))
	if pos == n.pos {
		return
	}
	kind := EventPosition
	if n.pos < 0 {
		kind = EventEnqueued // a node of its own: a re-queue is reported again
	}
	n.pos = pos
	w.c.observe(ctx, Event{Kind: kind, ID: w.st.id, Resource: w.target.resource, Resources: w.st.resources, Mode: w.cfg.mode,
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
	if !w.st.addHold(h) {
		// Another part of this multi-resource lease was lost while we
		// waited: give this node back, and queue again for every part.
		return w.fail(errPartLost)
	}
	if w.cfg.mode == Semaphore && w.n.behind {
		c.poke(w.n.entry, w.data) // see slot.go
	}
	if !w.n.ownWatched {
		delay := c.cfg.nodeWatchDelay
		if w.multi {
			// A part of a multi-resource acquire is held while the others
			// are awaited: not a short critical section, so watch at once.
			delay = 0
		}
		w.n.entry.watchLater(c, delay)
	}
	c.mu.Lock()
	w.n.entry.st = w.st
	w.n.entry.position.Store(0)
	var gone bool
	select {
	case <-w.n.entry.gone:
		gone = true // deleted between the two steps above
	default:
	}
	c.mu.Unlock()
	if gone {
		w.st.lose(LossNodeDeleted)
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
		deadline := w.deleteBy
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
