package queue

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"

	"github.com/go-zookeeper/zk"
)

// RevokeMessage is the data Curator's Revoker writes into a holder's node
// to ask it to release; zklock writes and reads the same, so that the two
// interoperate.
var RevokeMessage = []byte("__REVOKE__")

// Node tracks one lock node of ours while it may exist.
type Node struct {
	path      string
	resource  string
	kind      layout.Kind
	sessionID int64
	since     time.Time
	position  atomic.Int64
	gone      chan struct{} // closed when the node is known to be gone
	holder    Holder        // set once held
	releasing bool
	givenUp   *atomic.Bool // its acquire's Request.GivenUp (see deleted)
	watchT    *time.Timer  // pending deferred watch on the node (see watchLater)
	// watched: this session has a data watch on the node (set by its
	// waiter, by rearm, or by a local successor: see awaitLocal), so its
	// deletion by anyone reaches the client.
	watched atomic.Bool
}

// deleted reports whether e is being deleted: released, or its acquire
// failed with a step still running (Request.GivenUp). Called with
// Queues.mu held.
func (e *Node) deleted() bool {
	return e.releasing || e.givenUp != nil && e.givenUp.Load()
}

// watchLater sets the data watch on e, a node held with no watch yet,
// after delay, unless the lease ends first. A deletion before the watch
// is set is found by the watch's read itself (no node: lost).
func (q *Queues) watchLater(e *Node, delay time.Duration) {
	set := func() {
		q.s.Go(func(ctx context.Context) { q.rearm(ctx, e) })
	}
	if delay <= 0 {
		set()
		return
	}
	t := time.AfterFunc(delay, func() {
		q.mu.Lock()
		live := q.nodes[e.path] == e && !e.releasing
		q.mu.Unlock()
		if live {
			set()
		}
	})
	q.mu.Lock()
	e.watchT = t
	q.mu.Unlock()
}

// rearm sets the data watch on our node again after a data change, and
// passes on a revocation request.
func (q *Queues) rearm(ctx context.Context, e *Node) {
	for {
		data, _, _, err := q.conn().GetW(e.path)
		switch {
		case err == nil:
			e.watched.Store(true)
			q.mu.Lock()
			h := e.holder
			q.mu.Unlock()
			if h != nil && bytes.Equal(data, RevokeMessage) {
				h.RevokeRequested()
			}
			return
		case errors.Is(err, zk.ErrNoNode):
			q.Event(zk.Event{Type: zk.EventNodeDeleted, Path: e.path})
			return
		case errs.IsConnErr(err):
			if _, err := q.s.Wait(ctx); err != nil {
				return
			}
		default:
			return
		}
	}
}

// registry is a client's record of its live lock nodes, by path, guarded by
// Queues.mu. Its invariant: a node leaves the registry once, and its gone
// channel is closed as it leaves (a local successor waits on it, see
// awaitLocal; a waiter on its own node, see until). drop and dropWhere are
// the only ways out.
type registry map[string]*Node

// add records e.
func (r registry) add(e *Node) { r[e.path] = e }

// drop removes e if it is still the entry at its path, closing its gone
// channel, and reports whether it did.
func (r registry) drop(e *Node) bool {
	if e == nil || r[e.path] != e {
		return false
	}
	delete(r, e.path)
	close(e.gone)
	return true
}

// dropWhere removes every entry for which f is true, closing their gone
// channels, and returns them.
func (r registry) dropWhere(f func(e *Node) bool) []*Node {
	var out []*Node
	for _, e := range r {
		if f(e) {
			out = append(out, e)
		}
	}
	for _, e := range out {
		r.drop(e)
	}
	return out
}
