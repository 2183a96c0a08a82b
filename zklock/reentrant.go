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

// reenter looks in ctx for live leases of owner on the queues in keys. If
// one lease holds them all, it is re-entered (counted) and returned as
// whole. Otherwise lenders maps each key that some lease holds to that
// lease (the innermost one): the acquire borrows those parts from it (see
// leaseState.borrow) and waits only for the rest. err is ErrUpgrade when
// a read lease would have to become a write lease. Semaphore and election
// leases are never re-entered: a semaphore acquire under a semaphore lease
// takes another slot.
func reenter(ctx context.Context, owner releaser, keys []string, mode Mode) (whole *Lease, lenders map[string]*leaseState, err error) {
	if mode == Semaphore || mode == Election || ctx == nil {
		return nil, nil, nil
	}
	for cl, _ := ctx.Value(ctxKey{}).(*ctxLease); cl != nil; cl = cl.next {
		st := cl.st
		if st.owner != owner || st.mode == Semaphore || st.mode == Election {
			continue
		}
		st.mu.Lock()
		if st.ended || st.releasing {
			st.mu.Unlock()
			continue
		}
		covered := 0
		for _, k := range keys {
			if !slices.ContainsFunc(st.holds, func(h *heldNode) bool { return h.parent == k }) {
				continue
			}
			if st.mode == Read && mode != Read {
				st.mu.Unlock()
				return nil, nil, ErrUpgrade
			}
			covered++
			if _, ok := lenders[k]; !ok {
				if lenders == nil {
					lenders = make(map[string]*leaseState)
				}
				lenders[k] = st
			}
		}
		if covered == len(keys) && len(lenders) == len(keys) && lendersAre(lenders, st) {
			st.refs++
			st.mu.Unlock()
			return &Lease{st: st}, nil, nil
		}
		st.mu.Unlock()
	}
	return nil, lenders, nil
}

// lendersAre reports whether every key is lent by st.
func lendersAre(lenders map[string]*leaseState, st *leaseState) bool {
	for _, l := range lenders {
		if l != st {
			return false
		}
	}
	return true
}

// LeaseFromContext returns the innermost lease carried by ctx (see
// Lease.Context), or nil. The returned value shows the lease (Token, Done,
// Err...) but cannot release it: its Release returns ErrReleased.
func LeaseFromContext(ctx context.Context) *Lease {
	if cl, _ := ctx.Value(ctxKey{}).(*ctxLease); cl != nil {
		l := &Lease{st: cl.st, view: true}
		l.released.Store(true)
		return l
	}
	return nil
}
