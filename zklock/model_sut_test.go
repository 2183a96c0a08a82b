package zklock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// modelSystem is a Locker under a model-based test, with what the steps
// need besides: several clients, a listing of the queues, and an
// operator's powers (delete a node, end a session).
type modelSystem interface {
	name() string
	acquire(ctx context.Context, client int, res []string, opts ...zklock.AcquireOption) (*zklock.Lease, error)
	// list returns the nodes of every queue of the sequence, in queue
	// order; each listing of one queue is a snapshot.
	list(ctx context.Context) (map[string][]realNode, error)
	resourceOf(path string) string
	deleteNode(ctx context.Context, path string) error
	// expire ends client's session; paths are its nodes (the in-memory
	// locker has no sessions of its own).
	expire(ctx context.Context, client int, paths []string) error
	// drop cuts client's connection and, while the client is cut off,
	// deletes the node at path; the client then reconnects on its session.
	drop(ctx context.Context, client int, path string) error
	// diverge makes client read the listings of res's queue as a server
	// that diverged from the ensemble would show them, until stop is
	// called; reported counts the diverged listings the client has
	// reported (EventDiverged) since. Nil funcs if the system lists
	// nothing (the in-memory locker).
	diverge(client int, res string) (reported func() int, stop func())
	// leftovers returns lock nodes left anywhere under the system's root.
	leftovers(ctx context.Context) ([]string, error)
	poll() time.Duration  // between two looks while waiting for a state
	quiet() time.Duration // how long nothing may happen for a state to count as settled
	close()
}

// realNode is one node of a queue as the system shows it.
type realNode struct {
	path  string
	seq   int64
	mode  zklock.Mode
	label string // the Label of the acquire that made it
	token int64  // the fencing token a lease on it carries
}

// opLabel is the Label given to op's acquire, found again in its nodes.
func opLabel(op int) string { return fmt.Sprintf("model-op%d", op) }

// --- ZooKeeper ---

// zkSystem runs a sequence on the shared ZooKeeper server: one Client per
// model client, each on its own session, and a raw connection for the
// operator.
type zkSystem struct {
	addr     string
	root     string
	clients  []*zklock.Client
	taps     []*sessionTap
	diverged []*atomic.Int64 // per client: the diverged listings it reported (EventDiverged)
	operator *zk.Conn
	queues   map[string]string // resource → queue znode
	byQueue  map[string]string
	mu       sync.Mutex
	cache    map[string]realNode // by path: a node's name and data never change
}

