package zklock

import (
	"context"
	"sync/atomic"
	"time"
)

// Lease is a held lock. It is returned by a successful acquire and is
// released once with Release. Its Done channel is closed when it ends,
// released or lost; Err then says which.
//
// A Lease is safe for concurrent use.
type Lease struct {
	st       *leaseState
	released atomic.Bool
	// own is this Lease's Done channel, made when first asked for while
	// the lease is held, and closed when the state ends or when this Lease
	// is released while a re-entry of it still holds (see
	// leaseState.countDown). st.mu guards its closing.
	own atomic.Pointer[chan struct{}]
	// gone: released while the state lived on, for a re-entry of it
	// (st.mu).
	gone bool
	view bool // made by LeaseFromContext: it cannot be released
}

// Resource returns the resource name (for a multi-resource lease, the names
// joined by commas, in the order given).
func (l *Lease) Resource() string { return l.st.resource }

// Mode returns the lock mode.
func (l *Lease) Mode() Mode { return l.st.mode }

// Token returns the fencing token: the czxid of the lease's znode. It
// increases with every lease granted by the ensemble, so a store that
// remembers the largest token it has seen can refuse writes from a holder
// whose lease has since been lost (a paused process, for instance). For a
// multi-resource lease it is the largest of its parts' tokens: fence each
// resource with its own part's token (Parts).
func (l *Lease) Token() int64 { return l.st.Token() }

// Path returns the znode path of the lease's node (for a multi-resource
// lease, the first in canonical order).
func (l *Lease) Path() string {
	l.st.mu.Lock()
	defer l.st.mu.Unlock()
	if len(l.st.holds) == 0 {
		return ""
	}
	return l.st.holds[0].path
}

// Part is one resource of a lease: the node that holds it and that node's
// fencing token.
type Part struct {
	Resource string
	Path     string
	Token    int64
}

// Parts returns the lease's parts in canonical order (by znode path): one
// for a single-resource lease. A store fenced per resource must check each
// resource against its own part's token: Token, the largest of them, is
// not a token of every resource (a later lease of one resource alone can
// have a smaller one).
func (l *Lease) Parts() []Part {
	l.st.mu.Lock()
	defer l.st.mu.Unlock()
	ps := make([]Part, len(l.st.holds))
	for i, h := range l.st.holds {
		ps[i] = Part{Resource: h.resource, Path: h.path, Token: h.token}
	}
	return ps
}

// SessionID returns the ZooKeeper session that holds the lease.
func (l *Lease) SessionID() int64 { return l.st.sessionID() }

// Acquired returns when the lock was acquired.
func (l *Lease) Acquired() time.Time { return l.st.acquired }

// Waited returns how long the acquire waited.
func (l *Lease) Waited() time.Duration { return l.st.waited }

// Done returns a channel that is closed when the lease ends: released, or
// lost. A re-entered lease (an acquire under a lease's Context) ends when
// it is released, though the node goes only with the last of them.
func (l *Lease) Done() <-chan struct{} {
	if p := l.own.Load(); p != nil {
		return *p
	}
	st := l.st
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case l.own.Load() != nil:
		return *l.own.Load()
	case l.gone:
		return closedChan
	case st.ended, l.view:
		// A view (LeaseFromContext) cannot be released: it ends with the
		// state, and needs no channel of its own, which would stay
		// registered until then, one per call.
		return st.done
	}
	ch := make(chan struct{})
	l.own.Store(&ch)
	st.views = append(st.views, l)
	return ch
}

// closedChan is the Done of a Lease released while a re-entry of it holds.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Err returns nil while the lease is held, ErrReleased after its release,
// and a *LostError (matching ErrLeaseLost) after a loss.
func (l *Lease) Err() error {
	l.st.mu.Lock()
	defer l.st.mu.Unlock()
	switch {
	case l.gone:
		return ErrReleased
	case !l.st.ended:
		return nil
	}
	return l.st.err
}

// Context returns a context derived from parent that is cancelled when the
// lease ends, with the lease's Err as its cause (context.Cause). It also
// carries the lease, so an acquire of the same resource through the same
// Client under this context re-enters instead of deadlocking.
func (l *Lease) Context(parent context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	st := l.st
	st.mu.Lock()
	if st.ended || l.gone {
		err := st.err
		if l.gone {
			err = ErrReleased
		}
		st.mu.Unlock()
		cancel(err)
		return withLease(ctx, st)
	}
	// Cancelled synchronously when the lease ends (so once Release returns
	// or Done is closed, the context is done too); forgotten when the
	// context ends first.
	key := new(int)
	if st.derived == nil {
		st.derived = make(map[*int]derivedCtx)
	}
	stop := context.AfterFunc(ctx, func() {
		st.mu.Lock()
		delete(st.derived, key)
		st.mu.Unlock()
	})
	st.derived[key] = derivedCtx{cancel: cancel, stop: stop, by: l}
	st.mu.Unlock()
	return withLease(ctx, st)
}

// Release gives the lock back. It returns once ZooKeeper has confirmed the
// deletion of the lease's node; if ctx ends first it returns an error and
// the deletion goes on in the background (across reconnects) until
// confirmed. A second Release returns ErrReleased; a Release after the lease
// was lost returns its *LostError. Releasing a re-entered lease (or the
// lease it re-entered) ends that Lease (its Err says ErrReleased, its
// contexts are cancelled, its Done is closed) and counts down: the node
// goes when the last of them is released.
func (l *Lease) Release(ctx context.Context) error {
	if l == nil {
		return ErrReleased
	}
	if !l.released.CompareAndSwap(false, true) {
		return ErrReleased
	}
	return l.st.release(ctx, l)
}
