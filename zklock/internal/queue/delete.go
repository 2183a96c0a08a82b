package queue

import (
	"context"
	"errors"
	"time"

	"github.com/zklockkit/zklockkit/internal/canary"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
	"github.com/zklockkit/zklockkit/zklock/internal/session"

	"github.com/go-zookeeper/zk"
)

// removeNode deletes one of our nodes that is not (or no longer) held.
// While connected it tries on the caller's goroutine until deadline (one
// round trip, normally), so the caller returns with no node of its left.
// It stops as soon as the connection is lost (a server killed as the caller
// gave up held callers a second past their deadline, waiting for the
// reconnect) and at deadline, at most the answer bound from now, the bound for a
// connection that died silently. Otherwise, or if that was not enough, it
// goes on in the background until ZooKeeper confirms or the session ends.
func (q *Queues) removeNode(e *Node, deadline time.Time) {
	q.mu.Lock()
	e.releasing = true
	q.mu.Unlock()
	_, ready := q.s.Current()
	down := q.s.Epoch()
	if ready && time.Until(deadline) > 0 {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		go func() {
			select {
			case <-down:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := q.deleteNode(ctx, e.path, e.sessionID)
		cancel()
		if err == nil {
			return
		}
	}
	q.s.Go(func(ctx context.Context) { _ = q.deleteNode(ctx, e.path, e.sessionID) })
}

// deleteNode deletes path, created in session sid, retrying across
// connection loss. It returns nil once the node is known to be gone
// (deleted, already gone, or gone with its session).
func (q *Queues) deleteNode(ctx context.Context, path string, sid int64) error {
	defer q.startDeleting(path, sid)()
	defer func() {
		q.mu.Lock()
		if e := q.nodes[path]; e != nil && e.sessionID == sid {
			q.nodes.drop(e)
		}
		q.mu.Unlock()
	}()
	for {
		cur, ready := q.s.Current()
		if cur != sid {
			return nil // the session that owned it has expired
		}
		if !ready {
			if _, err := q.s.Wait(ctx); err != nil {
				if errors.Is(err, errs.ErrClosed) {
					return nil // closing the session deletes it
				}
				return err
			}
			continue
		}
		_, err := session.Call(ctx, func() (struct{}, error) { return struct{}{}, q.conn().Delete(path, -1) })
		switch {
		case err == nil, errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrClosing):
			return nil
		case errs.IsConnErr(err):
			continue
		case errs.IsCtxErr(err):
			return err
		default:
			q.log.Error("zklock: cannot delete lock node", "node", path, "err", err)
			return errs.Map(err)
		}
	}
}

// cleanupByID deletes, in the background, any node of queue parent whose
// protected name carries id, but keep (a name, or ""): the result of a
// create whose outcome we never learned. It lists the queue after a sync
// (listSynced), so that it also finds a create the leader was still
// committing when our connection was lost.
func (q *Queues) cleanupByID(parent, id string, sid int64, keep string) {
	q.s.Go(func(ctx context.Context) {
		for {
			cur, err := q.s.Wait(ctx)
			if err != nil || cur != sid {
				return
			}
			names, err := q.listSynced(parent)
			switch {
			case err == nil:
				for _, n := range names {
					if layout.ProtectedID(n) == id && n != keep {
						_ = q.deleteNode(ctx, parent+"/"+n, sid)
					}
				}
				return
			case errs.IsConnErr(err):
				continue
			default:
				return
			}
		}
	})
}

// listSynced lists queue parent after a sync, for a client that lost the
// reply to a create: the listing must show the create if it was made. A
// listing alone is read where the session is now, a server that may not
// yet have applied a create sent on the lost connection: the leader
// answers a sync only once it has committed what it proposed before it,
// and a create the leader sees after the session moved to this
// connection fails. Without the sync, a waiter found no node, created
// another, and the first stood ahead of it in the queue, unknown to it,
// until the session ended. No queue lists as no names.
func (q *Queues) listSynced(parent string) ([]string, error) {
	if !canary.On(canary.LostCreateNoSync) { // the canary lists without the sync
		if _, err := q.conn().Sync(parent); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, err
		}
	}
	names, _, err := q.conn().Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return names, err
}