func newZKSystem(t *testing.T, setup modelSetup) *zkSystem {
	t.Helper()
	z := &zkSystem{addr: zktest.Shared().Addr(), root: zktest.UniqueRoot(t), queues: map[string]string{},
		byQueue: map[string]string{}, cache: map[string]realNode{}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range setup.clients {
		// Three addresses, all dialed to the one server: go-zookeeper
		// pauses a second before dialing again only once it has tried
		// every address, so a client whose session was ended reconnects
		// at once.
		tap := &sessionTap{target: z.addr}
		port := z.addr[strings.LastIndexByte(z.addr, ':'):]
		diverged := &atomic.Int64{}
		c, err := zklock.Connect(ctx, []string{"127.0.0.1" + port, "127.0.0.2" + port, "127.0.0.3" + port}, zklock.WithRoot(z.root),
			zklock.WithSessionTimeout(testSessionTimeout), zklock.WithDialer(tap.dial),
			zklock.WithLabel(fmt.Sprintf("model-c%d", i)),
			zklock.WithObserver(zklock.ObserverFunc(func(_ context.Context, e zklock.Event) {
				if e.Kind == zklock.EventDiverged {
					diverged.Add(1)
				}
			})))
		if err != nil {
			z.close()
			t.Fatalf("connect client %d: %v", i, err)
		}
		z.clients = append(z.clients, c)
		z.taps = append(z.taps, tap)
		z.diverged = append(z.diverged, diverged)
	}
	op, _, err := zk.Connect([]string{z.addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		z.close()
		t.Fatal(err)
	}
	z.operator = op
	for _, r := range setup.resources() {
		q, err := z.clients[0].QueuePath(r)
		if err != nil {
			z.close()
			t.Fatal(err)
		}
		z.queues[r], z.byQueue[q] = q, r
	}
	return z
}

func (z *zkSystem) name() string { return "zookeeper" }

func (z *zkSystem) acquire(ctx context.Context, client int, res []string, opts ...zklock.AcquireOption) (*zklock.Lease, error) {
	if len(res) == 1 {
		return z.clients[client].Acquire(ctx, res[0], opts...)
	}
	return z.clients[client].AcquireAll(ctx, res, opts...)
}

func (z *zkSystem) list(ctx context.Context) (map[string][]realNode, error) {
	out := map[string][]realNode{}
	for r, q := range z.queues {
		names, _, err := z.operator.Children(q)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", q, err)
		}
		for _, name := range names {
			n, err := z.node(q + "/" + name)
			if errors.Is(err, zk.ErrNoNode) {
				continue // gone since the listing
			}
			if err != nil {
				return nil, err
			}
			out[r] = append(out[r], n)
		}
		slices.SortFunc(out[r], func(a, b realNode) int { return int(a.seq - b.seq) })
	}
	return out, nil
}

// node reads a lock node's layout, label and czxid.
func (z *zkSystem) node(path string) (realNode, error) {
	z.mu.Lock()
	n, ok := z.cache[path]
	z.mu.Unlock()
	if ok {
		return n, nil
	}
	data, stat, err := z.operator.Get(path)
	if err != nil {
		return realNode{}, err
	}
	n, err = parseNodeName(path)
	if err != nil {
		return realNode{}, err
	}
	var owner struct {
		Label string `json:"label"`
	}
	_ = json.Unmarshal(data, &owner)
	n.label, n.token = owner.Label, stat.Czxid
	z.mu.Lock()
	z.cache[path] = n
	z.mu.Unlock()
	return n, nil
}

// parseNodeName reads the mode and sequence number from a lock node's
// name (zklock's layouts: "...lock-", "...__READ__", "...__WRIT__",
// "...sema-", then 10 digits).
func parseNodeName(path string) (realNode, error) {
	name := path[strings.LastIndexByte(path, '/')+1:]
	if len(name) < 10 {
		return realNode{}, fmt.Errorf("node %s: no sequence number", path)
	}
	var seq int64
	for _, d := range name[len(name)-10:] {
		if d < '0' || d > '9' {
			return realNode{}, fmt.Errorf("node %s: no sequence number", path)
		}
		seq = seq*10 + int64(d-'0')
	}
	head := name[:len(name)-10]
	n := realNode{path: path, seq: seq}
	switch {
	case strings.HasSuffix(head, "__READ__"):
		n.mode = zklock.Read
	case strings.HasSuffix(head, "__WRIT__"):
		n.mode = zklock.Write
	case strings.HasSuffix(head, "sema-"):
		n.mode = zklock.Semaphore
	case strings.HasSuffix(head, "lock-"):
		n.mode = zklock.Exclusive
	default:
		return realNode{}, fmt.Errorf("node %s: unknown layout", path)
	}
	return n, nil
}

func (z *zkSystem) resourceOf(path string) string {
	return z.byQueue[path[:strings.LastIndexByte(path, '/')]]
}

func (z *zkSystem) deleteNode(_ context.Context, path string) error {
	return z.operator.Delete(path, -1)
}

// drop cuts the client's connection, deletes path while the client cannot
// dial again (see sessionTap.cut), and lets it reconnect: the deletion
// reaches it, if it watched the node, through go-zookeeper's setWatches.
func (z *zkSystem) drop(_ context.Context, client int, path string) error {
	return z.taps[client].cut(func() error {
		if err := z.operator.Delete(path, -1); err != nil {
			return fmt.Errorf("delete %s while c%d is cut off: %w", path, client, err)
		}
		return nil
	})
}

// diverge passes every listing of res's queue that client's waiters
// decide on through divergedListing (zklock.SetListingHook) until stop.
func (z *zkSystem) diverge(client int, res string) (reported func() int, stop func()) {
	c, queue, n := z.clients[client], z.queues[res], z.diverged[client]
	before := n.Load()
	zklock.SetListingHook(c, func(parent string, names []string) []string {
		if parent != queue {
			return names
		}
		return divergedListing(names)
	})
	return func() int { return int(n.Load() - before) }, func() { zklock.SetListingHook(c, nil) }
}

// divergedPrefix is the protected prefix of the nodes divergedListing
// makes up: its UUID sorts after any other.
const divergedPrefix = "_c_ffffffff-ffff-4fff-bfff-ffffffffffff-"

// divergedListing returns a queue's children as a server that diverged
// from the ensemble could list them (ZooKeeper 3.8.0 kept an uncommitted
// create across a resynchronization, and gave its sequence number to
// another node, docs/chaos.md): every node but the newest carries the
// newest's sequence number, under a name that sorts after it. A waiter
// that trusted it would find the newest node first in line. A listing of
// one node, or of nodes without a sequence number, is left as it is.
func divergedListing(names []string) []string {
	seq := func(n string) string {
		if len(n) < 10 {
			return ""
		}
		return n[len(n)-10:]
	}
	newest := ""
	for _, n := range names {
		newest = max(newest, seq(n))
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if s := seq(n); s != "" && s != newest {
			marker := "lock-"
			if strings.HasPrefix(n, "_c_") && len(n) > len(divergedPrefix)+10 {
				marker = n[len(divergedPrefix) : len(n)-10] // the node's layout: lock-, __READ__, ...
			}
			out[i] = divergedPrefix + marker + newest
		}
	}
	return out
}

// expire ends the client's session from a connection of the test's (see
// model_session_test.go), and waits until the client is on a new one.
func (z *zkSystem) expire(ctx context.Context, client int, _ []string) error {
	c := z.clients[client]
	old := c.SessionID()
	sid, err := z.taps[client].expire(z.addr)
	switch {
	case err != nil && !errors.Is(err, errSessionGone):
		return fmt.Errorf("expire c%d (session %#x): %w", client, old, err)
	case sid != old:
		return fmt.Errorf("expire c%d: the client's last session is %#x, not %#x", client, sid, old)
	}
	for c.SessionID() == old {
		select {
		case <-ctx.Done():
			return fmt.Errorf("expire c%d: still on session %#x: %w", client, old, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

func (z *zkSystem) leftovers(context.Context) ([]string, error) {
	var left []string
	nodes, err := zktest.Tree(z.operator, z.root)
	if err != nil {
		return nil, err
	}
	for _, p := range nodes {
		if _, err := parseNodeName(p); err == nil {
			left = append(left, p)
		}
	}
	return left, nil
}

func (z *zkSystem) poll() time.Duration  { return 10 * time.Millisecond }
func (z *zkSystem) quiet() time.Duration { return modelQuietZK }

func (z *zkSystem) close() {
	for _, c := range z.clients {
		c.Close()
	}
	if z.operator != nil {
		z.operator.Close()
	}
}

// --- MemoryLocker ---

// memSystem runs a sequence on one MemoryLocker shared by the model's
// clients (it has no sessions: a client's expiry is the expiry of its
// nodes).
type memSystem struct {
	m     *zklock.MemoryLocker
	setup modelSetup
}

func newMemSystem(setup modelSetup) *memSystem {
	return &memSystem{m: zklock.NewMemoryLocker(), setup: setup}
}

func (s *memSystem) name() string { return "memory" }

func (s *memSystem) acquire(ctx context.Context, _ int, res []string, opts ...zklock.AcquireOption) (*zklock.Lease, error) {
	if len(res) == 1 {
		return s.m.Acquire(ctx, res[0], opts...)
	}
	return s.m.AcquireAll(ctx, res, opts...)
}

func (s *memSystem) list(context.Context) (map[string][]realNode, error) {
	out := map[string][]realNode{}
	for _, r := range s.setup.resources() {
		for _, n := range zklock.MemoryQueue(s.m, r) {
			out[r] = append(out[r], realNode{path: n.Path, seq: n.Seq, mode: n.Mode, label: n.Label, token: n.Token})
		}
	}
	return out, nil
}

func (s *memSystem) resourceOf(path string) string { return path[:strings.LastIndexByte(path, '/')] }

func (s *memSystem) deleteNode(_ context.Context, path string) error {
	if !zklock.MemoryDeleteNode(s.m, path) {
		return fmt.Errorf("no node %s", path)
	}
	return nil
}

// diverge: a MemoryLocker lists nothing.
func (s *memSystem) diverge(int, string) (func() int, func()) { return nil, nil }

// drop: a MemoryLocker has no connection; the delete is all there is.
func (s *memSystem) drop(ctx context.Context, _ int, path string) error {
	return s.deleteNode(ctx, path)
}

func (s *memSystem) expire(_ context.Context, _ int, paths []string) error {
	zklock.MemoryExpireNodes(s.m, paths)
	return nil
}

func (s *memSystem) leftovers(context.Context) ([]string, error) {
	var left []string
	for _, r := range s.setup.resources() {
		for _, n := range zklock.MemoryQueue(s.m, r) {
			left = append(left, n.Path)
		}
	}
	return left, nil
}

func (s *memSystem) poll() time.Duration  { return time.Millisecond }
func (s *memSystem) quiet() time.Duration { return modelQuietMemory }
func (s *memSystem) close()               {}
