package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/internal/canary"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
	"github.com/zklockkit/zklockkit/zklock/internal/session"

	"github.com/go-zookeeper/zk"
)

// awaitLocal sets up the wait for pred, a node of this client on our
// session, to go, with no watch and no request: the client learns of its
// own nodes' end by itself (its delete confirmed, its lease lost, its
// session gone, or the watch on it fired). A node that held had nothing
// ahead of it, and nothing can come ahead of it since (sequence numbers
// only grow), so its going hands us the lock, with nothing ahead of us but
// between: n waiters of one queue on one client take it in turn at the
// cost of the releases' deletes alone, where each would otherwise be woken
// by a watch and list the queue. That hand-off, like the direct one in
// queue, relies on a watch on our own node, set here first; and it waits
// until pred's lease has ended, so its holder is told (Done closed,
// contexts cancelled) before we hold (see woken).
func (w *Waiter) awaitLocal(ctx context.Context, pred *Node, between []layout.Child) (*Park, error) {
	if !w.n.ownWatched {
		if _, err := w.watchOwn(ctx); err != nil {
			return nil, err
		}
	}
	w.q.mu.Lock()
	held := pred.holder != nil
	w.q.mu.Unlock()
	if !held && !pred.watched.Load() {
		// pred waits, and nothing of ours watches its node: if someone
		// else deleted it, no event would reach this client, and we
		// would wait for its waiter's next listing, which may never come
		// while what it waits for is held. Watch it for us.
		if err := w.watchLocal(ctx, pred); err != nil {
			return nil, err
		}
	}
	w.n.wait = waitFor{kind: waitLocal, prev: pred, ahead: between}
	return w.parkOn(Park{done: pred.gone}), nil
}

// woken reads what ended a park, for the wait in w.n.wait: nil, nil to
// go on (see next), or a new park.
func (w *Waiter) woken(ctx context.Context, woke Wake) (*Park, error) {
	switch woke {
	case WokeEnded:
		return nil, errs.CtxErr(ctx)
	case WokeGone, WokeUnwatched:
		return nil, errRestart
	case WokeClosing:
		return nil, errs.ErrClosed
	}
	wf := &w.n.wait
	switch wf.kind {
	case waitLocal:
		// pred is gone. If it held, the lock is ours once its lease
		// has ended; if it never held, what was ahead of it may remain.
		w.q.mu.Lock()
		h := wf.prev.holder
		w.q.mu.Unlock()
		if h == nil {
			*wf = waitFor{}
			return nil, nil
		}
		wf.kind = waitLease
		return w.parkOn(Park{done: h.Ended()}), nil
	case waitLease:
		wf.keep = true
		return nil, nil
	case waitPred:
		switch woke {
		case WokeChanged:
			return w.watch(ctx) // pred's data changed: set the watch again
		case WokeCover:
			if w.q.s.Closed() {
				return nil, errs.ErrClosed // dropped with the client (Close)
			}
			// The queue changed, pred's going or ours among what it may
			// be, or the session ended: list it again (see next).
			*wf = waitFor{}
			return nil, nil
		}
		// pred was deleted. Our own node's deletion, if any, was
		// delivered before that: check it now.
		select {
		case <-w.n.entry.gone:
			return nil, errRestart
		default:
		}
	}
	return nil, nil // a semaphore's: a node ahead went or changed
}

// watchLocal sets a data watch on pred, a waiting node of this client, so
// that its deletion by someone else reaches the client (onEvent drops it
// and closes its gone channel). A node already gone is dropped at once.
func (w *Waiter) watchLocal(ctx context.Context, pred *Node) error {
	for {
		_, err := do(ctx, w, func() (struct{}, error) {
			_, _, _, err := w.q.conn().GetW(pred.path)
			return struct{}{}, err
		})
		switch {
		case err == nil:
			pred.watched.Store(true)
			return nil
		case errors.Is(err, zk.ErrNoNode):
			w.q.Event(zk.Event{Type: zk.EventNodeDeleted, Path: pred.path})
			return nil
		case errs.IsConnErr(err):
			if err := w.sameSession(ctx); err != nil {
				return err
			}
		case errors.Is(err, zk.ErrSessionExpired):
			return errRestart
		case errs.IsCtxErr(err):
			return err
		default:
			return errs.Map(err)
		}
	}
}

// ownNode returns our entry for the node at path if it is one of this
// client's live nodes on session sid, and nil otherwise. A node of ours
// whose create has been answered but not yet registered (listed by another
// waiter of this client meanwhile) is waited for, briefly: the reply is
// already in.
func (q *Queues) ownNode(ctx context.Context, path string, sid int64) *Node {
	q.mu.Lock()
	e := q.nodes[path]
	ended := q.creates[layout.ProtectedID(path[strings.LastIndexByte(path, '/')+1:])]
	q.mu.Unlock()
	if e == nil && ended != nil {
		select {
		case <-ended:
		case <-ctx.Done():
			return nil
		}
		q.mu.Lock()
		e = q.nodes[path]
		q.mu.Unlock()
	}
	if e != nil && e.sessionID == sid {
		return e
	}
	return nil
}

