package tracing

// InFlight returns how many acquires and leases the Observer is tracking.
func (o *Observer) InFlight() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.locks)
}

// Orphans returns how many losses of unknown leases the Observer keeps.
func (o *Observer) Orphans() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.orphans)
}
