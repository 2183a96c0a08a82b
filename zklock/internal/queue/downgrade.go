package queue

import (
	"context"
	"errors"
	"slices"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
)

// Downgrade queues a read node in req's queue (req.Kind is layout.Read)
// behind held, the name of a write or exclusive node of ours on session
// sid that holds the lock, for package zklock's Lease.Downgrade. The
// read node holds as soon as held is gone if no writer is queued between
// the two: Downgrade then returns its waiter, to be granted to the read
// lease (Grant) before held is deleted. Otherwise it deletes the read
// node and fails: ErrDowngradeBlocked when a writer is between them,
// ErrLeaseLost when held or the session is gone.
func (q *Queues) Downgrade(ctx context.Context, req *Request, held string, sid int64) (*Waiter, error) {
	w := &Waiter{q: q, req: req, sid: sid}
	if err := w.create(ctx); err != nil {
		if errors.Is(err, errRestart) {
			return nil, errs.Errorf("downgrade %q: session changed: %w", req.Resource, errs.ErrLeaseLost)
		}
		return nil, err
	}
	kids, err := w.firstLook(ctx)
	if err != nil {
		w.fail(err)
		return nil, err
	}
	i := slices.IndexFunc(kids, func(k layout.Child) bool { return k.Name == held })
	j := slices.IndexFunc(kids, func(k layout.Child) bool { return k.Name == w.n.name })
	if i < 0 || j < 0 {
		w.fail(errs.ErrLeaseLost)
		return nil, errs.Errorf("downgrade %q: %w", req.Resource, errs.ErrLeaseLost)
	}
	for _, k := range kids[i+1 : j] {
		if k.Kind != layout.Read {
			w.fail(errs.ErrDowngradeBlocked)
			return nil, errs.Errorf("downgrade %q: %w: a writer is queued behind the lease, and would go first", req.Resource, errs.ErrDowngradeBlocked)
		}
	}
	// The session may have expired while we made the read node (a pause,
	// a partition): prove it to the leader before handing out a lease,
	// as every grant does (hold).
	if err := w.proveAlive(ctx); err != nil {
		w.fail(err)
		if errors.Is(err, errRestart) {
			return nil, errs.Errorf("downgrade %q: session changed: %w", req.Resource, errs.ErrLeaseLost)
		}
		return nil, errs.Errorf("downgrade %q: %w", req.Resource, err)
	}
	return w, nil
}
