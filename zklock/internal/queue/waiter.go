package queue

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklockkit/zklockkit/internal/canary"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
)

// errRestart tells the wait loop to enqueue again with a fresh node: our
// node vanished (session expired, or someone deleted it).
var errRestart = errors.New("zklock: restart")

// Request is one part of an acquire, as the recipe sees it.
type Request struct {
	Resource string      // the resource's name (events, logs)
	Parent   string      // its queue's znode
	Kind     layout.Kind // of the node
	Limit    int         // a semaphore's
	Try      bool        // never wait for the queue: ErrLocked
	// Raw: the queue is a raw path, whose data is not ours (no counted
	// create).
	Raw bool
	// Layout is the node name's marker; "" for the kind's.
	Layout string
	// Data is the node's data: the owner record, or an election value.
	Data []byte
	// DeleteBy is when a failed try stops deleting its node on the spot
	// (the try's deadline); zero for any other acquire (the session's
	// answer bound).
	DeleteBy time.Time
	// WatchDelay is how long a node held with no watch yet is held before
	// the watch on it is set (Grant).
	WatchDelay time.Duration
	// Reporter is told of the node's position in its queue.
	Reporter Reporter
	// GivenUp, if not nil, is set once the acquire has failed while a
	// step of it still runs (its caller stopped waiting for the step):
	// the acquire's nodes are being deleted from then on, and Nodes
	// leaves them out, Deleting lists them, held or waiting, until they
	// are gone. Shared by the parts of one acquire.
	GivenUp *atomic.Bool
}

// Reporter is told where a waiter's node stands in its queue.
type Reporter interface {
	// Queued reports the position of the waiter's node (the nodes ahead
	// of it), when it is first known for the node (first) and each time
	// it changes.
	Queued(ctx context.Context, first bool, pos int, path string, token, sid int64)
	// Diverged reports a listing of the queue of the waiter's node at
	// path that proves its server diverged from the ensemble: the waiter
	// decides nothing on it (see list).
	Diverged(ctx context.Context, path string, sid int64)
}

// Waiter is one acquire's part, its journey through a resource's queue.
// It may take several nodes: when its node vanishes (deleted by someone
// else, or gone with an expired session) it queues again with a new one.
// The acquire shell takes it a step at a time (Step), and waits between
// two steps on the Park it returns.
type Waiter struct {
	q      *Queues
	req    *Request
	sid    int64 // the session of the current node
	park   *Park // where it says what to wait for (see parkOn)
	runner bool  // the step runs on a runner goroutine of its own (see Step)

	// n is the current node, nil before the first create. Everything
	// known about a node lives in it, so a waiter that queues again
	// starts clean: a new node has no watch, no token and no listing
	// until it gets its own.
	n *node
	// stale: a canary's (RequeueNoWatch): the waiter has queued again.
	stale bool
	// kids: room for the step's listings (view), from kidsPool, given
	// back when the step ends (nothing of a listing outlives its step:
	// what a wait keeps of one is copied).
	kids *[]layout.Child
}

// kidsPool holds room for listings: a contended acquire lists its queue
// twice, 1 KiB each at 32 nodes.
var kidsPool = sync.Pool{New: func() any { return new([]layout.Child) }}

// maxPooledKids bounds the room given back to kidsPool: a listing of a
// long queue takes room of its own.
const maxPooledKids = 1024

// dropKids gives the step's listing room back, cleared so that it keeps
// no names alive; a long listing's room is left to the collector.
func (w *Waiter) dropKids() {
	if w.kids == nil {
		return
	}
	if k := *w.kids; cap(k) <= maxPooledKids {
		clear(k[:cap(k)])
		*w.kids = k[:0]
		kidsPool.Put(w.kids)
	}
	w.kids = nil
}

// Waiter returns a waiter for req, which says what to wait for in park.
func (q *Queues) Waiter(req *Request, park *Park) Waiter {
	return Waiter{q: q, req: req, park: park}
}

