package queue

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/internal/canary"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
	"github.com/zklockkit/zklockkit/zklock/internal/session"
)

// Loss says why a held node's lease was lost. Its values are
// zklock.LossReason's.
type Loss int

// Losses told to a Holder.
const (
	LossSessionExpired    Loss = iota + 1 // the session expired: its nodes are gone
	LossSessionUnverified                 // the session can no longer be proven alive
	LossNodeDeleted                       // someone else deleted the node
	LossClientClosed                      // the client closed
)

// Holder is the lease a held node belongs to (package zklock's lease
// state). Its methods may be called on go-zookeeper's goroutines: they
// must not block.
type Holder interface {
	// Lose ends the lease: its node is gone, or given up.
	Lose(Loss)
	// Released completes a release under way that the client's closing
	// made complete (closing the session deletes the node).
	Released()
	// RevokeRequested passes on a request to release the lease (written
	// into its node by Curator's Revoker or RequestRelease).
	RevokeRequested()
	// Ended returns a channel closed once the lease has ended and its
	// holder has been told: a waiter of this client behind the node
	// holds only then.
	Ended() <-chan struct{}
}

// Config is what Queues needs besides its session.
type Config struct {
	ACL    []zk.ACL // of every node created
	Logger *slog.Logger
}

// Queues is the client's lock nodes on one session, and what it does with
// them. It implements session.Nodes.
type Queues struct {
	s   *session.Session
	acl []zk.ACL
	log *slog.Logger

	creating atomic.Int32                                                 // creates in flight (see createAndList)
	listing  atomic.Pointer[func(parent string, names []string) []string] // a test's hook (SetListingHook)
	noCount  atomic.Bool                                                  // a queue's data may not be written (see createCounted)
	dels     deletes                                                      // deletes, grouped (see delete)

	mu  sync.Mutex
	sid int64 // the session nodes are registered on (Session); 0: none
	// nodes: our live lock nodes, by path
	nodes registry
	// creates[id] is closed once the create of the node with protected
	// id has ended, registered in nodes or not (see ownNode).
	creates map[string]chan struct{}
	// covers[queue] are the covers armed by listings of queue (cover.go).
	covers map[string]*cover
	// deleting: lock nodes deleteNode is deleting (path → its session),
	// with the number of deletes of it under way (Deleting)
	deleting map[string]deletingNode
}

var _ session.Nodes = (*Queues)(nil)

// New returns the registry of session s's lock nodes; s is then connected
// with it (session.Session.Connect).
func New(s *session.Session, cfg Config) *Queues {
	q := &Queues{s: s, acl: cfg.ACL, log: cfg.Logger, nodes: make(registry), creates: make(map[string]chan struct{})}
	q.dels.flush = q.flushDeletes
	return q
}

// conn is the session's go-zookeeper connection.
func (q *Queues) conn() *zk.Conn { return q.s.Conn() }

// Event takes a watch event of one of our nodes or queues.
func (q *Queues) Event(ev zk.Event) {
	switch ev.Type {
	case zk.EventNodeDeleted:
		q.mu.Lock()
		e := q.nodes[ev.Path]
		var h Holder
		if q.nodes.drop(e) && e.holder != nil && !e.releasing {
			h = e.holder
		}
		q.mu.Unlock()
		if h != nil {
			h.Lose(LossNodeDeleted)
		}
	case zk.EventNodeChildrenChanged:
		q.mu.Lock()
		q.coverEventLocked(ev.Path)
		q.mu.Unlock()
	case zk.EventNodeDataChanged:
		// Someone wrote our node: the data watch is spent, set it again.
		q.mu.Lock()
		e := q.nodes[ev.Path]
		q.mu.Unlock()
		if e != nil {
			q.s.Go(func(ctx context.Context) { q.rearm(ctx, e) })
		}
	}
}

