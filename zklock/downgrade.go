package zklock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/internal/canary"
	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
	"github.com/zklockkit/zklockkit/zklock/internal/queue"
)

// Downgrade turns a held write (or exclusive) lease into a read lease
// without a moment in which the resource is unlocked: it queues a read node,
// and if no writer is queued between the lease's node and the new one, the
// read node already holds (only readers precede it once the write node is
// gone), so the write node is deleted and the read lease returned. The
// write lease is then released.
//
// If a writer is queued behind the lease, the new read node would come after
// it, and deleting the write node would let that writer in first: Downgrade
// then deletes the read node, keeps the write lease, and returns an error
// matching ErrDowngradeBlocked. If the session is lost before the write
// node is gone (the delete waited out a partition), the read lease made
// meanwhile is lost too: neither lease is held (the write lease has ended:
// its Done is closed, and Err is the loss, or ErrReleased if the session's
// end deleted the write node first, which completes the release Downgrade
// began), and the error matches ErrLeaseLost. A lease that has ended
// before the call says why: its loss, or ErrReleased. Upgrading read to
// write is not offered: it deadlocks in every read/write lock recipe.
func (l *Lease) Downgrade(ctx context.Context) (*Lease, error) {
	st := l.st
	if l.released.Load() {
		// This Lease was released (its state may live on for a re-entry
		// that still holds it): it has nothing left to downgrade.
		return nil, ErrReleased
	}
	if d, ok := st.owner.(downgrader); ok {
		return d.downgrade(ctx, l)
	}
	b, ok := st.owner.(*zkBackend)
	if !ok {
		return nil, fmt.Errorf("%w: Downgrade needs a ZooKeeper lease", ErrInvalidOption)
	}
	c := b.c
	st.mu.Lock()
	if st.ended || st.releasing {
		err := st.endErr()
		st.mu.Unlock()
		return nil, err
	}
	if st.refs > 1 {
		// Someone further out re-entered this lease and counts on the
		// write lock: it is not this caller's to give up.
		refs := st.refs
		st.mu.Unlock()
		return nil, fmt.Errorf("%w: the lease is re-entered (%d references): release the inner ones first", ErrDowngradeBlocked, refs)
	}
	if (st.mode != Write && st.mode != Exclusive) || len(st.holds) != 1 {
		st.mu.Unlock()
		return nil, fmt.Errorf("%w: only a single-resource write lease can be downgraded", ErrInvalidOption)
	}
	old := st.holds[0]
	st.mu.Unlock()

	rs := newLeaseState(b, nextID(), st.resources, Read)
	req := &queue.Request{Resource: old.resource, Parent: old.parent, Kind: layout.Read, Data: c.nodeData(acquireConfig{})}
	w, err := c.q.Downgrade(ctx, req, old.path[len(old.parent)+1:], old.sessionID)
	if err != nil {
		return nil, err
	}
	if err := l.Err(); err != nil {
		w.Fail(err)
		return nil, errs.Errorf("downgrade %q: %w", st.resource, err)
	}
	// Our read node holds as soon as the write node is gone.
	h := w.Held()
	_ = rs.addHold(&heldNode{resource: old.resource, parent: old.parent, path: h.Path, token: h.Token, sessionID: h.SessionID, node: h.Node}) // rs is new: cannot have ended
	w.Grant(rs)
	rs.mu.Lock()
	rs.acquired = time.Now()
	rs.mu.Unlock()
	b.observe(ctx, Event{Kind: EventAcquired, ID: rs.id, Resource: rs.resource, Resources: rs.resources, Mode: Read, Path: h.Path, Token: h.Token, SessionID: h.SessionID})
	if err := l.Release(ctx); err != nil && !errors.Is(err, zk.ErrNoNode) {
		// The read lease is held either way; the write node goes in the
		// background.
		c.cfg.logger.Warn("zklock: downgrade: write node not yet deleted", "node", old.path, "err", err)
	}
	c.sess.Kick()
	read := &Lease{st: rs}
	if err := read.Err(); err != nil && !canary.On(canary.DowngradeLost) {
		// The write node's delete waited for ZooKeeper (a partition, a
		// lost reply) while the session went unverified or expired: the
		// read lease was lost before the caller had it, and a writer may
		// have come in since. Neither lease is held: the write lease
		// ends now with the same loss (its Done closes, its contexts are
		// cancelled), though its node's delete may still be under way in
		// the background, so that its holder does not work on under it.
		st.end(err)
		return nil, errs.Errorf("downgrade %q: %w", st.resource, err)
	}
	return read, nil
}

// endErr is why a lease that has ended, or is being released, cannot be
// used: its loss, or ErrReleased. st.mu is held.
func (st *leaseState) endErr() error {
	if st.ended && st.err != nil {
		return st.err
	}
	return ErrReleased
}