// provesFirst reports whether a node of mode m holds only when no node is
// ahead of it (exclusive, write, election), so that its having held proves
// the queue ahead of it empty for good.
func provesFirst(k layout.Kind) bool {
	return k == layout.Exclusive || k == layout.Write || k == layout.Election
}

// firstLook reads the queue (the listing taken with the create, when there
// is one). If the create reply gave no fencing token, it also reads our
// node for its czxid, which sets the watch on it.
func (w *Waiter) firstLook(ctx context.Context) ([]layout.Child, error) {
	var kids []layout.Child
	if listed := w.n.listed; listed != nil {
		w.n.listed = nil
		var err error
		kids, err = w.view(listed)
		switch {
		case errors.Is(err, errDiverged):
			if err := w.diverged(ctx, 0); err != nil {
				return nil, err
			}
			if kids, err = w.listing(ctx, 1); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		case !slices.ContainsFunc(kids, func(k layout.Child) bool { return k.Name == w.n.name }):
			// Cannot happen if the server answered in order; never
			// take a missing node for a deleted one on this listing
			// (that would queue us twice): list again.
			w.q.log.Warn("zklock: queue listed without our new node; listing again", "node", w.n.path)
			kids = nil
		}
	}
	if kids == nil {
		var err error
		if kids, err = w.list(ctx); err != nil {
			return nil, err
		}
	}
	if w.n.token != 0 {
		return kids, nil
	}
	st, err := w.watchOwn(ctx)
	if err != nil {
		return nil, err
	}
	w.n.token = st.Czxid
	return kids, nil
}

// watchOwn sets a data watch on our node and returns its stat; a node
// gone is errRestart. The watch is recorded with the connection epoch it
// was asked in (see node.handoffSafe).
func (w *Waiter) watchOwn(ctx context.Context) (*zk.Stat, error) {
	epoch := w.q.s.Epoch()
	st, err := retryRead(ctx, w, func() (*zk.Stat, error) {
		_, st, _, err := w.q.conn().GetW(w.n.path)
		return st, err
	})
	if err != nil {
		return nil, err
	}
	w.n.setOwnWatched(epoch)
	return st, nil
}

// list reads the queue's children, retrying across connection loss while
// the session lives. A listing that proves its server diverged from the
// ensemble (two live nodes with one sequence number, see
// layout.SortAhead) decides nothing: the waiter reports it, then lists
// again after a sync (the leader's view), and if that still diverges,
// moves the session to another server first, backing off, until its
// context ends.
func (w *Waiter) list(ctx context.Context) ([]layout.Child, error) { return w.listing(ctx, 0) }

