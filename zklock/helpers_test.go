package zklock_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

const testSessionTimeout = 4 * time.Second

// newClient connects to addr (default: the shared server) under root.
func newClient(t testing.TB, root string, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	return newClientAt(t, zktest.Shared().Addr(), root, opts...)
}

func newClientAt(t testing.TB, addr, root string, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	all := append([]zklock.Option{zklock.WithRoot(root), zklock.WithSessionTimeout(testSessionTimeout)}, opts...)
	c, err := zklock.Connect(ctx, []string{addr}, all...)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// tree lists every znode under path (inclusive), sorted.
func tree(t testing.TB, conn *zk.Conn, path string) []string {
	t.Helper()
	nodes, err := zktest.Tree(conn, path)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// lockNodes returns the lock nodes (ephemeral children of queues) under root.
func lockNodes(t testing.TB, conn *zk.Conn, root string) []string {
	t.Helper()
	var nodes []string
	for _, p := range tree(t, conn, root) {
		if strings.Contains(p[strings.LastIndexByte(p, '/'):], "lock-") || strings.Contains(p, "__READ__") || strings.Contains(p, "__WRIT__") || strings.Contains(p, "sema-") {
			nodes = append(nodes, p)
		}
	}
	return nodes
}

// eventually polls cond until it is true or 30s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eventuallyCount polls count until it reaches want, failing only when it
// stays put for 30s: a thousand waiters queue at the machine's pace, and
// a loaded one (-race, load 18) took longer than 30s for all of them
// while never stalling.
func eventuallyCount(t testing.TB, what string, want int, count func() int) {
	t.Helper()
	last, since := -1, time.Now()
	for {
		n := count()
		if n == want {
			return
		}
		if n != last {
			last, since = n, time.Now()
		}
		if time.Since(since) > 30*time.Second {
			t.Fatalf("timed out waiting for %s: stuck at %d of %d for 30s", what, n, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// overlap detects two holders inside a critical section at once.
type overlap struct {
	mu         sync.Mutex
	in, max    int
	violations int
	entries    int
}

func (o *overlap) enter() {
	o.mu.Lock()
	o.in++
	o.entries++
	if o.in > o.max {
		o.max = o.in
	}
	if o.in > 1 {
		o.violations++
	}
	o.mu.Unlock()
}

func (o *overlap) leave() {
	o.mu.Lock()
	o.in--
	o.mu.Unlock()
}

// recorder is an Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []zklock.Event
}

func (r *recorder) Observe(_ context.Context, e zklock.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) kinds(id uint64) []zklock.EventKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ks []zklock.EventKind
	for _, e := range r.events {
		if e.ID == id {
			ks = append(ks, e.Kind)
		}
	}
	return ks
}

func (r *recorder) count(k zklock.EventKind) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// countedServer starts a ZooKeeper server of the test's own, closed when
// the test ends, so that its counters (srst, mntr, wchs) see only the test.
func countedServer(t *testing.T) *zktest.Server {
	t.Helper()
	srv, err := zktest.StartServer(zktest.WithTickTime(2 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// newProxy returns a fault proxy in front of the shared server, closed when
// the test ends.
func newProxy(t testing.TB) *zktest.Proxy {
	t.Helper()
	p, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// paths returns the znode paths of a lease's parts.
func paths(l *zklock.Lease) []string {
	var ps []string
	for _, p := range l.Parts() {
		ps = append(ps, p.Path)
	}
	return ps
}

// startLinkedEnsemble starts a 3-node ensemble whose server-to-server links
// can be cut (tickTime 500 ms), closed with the test, and returns it with
// the index of its leader.
func startLinkedEnsemble(t *testing.T) (*zktest.Ensemble, int) {
	t.Helper()
	e, err := zktest.StartEnsemble(3, zktest.WithTickTime(500*time.Millisecond), zktest.WithLinkProxies())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	leader, err := e.WaitForMajority(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return e, leader
}

// connectTo opens a Client on root that may use only servers, closed with
// the test; opts come after the tests' root and session timeout.
func connectTo(t *testing.T, root string, servers []string, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	opts = append([]zklock.Option{zklock.WithRoot(root), zklock.WithSessionTimeout(testSessionTimeout)}, opts...)
	c, err := zklock.Connect(testCtx(t), servers, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
