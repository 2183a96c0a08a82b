package zklock

import (
	"time"
)

// LocalLock describes a lock node of this Client: waiting or held.
type LocalLock struct {
	Resource  string
	Mode      Mode
	Path      string
	Held      bool
	Position  int       // nodes ahead (0 when held)
	Since     time.Time // when the node was created (the wait began)
	Acquired  time.Time // when the lock was acquired; zero while waiting
	Token     int64     // fencing token, when held
	SessionID int64
}

// Locks returns this Client's lock nodes, waiting and held, ordered by
// resource and path. It makes no ZooKeeper call.
func (c *Client) Locks() []LocalLock {
	nodes := c.q.Nodes()
	ls := make([]LocalLock, len(nodes))
	for i, n := range nodes {
		l := LocalLock{Resource: n.Resource, Mode: Mode(n.Kind), Path: n.Path, Position: n.Position, Since: n.Since,
			SessionID: n.SessionID}
		if st, ok := n.Holder.(*leaseState); ok {
			l.Held, l.Position = true, 0
			st.mu.Lock()
			l.Acquired = st.acquired
			for _, h := range st.holds {
				if h.path == n.Path {
					l.Token = h.token
				}
			}
			st.mu.Unlock()
		}
		ls[i] = l
	}
	return ls
}

// Deleting returns the paths of the lock nodes of this Client's current
// session that it is deleting and ZooKeeper has not yet confirmed gone:
// released leases, leases given up or lost while the session lives, nodes
// of failed acquires. Locks leaves them out. A node stays here while
// ZooKeeper is out of reach, for as long as the session lives. It makes no
// ZooKeeper call.
func (c *Client) Deleting() []string { return c.q.Deleting() }
