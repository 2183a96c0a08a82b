package bench

import (
	"context"
	"errors"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
)

// Names of the two sides.
const (
	NameZKLock = "zklock"
	NameZKLib  = "zk.Lock"
)

// Side is one lock implementation under test: zklock (ZKLock) or
// go-zookeeper's zk.Lock (GoZookeeper).
type Side struct {
	name string
	// watches is how many server-side watches one waiting lock sets, used
	// to tell when a queue has settled.
	watches int
	// queueWatches: likewise for a waiter in a queue of waiters of the
	// same session (zklock's wait for a node of their own client, with a
	// watch on their own node only).
	queueWatches  int
	holderWatches int  // likewise for a holding lock
	container     bool // queue znodes are CONTAINER nodes
	open          func(ctx context.Context, h *Harness, root string) (session, error)
}

// session is one ZooKeeper session of a side.
type session interface {
	lock(ctx context.Context, resource string) (unlock func(ctx context.Context) error, err error)
	// conn returns the go-zookeeper connection the session's requests go
	// through (zklock's passes through its own tracked connection).
	conn() *zk.Conn
	close()
}

// Name returns the side's name, NameZKLock or NameZKLib.
func (s Side) Name() string { return s.name }

// queuePath returns the znode that holds resource's queue under root. Both
// sides put it at root/resource for the plain names the scenarios use.
func (s Side) queuePath(root, resource string) string {
	return root + "/" + zklock.EscapeResource(resource)
}

// prepare creates the queue znodes of resources as the side itself would
// (containers for zklock, persistent nodes for zk.Lock), so that a timed run
// measures the steady state rather than first-use creation.
func (s Side) prepare(h *Harness, root string, resources []string) error {
	if err := mkdirs(h.admin, root, false); err != nil {
		return err
	}
	return parallel(len(resources), 64, func(i int) error {
		return mkdirs(h.admin, s.queuePath(root, resources[i]), s.container)
	})
}

// ZKLock returns the zklock side; opts are added to every Client it
// connects (after WithRoot and WithSessionTimeout).
func ZKLock(opts ...zklock.Option) Side {
	return Side{name: NameZKLock, watches: 1, queueWatches: 1, holderWatches: 1, container: true,
		open: func(ctx context.Context, h *Harness, root string) (session, error) {
			all := append([]zklock.Option{zklock.WithRoot(root), zklock.WithSessionTimeout(h.timeout)}, opts...)
			c, err := zklock.Connect(ctx, h.sessionServers(root), all...)
			if err != nil {
				return nil, err
			}
			return zklockSession{c}, nil
		}}
}

type zklockSession struct{ c *zklock.Client }

// lock acquires under the caller's context, which can be cancelled like a
// request's, and returns a release that detaches from its context as the
// documentation recommends (Release(context.WithoutCancel(ctx))): the
// release then needs no goroutine to bound it. Measured in one process,
// releasing under a cancellable context instead costs 116 against 107 µs
// of client CPU per lock with 1,000 distinct locks, and 1,078 against
// 1,109 acquires/s with 32 contenders.
func (s zklockSession) lock(ctx context.Context, resource string) (func(context.Context) error, error) {
	l, err := s.c.Acquire(ctx, resource)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return l.Release(context.WithoutCancel(ctx)) }, nil
}

func (s zklockSession) conn() *zk.Conn { return s.c.Conn() }

func (s zklockSession) close() { _ = s.c.Close() }

// GoZookeeper returns the side of go-zookeeper's own recipe:
// zk.NewLock(conn, path, zk.WorldACL(zk.PermAll)), one *zk.Lock per
// acquire. zk.Lock takes no context: its acquires end only when they
// succeed or the connection closes.
func GoZookeeper() Side {
	return Side{name: NameZKLib, watches: 1, queueWatches: 1,
		open: func(ctx context.Context, h *Harness, root string) (session, error) {
			conn, err := dial(ctx, h.sessionServers(root), h.timeout)
			if err != nil {
				return nil, err
			}
			return zkSession{zc: conn, root: root}, nil
		}}
}

type zkSession struct {
	zc   *zk.Conn
	root string
}

func (s zkSession) lock(_ context.Context, resource string) (func(context.Context) error, error) {
	l := zk.NewLock(s.zc, s.root+"/"+zklock.EscapeResource(resource), zk.WorldACL(zk.PermAll))
	if err := l.Lock(); err != nil {
		return nil, err
	}
	return func(context.Context) error { return l.Unlock() }, nil
}

func (s zkSession) conn() *zk.Conn { return s.zc }

func (s zkSession) close() { s.zc.Close() }

// Sides returns both sides, zklock first.
func Sides() []Side { return []Side{ZKLock(), GoZookeeper()} }

// errClosed reports whether err is what a side's waiting acquire returns
// when its session is closed under it.
func errClosed(err error) bool {
	return errors.Is(err, zklock.ErrClosed) || errors.Is(err, zk.ErrClosing) ||
		errors.Is(err, zk.ErrConnectionClosed) || strings.Contains(err.Error(), "closing")
}

// closeAll closes every session.
func closeAll(ss []session) {
	for _, s := range ss {
		s.close()
	}
}
