package zklock

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
)

// MemoryLocker is an in-process Locker with the semantics of the ZooKeeper
// one: FIFO queues per resource, the same read/write and semaphore rules
// (a semaphore's limit is its queue's while the queue has nodes: another
// limit gets ErrLimitMismatch), Try, MaxWait, cancellation, fencing
// tokens, reentrancy through the context (AcquireAll re-enters the parts
// a lease in the context holds), Lease.Downgrade, and loss (Expire,
// LoseResource). A multi-resource acquire that loses a part it holds
// while it waits for another gives everything back and queues again. A
// release wakes only the waiters it lets hold. It is meant for unit tests
// of code that takes a Locker; it locks nothing across processes. It runs
// on the same acquire shell as the Client and NewLocker (options, names,
// re-entry, MaxWait, events), and passes the same conformance suite
// (package lockertest).
type MemoryLocker struct {
	observers []Observer

	mu     sync.Mutex
	seq    int64
	queues map[string]*memQueue // by queue key (resource name, or raw path)
}

type memQueue struct {
	nodes []*memNode
	limit int // semaphore: the limit of its nodes, fixed while it has any
}

// memNode is one node of a queue: waiting (w set) until it holds, then
// part of a lease (st set), or of an acquire still waiting for its other
// parts.
type memNode struct {
	layout.Child
	key   string
	label string
	w     *memWaiter
	st    *leaseState
}

func (n *memNode) path() string { return n.key + "/" + n.Name }

// memWaiter is an acquire waiting for one node to hold.
type memWaiter struct {
	// wake is signalled when something that may change the outcome
	// happened: the node may hold now, or was deleted.
	wake    chan struct{}
	requeue bool // under MemoryLocker.mu: the node was deleted, queue again at the back
}

