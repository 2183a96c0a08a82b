package zklock

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"

	"github.com/go-zookeeper/zk"
)

// nodeEntry tracks one lock node of ours while it may exist.
type nodeEntry struct {
	path      string
	resource  string
	mode      Mode
	sessionID int64
	since     time.Time
	position  atomic.Int64
	gone      chan struct{} // closed when the node is known to be gone
	st        *leaseState   // set once held
	releasing bool
	watchT    *time.Timer // pending deferred watch on the node (see watchLater)
	// watched: this session has a data watch on the node (set by its
	// waiter, by rearm, or by a local successor: see awaitLocal), so its
	// deletion by anyone reaches the client.
	watched atomic.Bool
}

// watchLater sets the data watch on a node held at once after delay,
// unless the lease ends first. A deletion before the
// watch is set is found by the watch's read itself (no node: lost).
func (e *nodeEntry) watchLater(c *Client, delay time.Duration) {
	set := func() {
		c.goBackground(func(ctx context.Context) { c.rearm(ctx, e) })
	}
	if delay <= 0 {
		set()
		return
	}
	t := time.AfterFunc(delay, func() {
		c.mu.Lock()
		live := c.nodes[e.path] == e && !e.releasing
		c.mu.Unlock()
		if live {
			set()
		}
	})
	c.mu.Lock()
	e.watchT = t
	c.mu.Unlock()
}

// rearm sets the data watch on our node again after a data change, and
// passes on a revocation request.
func (c *Client) rearm(ctx context.Context, e *nodeEntry) {
	for {
		data, _, _, err := c.conn.GetW(e.path)
		switch {
		case err == nil:
			e.watched.Store(true)
			c.mu.Lock()
			st := e.st
			c.mu.Unlock()
			if st != nil && bytes.Equal(data, revokeMessage) {
				st.requestRevoke()
			}
			return
		case errors.Is(err, zk.ErrNoNode):
			c.onEvent(zk.Event{Type: zk.EventNodeDeleted, Path: e.path})
			return
		case errs.IsConnErr(err):
			if _, err := c.waitReady(ctx); err != nil {
				return
			}
		default:
			return
		}
	}
}