// Session forgets the nodes of every session but sid, which are gone, and
// returns what tells their leases.
func (q *Queues) Session(sid int64) (then func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if sid == q.sid && sid != 0 {
		return nil
	}
	q.sid = sid
	q.dropCoversLocked()
	if canary.On(canary.OldSessionGrant) {
		return nil // the canary: the old session's nodes kept, their leases untold
	}
	var lost []Holder
	for _, e := range q.nodes.dropWhere(func(e *Node) bool { return e.sessionID != sid }) {
		if e.holder != nil && !e.releasing {
			lost = append(lost, e.holder)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	return func() {
		for _, h := range lost {
			h.Lose(LossSessionExpired)
		}
	}
}

// Closing forgets every node: held leases are lost (LossClientClosed),
// releases under way complete, waiters end (ErrClosed).
func (q *Queues) Closing() {
	q.mu.Lock()
	q.dropCoversLocked()
	var lost, releasing []Holder
	for _, e := range q.nodes.dropWhere(func(*Node) bool { return true }) {
		switch {
		case e.holder != nil && !e.releasing:
			lost = append(lost, e.holder)
		case e.holder != nil:
			releasing = append(releasing, e.holder)
		}
	}
	q.mu.Unlock()
	for _, h := range lost {
		h.Lose(LossClientClosed)
	}
	for _, h := range releasing {
		h.Released() // closing the session deletes the node
	}
}

// Unverified gives up every held node: the session can no longer be
// proven alive. The nodes are deleted in the background, in case the
// session survives after all.
func (q *Queues) Unverified() {
	q.mu.Lock()
	orphans := q.nodes.dropWhere(func(e *Node) bool { return e.holder != nil && !e.releasing })
	q.mu.Unlock()
	if len(orphans) > 0 {
		q.log.Warn("zklock: session cannot be proven alive; leases given up", "leases", len(orphans))
	}
	for _, e := range orphans {
		e.holder.Lose(LossSessionUnverified)
	}
	for _, e := range orphans {
		q.s.Go(func(ctx context.Context) { _ = q.deleteNode(ctx, e.path, e.sessionID) })
	}
}

// Busy reports whether there are lock nodes or creates in flight.
func (q *Queues) Busy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.nodes) > 0 || len(q.creates) > 0
}

// Info describes one of our lock nodes (Nodes).
type Info struct {
	Resource  string
	Kind      layout.Kind
	Path      string
	Holder    Holder // nil while it waits
	Position  int    // nodes ahead, last seen
	Since     time.Time
	SessionID int64
}

// Nodes returns our lock nodes that are not being deleted, ordered by
// resource and path. It makes no ZooKeeper call.
func (q *Queues) Nodes() []Info {
	q.mu.Lock()
	out := make([]Info, 0, len(q.nodes))
	for _, e := range q.nodes {
		if e.deleted() {
			continue
		}
		out = append(out, Info{Resource: e.resource, Kind: e.kind, Path: e.path, Holder: e.holder,
			Position: int(e.position.Load()), Since: e.since, SessionID: e.sessionID})
	}
	q.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Resource != out[j].Resource {
			return out[i].Resource < out[j].Resource
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// deletingNode is a lock node deleteNode is deleting: its session, and how
// many deletes of it are under way.
type deletingNode struct {
	sid int64
	n   int
}

// Deleting returns the paths of the lock nodes of the current session
// that are being deleted and that ZooKeeper has not yet confirmed gone:
// those a delete is under way for, and those about to be: the later nodes
// of a release under way, and those of an acquire given up with a step
// still running (Request.GivenUp), which deletes them as it ends. With
// Nodes, it accounts for every node of the session the client knows of.
func (q *Queues) Deleting() []string {
	sid := q.s.ID()
	q.mu.Lock()
	var ps []string
	for p, d := range q.deleting {
		if d.sid == sid {
			ps = append(ps, p)
		}
	}
	for p, e := range q.nodes {
		if e.sessionID == sid && e.deleted() {
			if _, ok := q.deleting[p]; !ok {
				ps = append(ps, p)
			}
		}
	}
	q.mu.Unlock()
	sort.Strings(ps)
	return ps
}

// startDeleting records a delete of path, of session sid, under way, and
// returns what records its end.
func (q *Queues) startDeleting(path string, sid int64) (done func()) {
	q.mu.Lock()
	if q.deleting == nil {
		q.deleting = make(map[string]deletingNode)
	}
	d := q.deleting[path]
	q.deleting[path] = deletingNode{sid: sid, n: d.n + 1}
	q.mu.Unlock()
	return func() {
		q.mu.Lock()
		if d := q.deleting[path]; d.n <= 1 {
			delete(q.deleting, path)
		} else {
			d.n--
			q.deleting[path] = d
		}
		q.mu.Unlock()
	}
}

// BusyCreates makes q count one more create in flight until done is
// called (a test's hook), so that its acquires take the path of many concurrent
// creates on one session (see createAndList).
func (q *Queues) BusyCreates() (done func()) {
	q.creating.Add(1)
	return func() { q.creating.Add(-1) }
}

// SetListingHook makes every listing of a queue that a waiter decides on
// pass through h first (nil: none): a test's way to replay a listing of a
// diverged server.
func (q *Queues) SetListingHook(h func(parent string, names []string) []string) {
	if h == nil {
		q.listing.Store(nil)
		return
	}
	q.listing.Store(&h)
}
