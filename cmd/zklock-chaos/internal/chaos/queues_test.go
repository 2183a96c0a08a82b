package chaos

import (
	"strings"
	"testing"
	"time"
)

// count returns the events of kind recorded so far.
func count(h *hub, kind string) []Event {
	var out []Event
	for _, e := range h.history() {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// waitFor polls h until ok holds for some event of kind.
func waitFor(t *testing.T, h *hub, kind string, ok func(Event) bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range count(h, kind) {
			if ok(e) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s event as expected; history:\n%v", kind, h.history())
}

// The snapshotter lists every lock znode with its owner (nothing, not a
// failure, while the root does not exist), and records nothing once
// stopped.
func TestIntegration_SnapshotQueues(t *testing.T) {
	s := startServer(t)
	h := startHub(t)
	stop := snapshotQueues([]string{s.Addr()}, "/root", h, 50*time.Millisecond)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	waitFor(t, h, EvQueues, func(e Event) bool { return len(e.Owners) == 0 })

	conn, node := makeLockNode(t, s.Addr())
	waitFor(t, h, EvQueues, func(e Event) bool {
		return len(e.Owners) == 1 && e.Owners[node] == conn.SessionID() && e.End >= e.T
	})
	if err := conn.Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now().UnixNano()
	waitFor(t, h, EvQueues, func(e Event) bool { return e.T > deleted && len(e.Owners) == 0 })

	stop()
	stopped = true
	n := len(count(h, EvQueues))
	time.Sleep(200 * time.Millisecond)
	if m := len(count(h, EvQueues)); m != n {
		t.Fatalf("%d snapshots after stop, %d before", m, n)
	}
	hist := h.history()
	if last := hist[len(hist)-1]; last.Kind != EvNote || !strings.HasPrefix(last.Detail, "queue snapshots of zk1: ") {
		t.Fatalf("last event: %v", last)
	}
}

// Each member is read in turn, on a connection of its own: here one server
// stands for two members, and both take their turns.
func TestIntegration_SnapshotQueuesEveryMember(t *testing.T) {
	s := startServer(t)
	h := startHub(t)
	stop := snapshotQueues([]string{s.Addr(), s.Addr()}, "/root", h, 50*time.Millisecond)
	defer stop()
	waitFor(t, h, EvQueues, func(e Event) bool { return e.Server == 1 })
	waitFor(t, h, EvQueues, func(e Event) bool { return e.Server == 2 })
}