func (w *memWaiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// NewMemoryLocker returns an empty MemoryLocker reporting to observers.
func NewMemoryLocker(observers ...Observer) *MemoryLocker {
	return &MemoryLocker{observers: observers, queues: make(map[string]*memQueue)}
}

// Acquire behaves like Client.Acquire.
func (m *MemoryLocker) Acquire(ctx context.Context, resource string, opts ...AcquireOption) (*Lease, error) {
	return m.AcquireAll(ctx, []string{resource}, opts...)
}

// AcquireAll behaves like Client.AcquireAll.
func (m *MemoryLocker) AcquireAll(ctx context.Context, resources []string, opts ...AcquireOption) (*Lease, error) {
	return acquireWith(ctx, m, resources, newAcquireConfig(opts))
}

// key is the MemoryLocker's queue key: the resource name, or the raw path.
func (m *MemoryLocker) key(resource string, raw bool) (string, error) {
	if raw {
		return resource, validateZnodePath(resource)
	}
	return resource, ValidateResource(resource)
}

// check refuses elections (the MemoryLocker has no Campaign), and a
// LeaseLabel whose owner record the Client could not store.
func (m *MemoryLocker) check(cfg acquireConfig) error {
	if cfg.mode == Election {
		return fmt.Errorf("%w: the MemoryLocker holds no elections", ErrInvalidOption)
	}
	// A label of MaxValueLen/8 bytes or fewer fits: JSON writes a byte
	// in 6 at most.
	if len(cfg.label) > MaxValueLen/8 {
		if n := len(labelData(cfg.label)); n > MaxValueLen {
			return fmt.Errorf("%w: %d bytes, the limit is %d", ErrValueTooLarge, n, MaxValueLen)
		}
	}
	return nil
}

func (m *MemoryLocker) answerBound() time.Duration { return 0 } // it answers at once
func (m *MemoryLocker) annotate(err error) error   { return err }
func (m *MemoryLocker) acquired()                  {}

// acquireParts takes each part in canonical order: borrowed from a lease
// in the context that holds it, or queued for.
func (m *MemoryLocker) acquireParts(ctx context.Context, st *leaseState, p acquireParts) (target, int64, error) {
	for _, t := range p.ts {
		if l := p.lenders[t.parent]; l != nil && st.borrow(l, t.parent) {
			continue
		}
		if err := m.wait(ctx, st, t.parent, p.cfg, len(p.ts) > 1); err != nil {
			return t, 0, err
		}
	}
	return target{}, 0, nil
}

// wait queues a node for key and waits until the rule lets it hold. A
// part of a multi-resource acquire also stops when another part of st is
// lost (errs.ErrPartLost).
func (m *MemoryLocker) wait(ctx context.Context, st *leaseState, key string, cfg acquireConfig, multi bool) error {
	if ctx.Err() != nil {
		return errs.CtxErr(ctx)
	}
	var partLost <-chan struct{}
	if multi {
		partLost = st.ctx.Done()
	}
	var events []Event
	report := func() {
		for _, e := range events {
			m.observe(ctx, e)
		}
		events = nil
	}
	w := &memWaiter{wake: make(chan struct{}, 1)}
	m.mu.Lock()
	var n *memNode
	pos := -1
	for {
		if n == nil || w.requeue {
			w.requeue = false
			var err error
			if n, err = m.enqueueLocked(w, key, cfg); err != nil {
				m.mu.Unlock()
				return err
			}
			pos = slices.Index(m.queues[key].nodes, n)
			events = append(events, Event{Kind: EventEnqueued, ID: st.id, Resource: key, Resources: st.resources, Mode: cfg.mode, Path: n.path(), Position: pos, Token: n.Seq})
		} else if p := slices.Index(m.queues[key].nodes, n); p != pos {
			pos = p
			events = append(events, Event{Kind: EventPosition, ID: st.id, Resource: key, Resources: st.resources, Mode: cfg.mode, Path: n.path(), Position: pos, Token: n.Seq})
		}
		if m.holdsLocked(n) {
			if !st.addHold(&heldNode{resource: key, parent: key, path: n.path(), token: n.Seq}) {
				m.removeLocked(n) // another part was lost meanwhile
				m.mu.Unlock()
				report()
				return errs.ErrPartLost
			}
			n.w, n.st = nil, st
			m.mu.Unlock()
			report()
			return nil
		}
		if cfg.try {
			m.removeLocked(n)
			m.mu.Unlock()
			report()
			return ErrLocked
		}
		m.mu.Unlock()
		report()
		select {
		case <-w.wake:
		case <-ctx.Done():
		case <-partLost:
		}
		m.mu.Lock()
		// A cancel that comes with a wake-up wins, as on ZooKeeper, where
		// a waiter checks its context before each request.
		if ctx.Err() != nil {
			m.removeLocked(n)
			m.mu.Unlock()
			return errs.CtxErr(ctx)
		}
		select {
		case <-partLost:
			m.removeLocked(n)
			m.mu.Unlock()
			return errs.ErrPartLost
		default:
		}
	}
}

// enqueueLocked makes w's node at the back of key's queue.
func (m *MemoryLocker) enqueueLocked(w *memWaiter, key string, cfg acquireConfig) (*memNode, error) {
	q := m.queues[key]
	if cfg.mode == Semaphore && q != nil && q.limit != 0 && q.limit != cfg.limit {
		return nil, fmt.Errorf("%w: %q has limit %d, asked for %d", ErrLimitMismatch, key, q.limit, cfg.limit)
	}
	if q == nil {
		q = &memQueue{}
		m.queues[key] = q
	}
	if cfg.mode == Semaphore && q.limit == 0 {
		q.limit = cfg.limit
	}
	m.seq++
	n := &memNode{Child: layout.Child{Name: fmt.Sprintf("mem-%s%010d", layout.Marker(layout.Kind(cfg.mode)), m.seq), Seq: m.seq, Kind: layout.Kind(cfg.mode)},
		key: key, label: cfg.label, w: w}
	q.nodes = append(q.nodes, n)
	return n, nil
}

// holdsLocked applies the rule to n.
func (m *MemoryLocker) holdsLocked(n *memNode) bool {
	q := m.queues[n.key]
	i := slices.Index(q.nodes, n)
	kids := make([]layout.Child, i+1)
	for j, x := range q.nodes[:i+1] {
		kids[j] = x.Child
	}
	held, _ := layout.Rule(kids, i, q.limit)
	return held
}

// removeLocked takes n out of its queue and wakes the waiters that the
// rule now lets hold; no other waiter hears of it.
func (m *MemoryLocker) removeLocked(n *memNode) {
	q := m.queues[n.key]
	if q == nil {
		return
	}
	i := slices.Index(q.nodes, n)
	if i < 0 {
		return
	}
	q.nodes = slices.Delete(q.nodes, i, i+1)
	if len(q.nodes) == 0 {
		delete(m.queues, n.key)
		return
	}
	for _, x := range q.nodes[i:] {
		if x.w != nil && m.holdsLocked(x) {
			x.w.signal()
		}
	}
}

func (m *MemoryLocker) findLocked(path string) *memNode {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return nil
	}
	if q := m.queues[path[:i]]; q != nil {
		for _, n := range q.nodes {
			if n.Name == path[i+1:] {
				return n
			}
		}
	}
	return nil
}

