package zklock

import (
	"context"
	"time"
)

// releaseHolds deletes every node of a lease being released. If ctx ends
// before ZooKeeper confirms, the rest goes on in the background and the
// lease ends when it is done.
func (c *Client) releaseHolds(ctx context.Context, st *leaseState) error {
	holds := st.ownHolds() // borrowed parts go back to their lenders (finishRelease)
	c.mu.Lock()
	for _, h := range holds {
		h.entry.releasing = true
		if h.entry.watchT != nil {
			h.entry.watchT.Stop()
		}
	}
	c.mu.Unlock()
	for i, h := range holds {
		if err := c.deleteNode(ctx, h.path, h.sessionID); err != nil {
			rest := holds[i:]
			c.goBackground(func(bctx context.Context) {
				for _, h := range rest {
					if c.deleteNode(bctx, h.path, h.sessionID) != nil {
						return // closing: the session's end deletes them
					}
				}
				st.finishRelease(bctx)
			})
			return err
		}
	}
	c.kick()
	return nil
}

// dropHolds lets go of the nodes of a lease that was lost or whose acquire
// failed: any node that may still exist is deleted in the background.
func (c *Client) dropHolds(st *leaseState) {
	for _, h := range st.ownHolds() {
		c.mu.Lock()
		h.entry.releasing = true
		_, present := c.nodes[h.path]
		c.mu.Unlock()
		if present {
			c.goBackground(func(ctx context.Context) { _ = c.deleteNode(ctx, h.path, h.sessionID) })
		}
	}
	c.kick()
}

// abandonHolds deletes the nodes of a failed acquire's parts on the spot,
// as a failed waiter deletes its own (removeNode: bounded by the answer
// bound and the connection, then in the background).
func (c *Client) abandonHolds(st *leaseState) {
	deadline := time.Now().Add(c.answerBound())
	for _, h := range st.ownHolds() {
		c.mu.Lock()
		_, present := c.nodes[h.path]
		c.mu.Unlock()
		if present {
			c.removeNode(h.entry, deadline)
		}
	}
	c.kick()
}
