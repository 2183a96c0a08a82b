package zklock

import (
	"sort"
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
	c.mu.Lock()
	ls := make([]LocalLock, 0, len(c.nodes))
	for _, e := range c.nodes {
		if e.releasing {
			continue
		}
		l := LocalLock{Resource: e.resource, Mode: e.mode, Path: e.path, Held: e.st != nil,
			Position: int(e.position.Load()), Since: e.since, SessionID: e.sessionID}
		if e.st != nil {
			l.Position = 0
			e.st.mu.Lock()
			l.Acquired = e.st.acquired
			for _, h := range e.st.holds {
				if h.path == e.path {
					l.Token = h.token
				}
			}
			e.st.mu.Unlock()
		}
		ls = append(ls, l)
	}
	c.mu.Unlock()
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].Resource != ls[j].Resource {
			return ls[i].Resource < ls[j].Resource
		}
		return ls[i].Path < ls[j].Path
	})
	return ls
}

// deletingNode is a lock node deleteNode is deleting: its session, and how
// many deletes of it are under way.
type deletingNode struct {
	sid int64
	n   int
}

// Deleting returns the paths of the lock nodes of this Client's current
// session that it is deleting and ZooKeeper has not yet confirmed gone:
// released leases, leases given up or lost while the session lives, nodes
// of failed acquires. Locks leaves them out. A node stays here while
// ZooKeeper is out of reach, for as long as the session lives. It makes no
// ZooKeeper call.
func (c *Client) Deleting() []string {
	c.mu.Lock()
	var ps []string
	for p, d := range c.deleting {
		if d.sid == c.sessionID {
			ps = append(ps, p)
		}
	}
	c.mu.Unlock()
	sort.Strings(ps)
	return ps
}

// startDeleting records a delete of path, of session sid, under way, and
// returns what records its end.
func (c *Client) startDeleting(path string, sid int64) (done func()) {
	c.mu.Lock()
	if c.deleting == nil {
		c.deleting = make(map[string]deletingNode)
	}
	d := c.deleting[path]
	c.deleting[path] = deletingNode{sid: sid, n: d.n + 1}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if d := c.deleting[path]; d.n <= 1 {
			delete(c.deleting, path)
		} else {
			d.n--
			c.deleting[path] = d
		}
		c.mu.Unlock()
	}
}
