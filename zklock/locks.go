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
