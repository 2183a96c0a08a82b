package chaos

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zktest"
)

// startServer starts a standalone server for one test.
func startServer(t *testing.T) *zktest.Server {
	t.Helper()
	s, err := zktest.StartServer(zktest.WithTickTime(500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// startHub starts a hub writing its history to a temporary directory,
// closed when the test ends.
func startHub(t *testing.T) *hub {
	t.Helper()
	h, err := newHub(filepath.Join(t.TempDir(), "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// makeLockNode connects to addr and makes /root/res-0 with one lock node
// in it, owned by the returned connection's session.
func makeLockNode(t *testing.T, addr string) (*zk.Conn, string) {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}
	for _, p := range []string{"/root", "/root/res-0"} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	node, err := conn.Create("/root/res-0/_c_1-lock-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	return conn, node
}

// history returns the events h recorded so far; it panics if the history
// file cannot be read back.
func (h *hub) history() []Event {
	evs, err := h.readHistory()
	if err != nil {
		panic(err)
	}
	return evs
}
