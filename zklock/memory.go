package zklock

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemoryLocker is an in-process Locker with the semantics of the ZooKeeper
// one: FIFO queues per resource, the same read/write and semaphore rules,
// Try, MaxWait, cancellation, fencing tokens, reentrancy through the
// context, and loss (Expire, LoseResource). It is meant for unit tests of
// code that takes a Locker; it locks nothing across processes.
type MemoryLocker struct {
	observers []Observer

	mu     sync.Mutex
	seq    int64
	queues map[string]*memQueue // by queue key (resource name, or raw path)
}

type memQueue struct {
	nodes   []*memNode
	changed chan struct{} // closed and replaced on every change
}

type memNode struct {
	child
	st *leaseState
}

var _ Locker = (*MemoryLocker)(nil)

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
	cfg := newAcquireConfig(opts)
	if len(resources) == 0 {
		return nil, &ResourceError{Reason: "no resources given"}
	}
	if cfg.mode == Semaphore && cfg.limit < 1 {
		return nil, fmt.Errorf("%w: semaphore limit must be at least 1", ErrInvalidOption)
	}
	keys := make([]string, len(resources))
	for i, r := range resources {
		var err error
		if cfg.raw {
			err = validateZnodePath(r)
		} else {
			err = ValidateResource(r)
		}
		if err != nil {
			return nil, err
		}
		keys[i] = r
	}
	slices.Sort(keys)
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			return nil, &ResourceError{Resource: keys[i], Reason: "listed twice"}
		}
	}
	whole, lenders, err := reenter(ctx, m, keys, cfg.mode)
	if whole != nil || err != nil {
		return whole, err
	}
	name := strings.Join(resources, ",")
	st, start, wctx, cancel := beginAcquire(ctx, m, resources, cfg)
	defer cancel()
	for _, k := range keys {
		if l := lenders[k]; l != nil && st.borrow(l, k) {
			continue
		}
		if err := m.wait(wctx, st, k, cfg); err != nil {
			st.abandon()
			err = fmt.Errorf("zklock: acquire %q: %w", k, err)
			m.observe(ctx, Event{Kind: EventFailed, ID: st.id, Resource: name, Mode: cfg.mode, Wait: time.Since(start), Err: err})
			return nil, err
		}
	}
	st.mu.Lock()
	st.acquired = time.Now()
	st.waited = st.acquired.Sub(start)
	st.mu.Unlock()
	m.observe(ctx, Event{Kind: EventAcquired, ID: st.id, Resource: name, Mode: cfg.mode, Path: st.holds[0].path,
		Wait: st.waited, Token: st.Token(), Time: st.acquired})
	return &Lease{st: st}, nil
}

func (m *MemoryLocker) wait(ctx context.Context, st *leaseState, key string, cfg acquireConfig) error {
	if err := ctx.Err(); err != nil {
		return ctxErr(ctx)
	}
	m.mu.Lock()
	q := m.queues[key]
	if q == nil {
		q = &memQueue{changed: make(chan struct{})}
		m.queues[key] = q
	}
	m.seq++
	n := &memNode{child: child{name: fmt.Sprintf("mem-%s%010d", marker(cfg.mode), m.seq), seq: m.seq, mode: cfg.mode}}
	q.nodes = append(q.nodes, n)
	path := key + "/" + n.name
	lastPos := -1
	for {
		kids := make([]child, len(q.nodes))
		idx := -1
		for i, x := range q.nodes {
			kids[i] = x.child
			if x == n {
				idx = i
			}
		}
		held, _ := rule(kids, idx, cfg.limit)
		changed := q.changed
		if idx != lastPos {
			kind := EventPosition
			if lastPos < 0 {
				kind = EventEnqueued
			}
			lastPos = idx
			m.mu.Unlock()
			m.observe(ctx, Event{Kind: kind, ID: st.id, Resource: key, Mode: cfg.mode, Path: path, Position: idx})
			m.mu.Lock()
			continue // re-read: the queue may have changed meanwhile
		}
		if held {
			if !st.addHold(&heldNode{resource: key, parent: key, path: path, token: n.seq}) {
				m.removeLocked(key, n)
				m.mu.Unlock()
				return fmt.Errorf("zklock: another part of the lease was lost while waiting: %w", st.lostErr())
			}
			n.st = st
			m.mu.Unlock()
			return nil
		}
		if cfg.try {
			m.removeLocked(key, n)
			m.mu.Unlock()
			return ErrLocked
		}
		m.mu.Unlock()
		select {
		case <-changed:
			m.mu.Lock()
		case <-ctx.Done():
			m.mu.Lock()
			m.removeLocked(key, n)
			m.mu.Unlock()
			return ctxErr(ctx)
		}
	}
}

func (m *MemoryLocker) removeLocked(key string, n *memNode) {
	q := m.queues[key]
	if q == nil {
		return
	}
	if i := slices.Index(q.nodes, n); i >= 0 {
		q.nodes = slices.Delete(q.nodes, i, i+1)
		close(q.changed)
		q.changed = make(chan struct{})
	}
	if len(q.nodes) == 0 {
		delete(m.queues, key)
	}
}

func (m *MemoryLocker) removeLease(st *leaseState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range st.holds {
		if q := m.queues[h.parent]; q != nil {
			for _, n := range q.nodes {
				if n.st == st {
					m.removeLocked(h.parent, n)
					break
				}
			}
		}
	}
}

func (m *MemoryLocker) releaseHolds(_ context.Context, st *leaseState) error {
	m.removeLease(st)
	return nil
}

func (m *MemoryLocker) dropHolds(st *leaseState) { m.removeLease(st) }

func (m *MemoryLocker) observe(ctx context.Context, e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	for _, o := range m.observers {
		o.Observe(ctx, e)
	}
}

// Expire loses every held lease, as a ZooKeeper session expiry would
// (LossSessionExpired). Waiters keep their places.
func (m *MemoryLocker) Expire() { m.lose("", LossSessionExpired) }

// LoseResource loses the leases held on resource, as if an operator had
// deleted their nodes (LossNodeDeleted).
func (m *MemoryLocker) LoseResource(resource string) { m.lose(resource, LossNodeDeleted) }

func (m *MemoryLocker) lose(key string, reason LossReason) {
	m.mu.Lock()
	var lost []*leaseState
	for k, q := range m.queues {
		if key != "" && k != key {
			continue
		}
		for _, n := range q.nodes {
			if n.st != nil && !slices.Contains(lost, n.st) {
				lost = append(lost, n.st)
			}
		}
	}
	m.mu.Unlock()
	for _, st := range lost {
		st.lose(reason)
	}
}

// Holders returns the number of leases held on resource and the number
// waiting for it.
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