// removeLease takes st's own nodes out of their queues (borrowed parts
// are their lenders', given back by the lease).
func (m *MemoryLocker) removeLease(st *leaseState) {
	holds := st.ownHolds()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range holds {
		if q := m.queues[h.parent]; q != nil {
			if i := slices.IndexFunc(q.nodes, func(n *memNode) bool { return n.st == st }); i >= 0 {
				m.removeLocked(q.nodes[i])
			}
		}
	}
}

func (m *MemoryLocker) releaseHolds(_ context.Context, st *leaseState) error {
	m.removeLease(st)
	return nil
}

func (m *MemoryLocker) dropHolds(st *leaseState)    { m.removeLease(st) }
func (m *MemoryLocker) abandonHolds(st *leaseState) { m.removeLease(st) }

func (m *MemoryLocker) observe(ctx context.Context, e Event) { notify(ctx, m.observers, e) }

// Holders returns the number of nodes of resource that hold (those of
// leases, and parts held by multi-resource acquires still waiting for
// another) and the number waiting.
func (m *MemoryLocker) Holders(resource string) (held, waiting int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if q := m.queues[resource]; q != nil {
		for _, n := range q.nodes {
			if n.st != nil {
				held++
			} else {
				waiting++
			}
		}
	}
	return held, waiting
}

// downgrader is a lease owner with a Downgrade of its own (Lease.Downgrade
// dispatches to it).
type downgrader interface {
	downgrade(ctx context.Context, l *Lease) (*Lease, error)
}

var _ downgrader = (*MemoryLocker)(nil)

// downgrade is Lease.Downgrade for a lease of m: the same checks and the
// same outcome as on ZooKeeper, the read node made and the write node
// deleted in one step.
func (m *MemoryLocker) downgrade(ctx context.Context, l *Lease) (*Lease, error) {
	st := l.st
	st.mu.Lock()
	switch {
	case l.released.Load():
		st.mu.Unlock()
		return nil, ErrReleased
	case st.ended || st.releasing:
		err := st.endErr()
		st.mu.Unlock()
		return nil, err
	case st.refs > 1:
		refs := st.refs
		st.mu.Unlock()
		return nil, fmt.Errorf("%w: the lease is re-entered (%d references): release the inner ones first", ErrDowngradeBlocked, refs)
	case (st.mode != Write && st.mode != Exclusive) || len(st.holds) != 1:
		st.mu.Unlock()
		return nil, fmt.Errorf("%w: only a single-resource write lease can be downgraded", ErrInvalidOption)
	}
	key := st.holds[0].parent
	st.mu.Unlock()

	rs := newLeaseState(m, nextID(), st.resources, Read)
	m.mu.Lock()
	var old *memNode
	q := m.queues[key]
	if q != nil {
		if i := slices.IndexFunc(q.nodes, func(n *memNode) bool { return n.st == st }); i >= 0 {
			old = q.nodes[i]
			for _, n := range q.nodes[i+1:] {
				if n.Kind != layout.Read {
					m.mu.Unlock()
					return nil, errs.Errorf("downgrade %q: %w: a writer is queued behind the lease, and would go first", st.resource, ErrDowngradeBlocked)
				}
			}
		}
	}
	if old == nil {
		m.mu.Unlock()
		return nil, errs.Errorf("downgrade %q: %w", st.resource, ErrLeaseLost)
	}
	// Only readers are behind the write node: a read node at the back
	// holds once the write node is gone.
	m.seq++
	n := &memNode{Child: layout.Child{Name: fmt.Sprintf("mem-%s%010d", layout.Marker(layout.Read), m.seq), Seq: m.seq, Kind: layout.Read},
		key: key, st: rs}
	q.nodes = append(q.nodes, n)
	_ = rs.addHold(&heldNode{resource: key, parent: key, path: n.path(), token: n.Seq}) // rs is new: cannot have ended
	m.removeLocked(old)
	m.mu.Unlock()

	rs.mu.Lock()
	rs.acquired = time.Now()
	rs.mu.Unlock()
	m.observe(ctx, Event{Kind: EventAcquired, ID: rs.id, Resource: rs.resource, Resources: rs.resources, Mode: Read, Path: n.path(), Token: n.Seq, Time: rs.acquired})
	_ = l.Release(ctx) // its node is gone already: this ends the write lease as released
	return &Lease{st: rs}, nil
}
