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

// MaxCachedResources is maxCachedResources.
const MaxCachedResources = maxCachedResources

// ResourceClassOf returns the class the Observer gives resource, locked in
// a lock of kind, through its cache of resources.
func (o *Observer) ResourceClassOf(resource, kind string) string {
	return o.resource(resource, kind).class
}

// CachedResources returns how many resources the Observer's cache holds.
func (o *Observer) CachedResources() int {
	n := 0
	o.resources.m.Range(func(any, any) bool { n++; return true })
	return n
}
