package zklock

import (
	"context"
	"slices"
)

// Reentrancy through the context. Go has no thread identity, so a lease
// put into a context with Lease.Context is what marks "the same caller":
// an acquire under that context, through the same Client, of a resource
// the lease holds re-enters it (counted) instead of queueing behind it.
// Goroutines that do not carry the context wait as usual.

type ctxKey struct{}

type ctxLease struct {
	st   *leaseState
	next *ctxLease
}

func withLease(ctx context.Context, st *leaseState) context.Context {
	prev, _ := ctx.Value(ctxKey{}).(*ctxLease)
	return context.WithValue(ctx, ctxKey{}, &ctxLease{st: st, next: prev})
}

// reenter looks in ctx for a live lease of owner that holds every queue in
// keys. ok reports whether one was found; err is ErrUpgrade when a read
// lease is asked to become a write lease.
func reenter(ctx context.Context, owner releaser, keys []string, mode Mode) (l *Lease, ok bool, err error) {
	if mode == Semaphore || ctx == nil {
		return nil, false, nil
	}
	for cl, _ := ctx.Value(ctxKey{}).(*ctxLease); cl != nil; cl = cl.next {
		st := cl.st
		if st.owner != owner || st.mode == Semaphore || st.mode == Election {
			continue
		}
		st.mu.Lock()
		covers := true
		for _, k := range keys {
			if !slices.ContainsFunc(st.holds, func(h *hold) bool { return h.parent == k }) {
				covers = false
				break
			}
		}
		if !covers || st.ended || st.releasing {
			st.mu.Unlock()
			continue
		}
		if st.mode == Read && mode != Read {
			st.mu.Unlock()
			return nil, true, ErrUpgrade
		}
		st.refs++
		st.mu.Unlock()
		return &Lease{st: st}, true, nil
	}
	return nil, false, nil
}

// LeaseFromContext returns the innermost lease carried by ctx (see
// Lease.Context), or nil. The returned value shows the lease (Token, Done,
// Err...) but cannot release it: its Release returns ErrReleased.
func LeaseFromContext(ctx context.Context) *Lease {
	if cl, _ := ctx.Value(ctxKey{}).(*ctxLease); cl != nil {
		l := &Lease{st: cl.st}
		l.released.Store(true)
		return l
	}
	return nil
}
