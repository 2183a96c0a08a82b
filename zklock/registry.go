package zklock

// registry is a client's record of its live lock nodes, by path, guarded by
// Client.mu. Its invariant: a node leaves the registry once, and its gone
// channel is closed as it leaves (a local successor waits on it, see
// awaitLocal; a waiter on its own node, see until). drop and dropWhere are
// the only ways out.
type registry map[string]*nodeEntry

// add records e.
func (r registry) add(e *nodeEntry) { r[e.path] = e }

// drop removes e if it is still the entry at its path, closing its gone
// channel, and reports whether it did.
func (r registry) drop(e *nodeEntry) bool {
	if e == nil || r[e.path] != e {
		return false
	}
	delete(r, e.path)
	close(e.gone)
	return true
}

// dropWhere removes every entry for which f is true, closing their gone
// channels, and returns them.
func (r registry) dropWhere(f func(e *nodeEntry) bool) []*nodeEntry {
	var out []*nodeEntry
	for _, e := range r {
		if f(e) {
			out = append(out, e)
		}
	}
	for _, e := range out {
		r.drop(e)
	}
	return out
}
