package zklock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Proof of life from the leader.
//
// ZooKeeper's leader expires a session, not the server the client talks
// to. A follower answers the client's pings on its own; it passes the
// sessions it heard from on to the leader when the leader pings it (every
// tickTime/2). A follower cut off from the leader, silently, goes on
// answering pings until it gives up on the leader (syncLimit × tickTime),
// while the leader, hearing nothing of the session, expires it and grants
// its locks to someone else. So an answered ping proves that the server
// heard the client, not that the leader did.
//
// A sync does: the follower forwards it to the leader and answers once the
// leader has. Sent at s and answered, it proves the leader-follower link
// was up after the follower had seen the client's earlier requests; the
// follower's touch table, carrying the client's session, reached the
// leader with the follower's answer to a leader ping no later than that,
// so the leader heard of the session at or after the client's previous
// request, sent no earlier than s minus one sync interval, minus half a
// tick for the ping that carried it. The client does not know the tick;
// it is at most half the negotiated session timeout (ZooKeeper's minimum
// timeout is two ticks), so the proven anchor is
//
//	s − interval − timeout/4
//
// The client sends a sync every interval (a tenth of the session timeout)
// while it has lock nodes, and one before granting a lock when the proof
// has run out (waiter.hold). Leases are given up at the proven anchor plus
// the session timeout minus the loss margin (lossDeadline): with the
// default margin of a quarter, 40% of the timeout after the last answered
// sync.
type quorum struct {
	mu     sync.Mutex
	sent   time.Time // the send time of the latest answered sync
	sid    int64     // the session it was answered on
	flying atomic.Bool
}

// proven returns when the leader is known to have heard from session sid,
// from the latest answered sync, or est, the send time of the connect
// request that established or resumed sid (the leader creates and
// revalidates sessions); the zero time if neither is known.
func (q *quorum) proven(sid int64, est time.Time, timeout time.Duration) time.Time {
	q.mu.Lock()
	sent := time.Time{}
	if q.sid == sid {
		sent = q.sent
	}
	q.mu.Unlock()
	if est.After(sent) {
		sent = est
	}
	if sent.IsZero() {
		return sent
	}
	return sent.Add(-proofInterval(timeout) - timeout/4)
}

// proofStale reports whether the proof runs out within the next proof
// interval: an acquire then asks the prover for a fresh one at
// once, so that it is in by the time the lease is granted.
func (c *Client) proofStale() bool {
	return time.Until(c.lossDeadline()) < proofInterval(c.cfg.sessionTimeout)
}

// proveSoon wakes the prover if the proof is about to run out.
func (c *Client) proveSoon() {
	if c.proofStale() {
		select {
		case c.proveNow <- struct{}{}:
		default:
		}
	}
}

func (q *quorum) answered(sid int64, sent time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if sid != q.sid || sent.After(q.sent) {
		q.sid, q.sent = sid, sent
	}
}

// proofInterval is how often a client with lock nodes proves its session
// to the leader.
func proofInterval(timeout time.Duration) time.Duration {
	return max(timeout/10, 20*time.Millisecond)
}

// prove sends one sync through the leader and records its proof. It
// returns once answered, or on ctx's end or a connection error (the sync
// may still be answered later, and count then).
func (c *Client) prove(ctx context.Context) error {
	sid, ready := c.session()
	if !ready {
		_, err := c.waitReady(ctx)
		return err
	}
	sent := time.Now()
	_, err := call(ctx, func() (string, error) {
		p, err := c.conn.Sync("/")
		if err == nil {
			c.quorum.answered(sid, sent)
			c.kick()
		}
		return p, err
	})
	return err
}

// prover keeps the proof fresh while the client has lock nodes: one sync
// in flight at a time, every proofInterval.
func (c *Client) prover() {
	defer c.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-c.closeCh:
			return
		case <-t.C:
		case <-c.proveNow:
		}
		_, timeout := c.wire.Snapshot()
		if timeout <= 0 {
			timeout = c.cfg.sessionTimeout
		}
		c.mu.Lock()
		busy := len(c.nodes) > 0 || len(c.creates) > 0
		c.mu.Unlock()
		if busy && c.quorum.flying.CompareAndSwap(false, true) {
			c.goBackground(func(ctx context.Context) {
				defer c.quorum.flying.Store(false)
				_ = c.prove(ctx)
			})
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(proofInterval(timeout))
	}
}
