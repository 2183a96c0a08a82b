package zklock

import (
	"context"
	"time"
)

// kick wakes the loss watchdog when it sleeps with nothing to watch (after
// a deadline passed with no lease held); otherwise it wakes by itself at the
// next deadline, so acquires and releases need not wake it.
func (c *Client) kick() {
	if !c.watchIdle.Load() {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// watchdog declares held leases lost once the session can no longer be
// proven alive: at the last moment ZooKeeper's leader is known to have
// heard from us (quorum.go), plus the negotiated session timeout, minus the
// loss margin. ZooKeeper cannot expire the session, and so cannot grant
// our locks to anyone else, before that moment plus the margin.
func (c *Client) watchdog() {
	defer c.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		d := time.Until(c.lossDeadline())
		if d <= 0 {
			// Nothing heard for too long. Only now look for held leases
			// (an acquire that finds the deadline passed proves the session
			// alive first, see waiter.hold), then sleep until nudged.
			c.loseUnverified()
			d = time.Hour
			c.watchIdle.Store(true)
		}
		timer.Reset(d)
		select {
		case <-c.closeCh:
			return
		case <-c.wake:
		case <-timer.C:
		}
		c.watchIdle.Store(false)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// unreachable reports whether ZooKeeper is out of reach: disconnected, or
// silent for over half the session timeout (it answers a ping every third),
// which is how a partition looks before go-zookeeper notices it.
func (c *Client) unreachable() bool {
	if _, ready := c.session(); !ready {
		return true
	}
	anchor, timeout := c.live.snapshot()
	return time.Since(anchor) > timeout/2
}

// lossDeadline returns when held leases must be given up if the leader is
// not heard to hear from us again: the proven anchor (see quorum.go) plus
// the negotiated session timeout, minus the loss margin.
func (c *Client) lossDeadline() time.Time {
	_, timeout := c.live.snapshot()
	sid, _ := c.session()
	margin := c.cfg.lossMarginFor(timeout)
	esid, est := c.live.established()
	if esid != sid {
		est = time.Time{}
	}
	proven := c.quorum.proven(sid, est, timeout)
	if proven.IsZero() {
		return proven // nothing proven on this session: now is too late
	}
	return proven.Add(timeout - margin)
}

func (c *Client) loseUnverified() {
	c.mu.Lock()
	orphans := c.nodes.dropWhere(func(e *nodeEntry) bool { return e.st != nil && !e.releasing })
	c.mu.Unlock()
	lost := make([]*leaseState, len(orphans))
	for i, e := range orphans {
		lost[i] = e.st
	}
	if len(lost) > 0 {
		c.log.Warn("zklock: session cannot be proven alive; leases given up", "leases", len(lost))
	}
	for _, st := range lost {
		st.lose(LossSessionUnverified)
	}
	// If the session survives after all, the nodes still exist: delete them.
	for _, e := range orphans {
		c.goBackground(func(ctx context.Context) { _ = c.deleteNode(ctx, e.path, e.sessionID) })
	}
}
