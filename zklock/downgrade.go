package zklock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
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
// meanwhile is lost too: neither lease is held, and the error matches
// ErrLeaseLost. Upgrading read to write is not offered: it deadlocks in
// every read/write lock recipe.
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
	c, ok := st.owner.(*Client)
	if !ok {
		return nil, fmt.Errorf("%w: Downgrade needs a ZooKeeper lease", ErrInvalidOption)
	}
	st.mu.Lock()
	if st.ended || st.releasing {
		st.mu.Unlock()
		return nil, ErrReleased
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

	rs := newLeaseState(c, nextID(), st.resources, Read)
	a := &acquisition{b: c, cfg: acquireConfig{mode: Read}, id: rs.id, resources: rs.resources, st: rs}
	w := &waiter{acquisition: a, c: c, target: &target{resource: old.resource, parent: old.parent}, sid: old.sessionID}
	if err := w.create(ctx); err != nil {
		if errors.Is(err, errRestart) {
			return nil, errorf("downgrade %q: session changed: %w", st.resource, ErrLeaseLost)
		}
		return nil, err
	}
	kids, err := w.firstLook(ctx)
	if err != nil {
		w.fail(err)
		return nil, err
	}
	oldName := old.path[len(old.parent)+1:]
	i := slices.IndexFunc(kids, func(k child) bool { return k.name == oldName })
	j := slices.IndexFunc(kids, func(k child) bool { return k.name == w.n.name })
	if i < 0 || j < 0 {
		w.fail(ErrLeaseLost)
		return nil, errorf("downgrade %q: %w", st.resource, ErrLeaseLost)
	}
	for _, k := range kids[i+1 : j] {
		if k.mode != Read {
			w.fail(ErrDowngradeBlocked)
			return nil, errorf("downgrade %q: %w", st.resource, ErrDowngradeBlocked)
		}
	}
	// The session may have expired while we made the read node (a pause,
	// a partition): prove it to the leader before handing out a lease,
	// as every grant does (waiter.hold), and make sure the write lease
	// still stands.
	if err := w.proveAlive(ctx); err != nil {
		w.fail(err)
		if errors.Is(err, errRestart) {
			return nil, errorf("downgrade %q: session changed: %w", st.resource, ErrLeaseLost)
		}
		return nil, errorf("downgrade %q: %w", st.resource, err)
	}
	if err := l.Err(); err != nil {
		w.fail(err)
		return nil, errorf("downgrade %q: %w", st.resource, err)
	}
	// Our read node holds as soon as the write node is gone.
	c.mu.Lock()
	w.n.entry.st = rs
	w.n.entry.position.Store(0)
	c.mu.Unlock()
	_ = rs.addHold(&heldNode{resource: old.resource, parent: old.parent, path: w.n.path, token: w.n.token, sessionID: w.sid, entry: w.n.entry}) // rs is new: cannot have ended
	if !w.n.ownWatched {
		w.n.entry.watchLater(c, 0)
	}
	rs.mu.Lock()
	rs.acquired = time.Now()
	rs.mu.Unlock()
	c.observe(ctx, Event{Kind: EventAcquired, ID: rs.id, Resource: rs.resource, Resources: rs.resources, Mode: Read, Path: w.n.path, Token: w.n.token, SessionID: w.sid})
	if err := l.Release(ctx); err != nil && !errors.Is(err, zk.ErrNoNode) {
		// The read lease is held either way; the write node goes in the
		// background.
		c.log.Warn("zklock: downgrade: write node not yet deleted", "node", old.path, "err", err)
	}
	c.kick()
	read := &Lease{st: rs}
	if err := read.Err(); err != nil {
		// The write node's delete waited for ZooKeeper (a partition, a
		// lost reply) while the session went unverified or expired: the
		// read lease was lost before the caller had it, and a writer may
		// have come in since. Neither lease is held.
		return nil, errorf("downgrade %q: %w", st.resource, err)
	}
	return read, nil
}