// listing is list after attempt diverged listings in a row: from the
// first on, it lists after a sync.
func (w *Waiter) listing(ctx context.Context, attempt int) ([]layout.Child, error) {
	for ; ; attempt++ {
		synced := attempt > 0
		names, err := retryRead(ctx, w, func() ([]string, error) {
			if synced {
				return w.q.listSynced(w.req.Parent)
			}
			n, _, err := w.q.conn().Children(w.req.Parent)
			return n, err
		})
		if err != nil {
			return nil, err
		}
		kids, err := w.view(names)
		if err == nil && w.unlisted(kids) {
			err = w.lives(ctx)
		}
		if !errors.Is(err, errDiverged) {
			return kids, err
		}
		if err := w.diverged(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// unlisted reports whether kids, our queue as a listing shows it (see
// view), leaves out our node while its deletion has not reached us. A
// server lists every live node of our session: the one that answered
// our create, and any our session moved to since, has it. When our node
// is watched, its deletion reaches us before the listing that no longer
// shows it (one connection keeps ZooKeeper's order). So a node neither
// listed nor known gone was deleted unwatched (by an operator, say), or
// the listing's server diverged from the ensemble, or lost committed
// transactions (the long runs of 28 November saw both).
func (w *Waiter) unlisted(kids []layout.Child) bool {
	if len(kids) > 0 && kids[len(kids)-1].Name == w.n.name {
		return false // ours sorts last of what view keeps
	}
	select {
	case <-w.n.entry.gone:
		return false
	default:
		return true
	}
}

// lives asks ZooKeeper whether our node, left out of a listing (see
// unlisted), exists: errDiverged if it does (that listing's server has
// diverged: no decision is made on it; the waiter does not queue again
// beside a node that lives, see Waiter.forget), nil if it does not (it
// was deleted: the waiter queues again).
func (w *Waiter) lives(ctx context.Context) error {
	ok, err := retryRead(ctx, w, func() (bool, error) {
		ok, _, err := w.q.conn().Exists(w.n.path)
		return ok, err
	})
	switch {
	case err != nil:
		return err
	case ok:
		return errDiverged
	}
	return nil
}

// errDiverged is a listing of our queue that proves its server diverged
// (see list): two nodes of one sequence number, or none of our node,
// which lives (see unlisted).
var errDiverged = errors.New("zklock: queue listed as no consistent server lists it")

// diverged reports a diverged listing of our queue, the attempt-th in a
// row, and waits before the next: at once after the first (the next
// listing follows a sync), then, the server still diverging, it drops
// the connection so that the session moves to another server, and backs
// off, from 50 ms up to a second.
func (w *Waiter) diverged(ctx context.Context, attempt int) error {
	q := w.q
	q.log.Warn("zklock: a listing of the queue shows two nodes with one sequence number, or leaves out our live node: its server has diverged from the ensemble; not deciding on it",
		"queue", w.req.Parent, "attempt", attempt+1)
	if w.req.Reporter != nil {
		w.req.Reporter.Diverged(ctx, w.n.path, w.sid)
	}
	if attempt == 0 {
		return nil
	}
	q.s.Wire().Drop()
	t := time.NewTimer(min(50*time.Millisecond<<min(attempt-1, 5), time.Second))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return errs.CtxErr(ctx)
	}
}

// view parses a listing of our queue as our node sees it: the nodes up to
// and including ours, in order. A child that cannot be ordered fails the
// acquire (errs.ErrUnknownNode).
func (w *Waiter) view(names []string) ([]layout.Child, error) {
	if h := w.q.listing.Load(); h != nil {
		names = (*h)(w.req.Parent, names)
	}
	if w.kids == nil {
		w.kids = kidsPool.Get().(*[]layout.Child)
	}
	kids, unknown, behind, dup := layout.SortAheadInto(*w.kids, names, w.n.name)
	*w.kids = kids
	if dup && !canary.On(canary.DivergedListingTrusted) {
		return nil, errDiverged
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("%w: %s/%s (and %d more): it has no sequence number, so it may hold the lock",
			errs.ErrUnknownNode, w.req.Parent, unknown[0], len(unknown)-1)
	}
	w.n.behind = behind
	return kids, nil
}

// do runs fn, a go-zookeeper call of w's, honouring ctx: on the calling
// goroutine when the step runs on a runner of its own (see Step), aside
// otherwise (session.Call).
func do[T any](ctx context.Context, w *Waiter, fn func() (T, error)) (T, error) {
	if w.runner && ctx.Done() != nil {
		if ctx.Err() != nil {
			var zero T
			return zero, errs.CtxErr(ctx)
		}
		return fn()
	}
	return session.Call(ctx, fn)
}

// retryRead runs a read of our queue under ctx, again after each connection
// loss while our session lives. A vanished node or session is errRestart.
func retryRead[T any](ctx context.Context, w *Waiter, fn func() (T, error)) (T, error) {
	for {
		v, err := do(ctx, w, fn)
		switch {
		case err == nil:
			return v, nil
		case errs.IsConnErr(err):
			if err = w.sameSession(ctx); err == nil {
				continue
			}
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired):
			err = errRestart
		case errs.IsCtxErr(err):
		default:
			err = errs.Map(err)
		}
		var zero T
		return zero, err
	}
}

// sameSession waits for the connection and returns errRestart if the
// session changed meanwhile.
func (w *Waiter) sameSession(ctx context.Context) error {
	sid, err := w.q.s.Wait(ctx)
	if err != nil {
		return err
	}
	if sid != w.sid {
		return errRestart
	}
	return nil
}

// watch sets a data watch on the node ahead (w.n.wait.pred) and returns
// the park on it, or nil, nil if it is gone already. With w.n.wait.own it
// first makes sure our node is watched too, in the same round trip (the
// two requests are pipelined).
func (w *Waiter) watch(ctx context.Context) (*Park, error) {
	q := w.q
	pred := w.n.wait.pred
	for {
		type res struct {
			ch     <-chan zk.Event
			err    error
			ownErr error // of the read that watches our node, if made
		}
		needOwn := w.n.wait.own && !w.n.ownWatched
		epoch := q.s.Epoch()
		r, err := do(ctx, w, func() (res, error) {
			var ownCh chan error
			if needOwn {
				ownCh = make(chan error, 1)
				go func() {
					_, _, _, err := q.conn().GetW(w.n.path)
					ownCh <- err
				}()
			}
			_, _, ch, err := q.conn().GetW(pred)
			r := res{ch: ch, err: err}
			if ownCh != nil {
				r.ownErr = <-ownCh
			}
			return r, nil
		})
		if err != nil {
			return nil, err
		}
		if needOwn {
			switch {
			case r.ownErr == nil:
				w.n.setOwnWatched(epoch)
			case errors.Is(r.ownErr, zk.ErrNoNode), errors.Is(r.ownErr, zk.ErrSessionExpired):
				return nil, errRestart
			case errs.IsConnErr(r.ownErr):
				if err := w.sameSession(ctx); err != nil {
					return nil, err
				}
				continue
			default:
				return nil, errs.Map(r.ownErr)
			}
		}
		switch {
		case r.err == nil:
			return w.parkOn(Park{ev: r.ch}), nil
		case errors.Is(r.err, zk.ErrNoNode):
			return nil, nil
		case errs.IsConnErr(r.err):
			if err := w.sameSession(ctx); err != nil {
				return nil, err
			}
		case errors.Is(r.err, zk.ErrSessionExpired):
			return nil, errRestart
		default:
			return nil, errs.Map(r.err)
		}
	}
}
