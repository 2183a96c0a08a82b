package zklock

import (
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/dsn"
)

// QuickRedialAfter is how long a connection must live for the first redial
// after it to skip go-zookeeper's one-second wait.
const QuickRedialAfter = dsn.QuickRedialAfter

// BusyCreates makes c count one more create in flight until done is called,
// so that its acquires take the path of many concurrent creates on one
// session (see createAndList) however the test schedules them.
func BusyCreates(c *Client) (done func()) { return c.q.BusyCreates() }

// MemoryNode is one node of a MemoryLocker queue, as a test sees it.
type MemoryNode struct {
	Path  string
	Seq   int64
	Mode  Mode
	Label string // the acquire's Label
	Token int64  // the fencing token of a lease on it
}

// MemoryQueue returns the nodes of resource's queue in m, in queue order.
func MemoryQueue(m *MemoryLocker, resource string) []MemoryNode {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []MemoryNode
	if q := m.queues[resource]; q != nil {
		for _, n := range q.nodes {
			out = append(out, MemoryNode{Path: n.path(), Seq: n.Seq, Mode: Mode(n.Kind), Label: n.label, Token: n.Seq})
		}
	}
	return out
}

// MemoryDeleteNode deletes a node of m as an operator would delete a
// ZooKeeper lock node; it reports whether the node existed.
func MemoryDeleteNode(m *MemoryLocker, path string) bool { return m.deleteNode(path) }

// MemoryExpireNodes ends the nodes at paths as the expiry of the session
// that made them would.
func MemoryExpireNodes(m *MemoryLocker, paths []string) { m.expireNodes(paths) }

// SetListingHook makes every listing of a queue that c's waiters decide on
// pass through h first (nil: none), as a diverged server's listing would.
func SetListingHook(c *Client, h func(parent string, names []string) []string) { c.q.SetListingHook(h) }

// ProverSyncs returns how many syncs c's session has sent to keep its
// proof of life fresh (not counting those a grant sends first).
func ProverSyncs(c *Client) uint64 { return c.sess.ProverSyncs() }

// LossDeadline returns when c's held leases would be given up if the
// leader were not heard to hear from the session again.
func LossDeadline(c *Client) time.Time { return c.sess.LossDeadline() }

// LeaseViews returns how many Leases of l's state have a Done channel of
// their own registered with it.
func LeaseViews(l *Lease) int {
	l.st.mu.Lock()
	defer l.st.mu.Unlock()
	return len(l.st.views)
}
