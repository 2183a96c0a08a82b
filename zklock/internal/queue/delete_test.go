package queue

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock/internal/session"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// connected returns the registry of a session connected to the shared
// test server.
func connected(t *testing.T) *Queues {
	t.Helper()
	s := session.New(session.Config{Servers: []string{zktest.Shared().Addr()}, SessionTimeout: 4 * time.Second,
		Dialer: zk.Dialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
			return net.DialTimeout(network, addr, timeout)
		}), Logger: slog.New(slog.DiscardHandler)})
	q := New(s, Config{ACL: zk.WorldACL(zk.PermAll), Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Connect(ctx, q); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return q
}

// A batch of deletes is one transaction; when one of its deletes fails
// (a node gone already), each path is deleted alone and gets its own
// answer: the others are deleted, the missing one answers ErrNoNode.
func TestDeleteBatchAnswersEachPath(t *testing.T) {
	q := connected(t)
	conn := q.conn()
	root := makeRoot(t, conn)
	mk := func(n int) []*deleteReq {
		var batch []*deleteReq
		for range n {
			path, err := conn.Create(root+"/n-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, &deleteReq{path: path, err: make(chan error, 1)})
		}
		return batch
	}
	batch := mk(5)
	q.deleteBatch(batch)
	for _, r := range batch {
		if err := <-r.err; err != nil {
			t.Fatalf("delete of %s in a batch: %v", r.path, err)
		}
	}
	batch = mk(4)
	gone := &deleteReq{path: root + "/gone", err: make(chan error, 1)}
	batch = append(batch[:2], append([]*deleteReq{gone}, batch[2:]...)...)
	q.deleteBatch(batch)
	for _, r := range batch {
		err := <-r.err
		if r == gone {
			if !errors.Is(err, zk.ErrNoNode) {
				t.Fatalf("the missing node's delete = %v; want ErrNoNode", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("delete of %s in a failed batch: %v", r.path, err)
		}
	}
	kids, _, err := conn.Children(root)
	if err != nil || len(kids) != 0 {
		t.Fatalf("children left: %v, %v", kids, err)
	}
}

// A waiter forgets its node when it reads it gone; unless the node's
// deletion reached the client (it left the registry then), a server whose
// reads left it out may have been wrong, and the node may live: forget
// deletes it, in the background, so that it cannot stand ahead of the
// waiter's next node until the session ends. A node whose deletion
// reached the client is not deleted again.
func TestForgetDeletesANodeNotKnownGone(t *testing.T) {
	q := connected(t)
	conn := q.conn()
	root := makeRoot(t, conn)
	sid, _ := q.s.Current()
	waiter := func() *Waiter {
		path, err := conn.Create(root+"/n-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatal(err)
		}
		e := &Node{path: path, sessionID: sid, gone: make(chan struct{})}
		q.mu.Lock()
		q.nodes.add(e)
		q.mu.Unlock()
		return &Waiter{q: q, req: &Request{}, n: &node{entry: e}}
	}
	exists := func(path string) bool {
		ok, _, err := conn.Exists(path)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	w := waiter()
	path := w.n.entry.path
	w.forget()
	deadline := time.Now().Add(5 * time.Second)
	for exists(path) {
		if time.Now().After(deadline) {
			t.Fatalf("%s not deleted 5 s after its waiter forgot it", path)
		}
		time.Sleep(10 * time.Millisecond)
	}

	w = waiter()
	path = w.n.entry.path
	q.mu.Lock()
	q.nodes.drop(w.n.entry) // its deletion reached the client (onEvent)
	q.mu.Unlock()
	w.forget()
	time.Sleep(300 * time.Millisecond)
	if !exists(path) {
		t.Fatalf("%s, known gone, was deleted again", path)
	}
}

// makeRoot makes a new root for the test's nodes, with its parents.
func makeRoot(t *testing.T, conn *zk.Conn) string {
	t.Helper()
	root := zktest.UniqueRoot(t)
	p := ""
	for _, part := range strings.Split(root, "/")[1:] {
		p += "/" + part
		_, _ = conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
	}
	return root
}
