package zklock

import "slices"

// What a test can do to a MemoryLocker that ZooKeeper does to a Client: end
// its session, delete its nodes.

// Expire ends the locker's one session, as a ZooKeeper session expiry
// would: every held lease is lost (LossSessionExpired), and every waiter
// queues again at the back with a new node (a multi-resource acquire
// holding a part starts over).
func (m *MemoryLocker) Expire() {
	m.mu.Lock()
	var paths []string
	for _, q := range m.queues {
		for _, n := range q.nodes {
			paths = append(paths, n.path())
		}
	}
	m.mu.Unlock()
	m.expireNodes(paths)
}

// LoseResource deletes the nodes of resource that hold, as an operator
// would: leases on them are lost (LossNodeDeleted), a multi-resource
// acquire that held one while waiting for another part starts over.
func (m *MemoryLocker) LoseResource(resource string) {
	m.mu.Lock()
	var paths []string
	if q := m.queues[resource]; q != nil {
		for _, n := range q.nodes {
			if n.st != nil {
				paths = append(paths, n.path())
			}
		}
	}
	m.mu.Unlock()
	for _, p := range paths {
		m.deleteNode(p)
	}
}

// deleteNode deletes the node at path as an operator would: a lease it
// belongs to is lost, an acquire that held it while waiting for another
// part starts over, a waiter queues again at the back. It reports whether
// the node existed.
func (m *MemoryLocker) deleteNode(path string) bool {
	m.mu.Lock()
	n := m.findLocked(path)
	if n == nil {
		m.mu.Unlock()
		return false
	}
	m.removeLocked(n)
	if n.w != nil {
		n.w.requeue = true
		n.w.signal()
	}
	m.mu.Unlock()
	if n.st != nil {
		n.st.lose(LossNodeDeleted)
	}
	return true
}

// expireNodes ends the nodes at paths together, as the expiry of the
// session that made them would: the leases (and acquires under way) they
// belong to are lost (LossSessionExpired), their waiters queue again.
func (m *MemoryLocker) expireNodes(paths []string) {
	m.mu.Lock()
	var lost []*leaseState
	var requeue []*memWaiter
	for _, p := range paths {
		n := m.findLocked(p)
		if n == nil {
			continue
		}
		m.removeLocked(n)
		if n.st != nil && !slices.Contains(lost, n.st) {
			lost = append(lost, n.st)
		}
		if n.w != nil {
			n.w.requeue = true
			requeue = append(requeue, n.w)
		}
	}
	m.mu.Unlock()
	// Leases that re-entered parts of others go last: were they first,
	// giving back their parts could release a lender instead of losing it.
	borrowed := func(st *leaseState) int {
		st.mu.Lock()
		defer st.mu.Unlock()
		return len(st.lenders)
	}
	slices.SortStableFunc(lost, func(a, b *leaseState) int { return borrowed(a) - borrowed(b) })
	// The leases before the waiters: an acquire under the context of one
	// of them sees it cancelled when it wakes to queue again.
	for _, st := range lost {
		st.lose(LossSessionExpired)
	}
	for _, w := range requeue {
		w.signal()
	}
}