// node is one lock node of a waiter, from its create until it holds the
// lock, fails, or vanishes.
type node struct {
	path   string
	name   string
	entry  *Node
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
func (w *Waiter) handoffSafe() bool {
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
	pred string // waitPred: the node ahead, watched
	prev *Node  // waitLocal, waitLease: the node of ours ahead
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

// Step takes the waiter one step further: until its node holds (nil,
// nil), the acquire fails, or it must wait; it then returns what to wait
// for, and the next step goes on from what ended the wait (woke). With
// runner, the step runs on a goroutine of its own, which the caller's
// bounds by ctx (the acquire shell's runner): go-zookeeper's calls then
// run on it directly. Otherwise the step runs on the caller's goroutine,
// and each call runs aside so as never to wait past ctx (session.Call).
//
// Once the node holds, the shell adds it to the lease (Held) and calls
// Grant.
func (w *Waiter) Step(ctx context.Context, woke Wake, runner bool) (*Park, error) {
	w.runner = runner
	p, err := w.step(ctx, woke)
	w.dropKids()
	if p != nil {
		if !p.covered {
			// A covered park needs no case for our node's end: the
			// cover fires then too (cover.go), and each case of a
			// parked select holds a runtime record of its own.
			p.gone = w.n.entry.gone
		}
		p.end = ctx.Done()
	}
	return p, err
}

func (w *Waiter) step(ctx context.Context, woke Wake) (*Park, error) {
	if w.n != nil {
		p, err := w.resume(ctx, woke)
		if !errors.Is(err, errRestart) {
			return p, err
		}
		w.requeue()
	}
	for {
		sid, err := w.q.s.Wait(ctx)
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
func (w *Waiter) parkOn(p Park) *Park {
	*w.park = p
	return w.park
}

// requeue drops what we knew of our node, which is gone, before queueing
// again with a new one.
func (w *Waiter) requeue() {
	w.q.log.Debug("zklock: lock node vanished; enqueueing again", "resource", w.req.Resource)
	w.forget()
}

// queue reads the queue after our node's create, and looks where it
// stands.
func (w *Waiter) queue(ctx context.Context) (*Park, error) {
	if w.req.Kind == layout.Semaphore {
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
func (w *Waiter) resume(ctx context.Context, woke Wake) (*Park, error) {
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
func (w *Waiter) look(ctx context.Context, kids []layout.Child) (*Park, error) {
	for {
		idx := slices.IndexFunc(kids, func(k layout.Child) bool { return k.Name == w.n.name })
		if idx < 0 {
			return nil, errRestart
		}
		held, watch := layout.Rule(kids, idx, w.req.Limit)
		if canary.On(canary.SemaphorePastOtherKinds) && w.req.Kind == layout.Semaphore && idx < max(w.req.Limit, 1) {
			held = true // the canary: fewer than the limit ahead, whatever their kind
		}
		w.report(ctx, idx)
		if held {
			return nil, w.hold(ctx)
		}
		if w.req.Try {
			return nil, w.fail(errs.ErrLocked)
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
func (w *Waiter) ahead(ctx context.Context, kids []layout.Child, idx, watch int) (*Park, error) {
	if w.req.Kind == layout.Semaphore {
		return w.awaitSlot(ctx, kids, idx)
	}
	pred := w.req.Parent + "/" + kids[watch].Name
	if p := w.q.ownNode(ctx, pred, w.sid); p != nil && provesFirst(p.kind) {
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
	direct := layout.HeldWithout(kids, idx, watch, w.req.Limit)
	var others []layout.Child
	if direct && idx > 1 {
		// A direct hand-off goes on from what else lies ahead of us in
		// the snapshot (readers, if we read). Otherwise nothing of the
		// snapshot is kept while we wait (we list again once pred is
		// gone): n waiters of one queue on one client would keep O(n²)
		// names alive, and every garbage collection would mark them;
		// nor is it copied (a waiter far back in a long queue would
		// copy it all at each wait, 1 KiB at 32 nodes).
		others = slices.Delete(slices.Clone(kids[:idx]), watch, watch+1)
	}
	// With a cover (cover.go), the queue's child watch stands in for both
	// watches: we list again when it fires.
	if direct && w.q.covering(w.n.cover) {
		w.n.wait = waitFor{kind: waitPred, pred: pred}
		return w.parkOn(Park{done: w.n.cover.fired, covered: true}), nil
	}
	w.n.wait = waitFor{kind: waitPred, pred: pred, own: direct, keep: direct, ahead: others}
	return w.watch(ctx)
}

// next returns the queue to go on with once a wait is over: what the wait
// left of the snapshot (see waitFor), or a new listing.
func (w *Waiter) next(ctx context.Context) ([]layout.Child, error) {
	keep := w.n.wait.keep && w.handoffSafe()
	wf := w.n.wait
	w.n.wait = waitFor{}
	if !keep {
		return w.list(ctx)
	}
	me, _ := layout.Parse(w.n.name)
	return append(wf.ahead, me), nil
}

// report records our node's position, and reports it when it is new.
func (w *Waiter) report(ctx context.Context, pos int) {
	n := w.n
	n.entry.position.Store(int64(pos))
	if int32(pos) == n.pos {
		return
	}
	first := n.pos < 0 // a node of its own: a re-queue is reported again
	n.pos = int32(pos)
	if w.req.Reporter != nil {
		w.req.Reporter.Queued(ctx, first, pos, n.path, n.token, w.sid)
	}
}

// proveAlive makes sure, before a lease is handed out, that the leader is
// known to have heard from our session recently enough for the lease to
// be worth having (session.Session.Proven): if not, it sends a sync
// through the leader, then reads our node (answered in order, after the
// sync), and holds once that fresh proof is in. Like every read of ours,
// it waits out a lost connection (within ctx); it returns errRestart if
// the session changed or our node is gone.
func (w *Waiter) proveAlive(ctx context.Context) error {
	q := w.q
	if q.s.Proven() {
		return nil
	}
	for {
		ok, err := retryRead(ctx, w, func() (bool, error) {
			sent := time.Now()
			if _, err := q.conn().Sync("/"); err != nil {
				return false, err
			}
			q.s.Proved(w.sid, sent)
			ok, _, err := q.conn().Exists(w.n.path)
			return ok, err
		})
		switch {
		case err != nil:
			return err
		case !ok:
			return errRestart
		case !time.Now().After(q.s.LossDeadline()):
			return nil // as fresh a proof as there can be
		}
	}
}

// hold makes sure our node may be held: the acquire still waits for it,
// the session is proven alive, the node is there. The shell then adds it
// to the lease (Held) and grants it (Grant).
func (w *Waiter) hold(ctx context.Context) error {
	q := w.q
	if err := ctx.Err(); err != nil {
		// The acquire stopped waiting for the step that got here (see
		// the shell's runStep): the node is not the caller's to hold.
		return w.fail(errs.CtxErr(ctx))
	}
	if err := w.proveAlive(ctx); err != nil {
		return w.fail(err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-w.n.entry.gone:
		return errRestart
	default:
	}
	return nil
}

// Held describes the node a waiter holds, once Step said it does.
type Held struct {
	Path      string
	Token     int64 // its czxid, the fencing token
	SessionID int64
	Node      *Node
}

// Held returns the node the waiter holds.
func (w *Waiter) Held() Held {
	return Held{Path: w.n.path, Token: w.n.token, SessionID: w.sid, Node: w.n.entry}
}

// Grant gives the held node to h, the lease it now belongs to: from now
// on h is told if the node is lost. A semaphore's node with nodes behind
// it pokes its successor (slot.go); a node with no watch yet gets one
// after the request's watch delay.
func (w *Waiter) Grant(h Holder) {
	w.grant(h, w.req.WatchDelay)
}

func (w *Waiter) grant(h Holder, delay time.Duration) {
	q := w.q
	if w.req.Kind == layout.Semaphore && w.n.behind {
		q.poke(w.n.entry, w.req.Data)
	}
	if !w.n.ownWatched {
		q.watchLater(w.n.entry, delay)
	}
	q.mu.Lock()
	w.n.entry.holder = h
	w.n.entry.position.Store(0)
	var gone bool
	select {
	case <-w.n.entry.gone:
		gone = true // deleted between the step that held and now
	default:
	}
	q.mu.Unlock()
	if gone {
		h.Lose(LossNodeDeleted)
	}
}

// Fail deletes the waiter's node, if it has one (an acquire that gave up
// on it, or a part of a multi-resource lease that ended meanwhile), and
// returns err.
func (w *Waiter) Fail(err error) error { return w.fail(err) }

// fail deletes our node (with a fresh context: the caller's may be dead)
// and returns err.
func (w *Waiter) fail(err error) error {
	if errors.Is(err, errRestart) {
		w.forget() // the node is gone
		return err
	}
	if w.n != nil {
		deadline := w.req.DeleteBy
		if deadline.IsZero() {
			deadline = time.Now().Add(w.q.s.AnswerBound())
		}
		w.q.removeNode(w.n.entry, deadline)
	}
	return err
}

// forget drops our record of the current node, which is gone: the waiter
// queues again, or fails. Unless its deletion has reached us (it left the
// registry then), the node may live on all the same: the step read it gone in
// a listing that left it out, and a server that diverged from the
// ensemble, or lost committed transactions, lists a queue without a node
// of ours that lives (the model test saw a re-queue leave one, ahead of
// the waiter's new node). It is deleted in the background then, so that
// it cannot stand ahead of anyone until the session ends: the delete goes
// to the leader, which finds the node if it lives; it costs a request
// answered "no node" when the node had gone.
func (w *Waiter) forget() {
	n := w.n
	if n == nil {
		return
	}
	e := n.entry
	w.q.mu.Lock()
	live := w.q.nodes.drop(e)
	w.q.mu.Unlock()
	w.n = nil
	if live {
		w.q.s.Go(func(ctx context.Context) { _ = w.q.deleteNode(ctx, e.path, e.sessionID) })
	}
	if canary.On(canary.RequeueNoWatch) {
		w.stale = true
	}
}

// Quick reports whether the step after a park that woke ended is likely
// to hold at once, with no request: a hand-off with no round trip (a
// direct one, or a local one once the lease ahead has ended). The acquire
// shell then runs the step on the acquiring goroutine itself, sparing the
// hand-off two goroutine switches.
func (w *Waiter) Quick(woke Wake) bool {
	if woke != WokeFired || w.n == nil {
		return false
	}
	wf := &w.n.wait
	return (wf.kind == waitPred && wf.keep || wf.kind == waitLease) && w.handoffSafe()
}

// Session returns the session of the waiter's current node.
func (w *Waiter) Session() int64 { return w.sid }
