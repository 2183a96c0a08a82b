package zklock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// backend is a lock backend under the acquire shell (acquireWith): the
// ZooKeeper Client, the MemoryLocker, and any Driver through NewLocker.
// The shell does what every Locker shares: options and their checks,
// resource names and their canonical order, re-entry through the context,
// MaxWait, a try's bound, starting over when a held part is lost, events;
// the backend queues and holds.
type backend interface {
	releaser
	// key returns resource's queue key (the Client: its queue's znode
	// path), or a *ResourceError.
	key(resource string, raw bool) (string, error)
	// check refuses an acquire the backend cannot make.
	check(cfg acquireConfig) error
	// acquireParts takes every part of ts, in their (canonical) order,
	// for st: a part a lender holds is borrowed (leaseState.borrow), the
	// others queued for. It returns errPartLost when a part it held was
	// lost while it waited for another (the shell then gives everything
	// back and calls it again), and on error the part that failed and,
	// if known, its session.
	acquireParts(ctx context.Context, st *leaseState, p acquireParts) (failed target, sid int64, err error)
	// answerBound is how long a try may wait on the backend (0: no bound
	// of the shell's).
	answerBound() time.Duration
	// annotate adds what the backend knows to the error of a wait that
	// ended (the Client: ErrUnavailable when ZooKeeper was out of reach).
	annotate(err error) error
	// acquired runs after each successful acquire.
	acquired()
}

// target is one resource of an acquire, resolved to its queue key.
type target struct {
	resource string
	parent   string
}

// acquireParts is one acquire's parts and how to take them.
type acquireParts struct {
	ts       []target
	lenders  map[string]*leaseState // parts a lease in the context holds (re-entered)
	cfg      acquireConfig
	deleteBy time.Time // a try's deadline: when a failed part stops deleting its node on the spot
}

// errPartLost ends the wait of a multi-resource acquire one of whose parts,
// already held, was lost: the acquire gives everything back and queues
// again (see acquireWith). It never reaches the caller.
var errPartLost = errors.New("zklock: a part already held was lost")

// acquireWith is the acquire shell: Acquire and AcquireAll of the Client,
// the MemoryLocker and every NewLocker.
func acquireWith(ctx context.Context, b backend, resources []string, cfg acquireConfig) (*Lease, error) {
	if len(resources) == 0 {
		return nil, &ResourceError{Reason: "no resources given"}
	}
	if cfg.mode < Exclusive || cfg.mode > Election || cfg.mode == Election && cfg.data == nil {
		return nil, fmt.Errorf("%w: mode %v: acquire Exclusive, Read or Write, a semaphore with Limit, an election with Campaign or Lead", ErrInvalidOption, cfg.mode)
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.mode == Semaphore && cfg.limit < 1 {
		return nil, fmt.Errorf("%w: semaphore limit must be at least 1", ErrInvalidOption)
	}
	if err := b.check(cfg); err != nil {
		return nil, err
	}
	ts, err := targets(b, resources, cfg.raw)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = t.parent
	}
	whole, lenders, err := reenter(ctx, b, keys, cfg.mode)
	if whole != nil || err != nil {
		return whole, err
	}
	st, start, wctx, cancel := beginAcquire(ctx, b, resources, cfg)
	defer cancel()
	p := acquireParts{ts: ts, lenders: lenders, cfg: cfg}
	if bound := b.answerBound(); cfg.try && bound > 0 {
		// A try never waits for the queue, nor on the backend past its
		// answer bound: it then answers ErrUnavailable (errTryBound), and
		// its on-the-spot delete of a node that found the lock busy stops
		// at the same deadline.
		var cancelTry context.CancelFunc
		wctx, cancelTry = context.WithTimeoutCause(wctx, bound, errTryBound)
		defer cancelTry()
		p.deleteBy, _ = wctx.Deadline()
	}
	for {
		failed, sid, err := b.acquireParts(wctx, st, p)
		if err == nil {
			break
		}
		// give back what was taken; the lease never existed for the caller
		st.abandon()
		if errors.Is(err, errPartLost) && wctx.Err() == nil {
			// A part already held was lost while we waited for another.
			// Keeping the others while queueing again for it would wait
			// out of canonical order (a deadlock with an acquire of the
			// same set); so everything was given back: queue again for
			// every part, within the same context and MaxWait.
			st = newLeaseState(b, st.id, resources, cfg.mode)
			if _, p.lenders, err = reenter(ctx, b, keys, cfg.mode); err == nil {
				continue
			}
		}
		if errors.Is(err, errPartLost) {
			err = ctxErr(wctx) // the caller's context ended too: that is the news
		}
		err = fmt.Errorf("zklock: acquire %q: %w", failed.resource, b.annotate(err))
		b.observe(ctx, Event{Kind: EventFailed, ID: st.id, Resource: st.resource, Resources: resources, Mode: cfg.mode,
			Wait: time.Since(start), Err: err, SessionID: sid})
		return nil, err
	}
	st.mu.Lock()
	slices.SortFunc(st.holds, func(a, b *heldNode) int { return strings.Compare(a.parent, b.parent) })
	st.acquired = time.Now()
	st.waited = st.acquired.Sub(start)
	st.mu.Unlock()
	b.observe(ctx, Event{Kind: EventAcquired, ID: st.id, Resource: st.resource, Resources: resources, Mode: cfg.mode,
		Path: st.holds[0].path, Wait: st.waited, Token: st.Token(), SessionID: st.holds[0].sessionID, Time: st.acquired})
	b.acquired()
	return &Lease{st: st}, nil
}

// targets resolves resources to their queues, in canonical order (by
// queue key), refusing a resource listed twice.
func targets(b backend, resources []string, raw bool) ([]target, error) {
	ts := make([]target, 0, len(resources))
	for _, r := range resources {
		k, err := b.key(r, raw)
		if err != nil {
			return nil, err
		}
		ts = append(ts, target{r, k})
	}
	slices.SortFunc(ts, func(a, b target) int { return strings.Compare(a.parent, b.parent) })
	for i := 1; i < len(ts); i++ {
		if ts[i].parent == ts[i-1].parent {
			return nil, &ResourceError{Resource: ts[i].resource, Reason: "listed twice"}
		}
	}
	return ts, nil
}

var (
	_ backend = (*Client)(nil)
	_ backend = (*MemoryLocker)(nil)
)
