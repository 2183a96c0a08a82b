package zklock

import (
	"context"
	"errors"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"

	"github.com/go-zookeeper/zk"
)

// removeNode deletes one of our nodes that is not (or no longer) held.
// While connected it tries on the caller's goroutine until deadline (one
// round trip, normally), so the caller returns with no node of its left.
// It stops as soon as the connection is lost (a server killed as the caller
// gave up held callers a second past their deadline, waiting for the
// reconnect) and at deadline, at most answerBound from now, the bound for a
// connection that died silently. Otherwise, or if that was not enough, it
// goes on in the background until ZooKeeper confirms or the session ends.
func (c *Client) removeNode(e *nodeEntry, deadline time.Time) {
	c.mu.Lock()
	e.releasing = true
	ready, down := c.ready && !c.closed, c.downCh
	c.mu.Unlock()
	if ready && time.Until(deadline) > 0 {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		go func() {
			select {
			case <-down:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := c.deleteNode(ctx, e.path, e.sessionID)
		cancel()
		if err == nil {
			return
		}
	}
	c.goBackground(func(ctx context.Context) { _ = c.deleteNode(ctx, e.path, e.sessionID) })
}

// answerBound is how long a try, or the on-the-spot delete of a failed
// acquire's node, may wait on ZooKeeper: a third of the session timeout
// (the client pings every third), at most a second.
func (c *Client) answerBound() time.Duration {
	return min(c.cfg.sessionTimeout/3, time.Second)
}

// deleteNode deletes path, created in session sid, retrying across
// connection loss. It returns nil once the node is known to be gone
// (deleted, already gone, or gone with its session).
func (c *Client) deleteNode(ctx context.Context, path string, sid int64) error {
	defer c.startDeleting(path, sid)()
	defer func() {
		c.mu.Lock()
		if e := c.nodes[path]; e != nil && e.sessionID == sid {
			c.nodes.drop(e)
		}
		c.mu.Unlock()
	}()
	for {
		cur, ready := c.session()
		if cur != sid {
			return nil // the session that owned it has expired
		}
		if !ready {
			if _, err := c.waitReady(ctx); err != nil {
				if errors.Is(err, ErrClosed) {
					return nil // closing the session deletes it
				}
				return err
			}
			continue
		}
		_, err := call(ctx, func() (struct{}, error) { return struct{}{}, c.conn.Delete(path, -1) })
		switch {
		case err == nil, errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrClosing):
			return nil
		case errs.IsConnErr(err):
			continue
		case errs.IsCtxErr(err):
			return err
		default:
			c.log.Error("zklock: cannot delete lock node", "node", path, "err", err)
			return errs.Map(err)
		}
	}
}

// cleanupByID deletes, in the background, any node of queue parent whose
// protected name carries id, but keep (a name, or ""): the result of a
// create whose outcome we never learned. It lists the queue after a sync
// (listSynced), so that it also finds a create the leader was still
// committing when our connection was lost.
func (c *Client) cleanupByID(parent, id string, sid int64, keep string) {
	c.goBackground(func(ctx context.Context) {
		for {
			cur, err := c.waitReady(ctx)
			if err != nil || cur != sid {
				return
			}
			names, err := c.listSynced(parent)
			switch {
			case err == nil:
				for _, n := range names {
					if layout.ProtectedID(n) == id && n != keep {
						_ = c.deleteNode(ctx, parent+"/"+n, sid)
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
func (c *Client) listSynced(parent string) ([]string, error) {
	if _, err := c.conn.Sync(parent); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	names, _, err := c.conn.Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return names, err
}
