package zklock_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A multi-resource acquire that loses a part it already holds, while it
// waits for another, gives everything back and queues again for every
// part (keeping the others while queueing again for the lost one would
// wait out of canonical order). It does not go on waiting as if it still
// held the lost part.
func TestIntegration_AcquireAllNoticesALostPart(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	a := newClient(t, root)
	b := newClient(t, root)
	op := newClient(t, root)
	y, err := b.Acquire(ctx, "y")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var l *zklock.Lease
	go func() {
		var err error
		l, err = a.AcquireAll(ctx, []string{"x", "y"})
		got <- err
	}()
	// a holds x and waits for y.
	var xNode string
	eventually(t, "x held, y awaited", func() bool {
		ls := a.Locks()
		if len(ls) != 2 || !ls[0].Held || ls[0].Resource != "x" || ls[1].Held {
			return false
		}
		xNode = ls[0].Path
		return true
	})
	if err := op.Conn().Delete(xNode, -1); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	// Promptly, a queues again for both: its y node is a new one too.
	var again []zklock.LocalLock
	eventually(t, "a queued again for both parts", func() bool {
		again = a.Locks()
		return len(again) == 2 && again[0].Path != xNode && again[0].Held && !again[1].Held
	})
	t.Logf("queued again %v after the part was lost", time.Since(deleted).Round(time.Millisecond))
	if took := time.Since(deleted); took > time.Second {
		t.Fatalf("a multi-resource acquire noticed its lost part after %v", took)
	}
	select {
	case err := <-got:
		t.Fatalf("AcquireAll returned %v while y was held", err)
	default:
	}
	if err := y.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("AcquireAll once y was free: %v", err)
	}
	if ps := paths(l); !slices.Equal(ps, []string{again[0].Path, again[1].Path}) {
		t.Fatalf("lease paths %v, want the re-queued nodes %v", ps, []string{again[0].Path, again[1].Path})
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := lockNodes(t, op.Conn(), root); len(n) != 0 {
		t.Fatalf("nodes left: %v", n)
	}
}

// Reentrancy means the same for AcquireAll as for Acquire: parts that a
// lease in the context holds are re-entered, the others acquired, and the
// result is one lease. It does not queue behind the caller's own lease.
func TestIntegration_AcquireAllReentersHeldParts(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	op := newClient(t, root)
	x, err := c.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	inner, cancel := context.WithTimeout(x.Context(ctx), 3*time.Second)
	defer cancel()
	both, err := c.AcquireAll(inner, []string{"x", "y"})
	if err != nil {
		t.Fatalf("AcquireAll of {x, y} under x's lease: %v", err)
	}
	if both.Token() < x.Token() || !slices.Contains(paths(both), x.Path()) || len(paths(both)) != 2 {
		t.Fatalf("lease paths %v, token %d; want x's node %s and y's, token >= %d", paths(both), both.Token(), x.Path(), x.Token())
	}
	// x's own single-resource re-entry and the whole-set re-entry still
	// re-enter what they cover.
	again, err := c.AcquireAll(both.Context(ctx), []string{"y", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := both.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// y went with the multi lease; x stays with its own lease.
	nodes := lockNodes(t, op.Conn(), root)
	if len(nodes) != 1 || nodes[0] != x.Path() {
		t.Fatalf("after the multi lease's release, nodes %v; want x's alone", nodes)
	}
	if x.Err() != nil {
		t.Fatalf("x's lease ended with the multi lease: %v", x.Err())
	}
	if err := x.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := lockNodes(t, op.Conn(), root); len(n) != 0 {
		t.Fatalf("nodes left: %v", n)
	}

	// A read lease cannot be re-entered as a write part.
	r, err := c.Acquire(ctx, "x", zklock.Read)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AcquireAll(r.Context(ctx), []string{"x", "y"}, zklock.Write); !errors.Is(err, zklock.ErrUpgrade) {
		t.Fatalf("write AcquireAll under a read lease = %v; want ErrUpgrade", err)
	}
	if err := r.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A lease that borrowed a part from a lease in its context is lost with
// it.
func TestIntegration_AcquireAllBorrowedPartLost(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	op := newClient(t, root)
	x, err := c.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	both, err := c.AcquireAll(x.Context(ctx), []string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // x's node watch is set
	if err := op.Conn().Delete(x.Path(), -1); err != nil {
		t.Fatal(err)
	}
	lostWithin(t, x, zklock.LossNodeDeleted, time.Second)
	lostWithin(t, both, zklock.LossPartner, time.Second)
	eventually(t, "y's node deleted", func() bool { return len(lockNodes(t, op.Conn(), root)) == 0 })
}

// A re-entered lease cannot be downgraded: the outer holder counts on the
// write lock.
func TestIntegration_DowngradeOfAReenteredLease(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	w, err := c.Acquire(ctx, "r", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := c.Acquire(w.Context(ctx), "r", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Downgrade(ctx); !errors.Is(err, zklock.ErrDowngradeBlocked) {
		t.Fatalf("Downgrade of a re-entered lease = %v; want ErrDowngradeBlocked", err)
	}
	if n := lockNodes(t, c.Conn(), root); len(n) != 1 {
		t.Fatalf("nodes %v, want the write node alone", n)
	}
	if err := inner.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := w.Downgrade(ctx)
	if err != nil {
		t.Fatalf("Downgrade once the inner lease is released: %v", err)
	}
	if err := r.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Leader, Observe and Inspect never wait on ZooKeeper past the caller's
// context.
func TestIntegration_ReadsHonourTheContextWhileZooKeeperIsAway(t *testing.T) {
	srv, err := zktest.StartServer(zktest.WithTickTime(500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := newClientAt(t, srv.Addr(), zktest.UniqueRoot(t))
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	const d = 300 * time.Millisecond
	for name, read := range map[string]func(ctx context.Context) error{
		"Leader": func(ctx context.Context) error {
			_, err := c.Leader(ctx, "e")
			return err
		},
		"Inspect": func(ctx context.Context) error {
			_, err := c.Inspect(ctx, "r")
			return err
		},
		"RequestRelease": func(ctx context.Context) error {
			_, err := c.RequestRelease(ctx, "r")
			return err
		},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		start := time.Now()
		err := read(ctx)
		cancel()
		if took := time.Since(start); took > d+time.Second {
			t.Errorf("%s returned %v after %v; want within its context's %v", name, err, took, d)
		}
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, zklock.ErrUnavailable) {
			t.Errorf("%s = %v; want the context's error or ErrUnavailable", name, err)
		}
		t.Logf("%s: %v after %v", name, err, time.Since(start).Round(time.Millisecond))
	}
}

// A multi-resource lease's parts carry their own nodes' tokens: the token
// a store must check for each resource.
func TestIntegration_LeaseParts(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	l, err := c.AcquireAll(ctx, []string{"b", "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	ps := l.Parts()
	if len(ps) != 2 || ps[0].Resource != "a" || ps[1].Resource != "b" {
		t.Fatalf("parts %+v; want a then b", ps)
	}
	var top int64
	for _, p := range ps {
		ok, st, err := c.Conn().Exists(p.Path)
		if err != nil || !ok || st.Czxid != p.Token {
			t.Fatalf("part %+v: node %v %v, czxid %d", p, ok, err, st.Czxid)
		}
		top = max(top, p.Token)
	}
	if l.Token() != top {
		t.Fatalf("Token %d, want the largest part token %d", l.Token(), top)
	}
}

// Events carry the acquire's resources as given, so an observer can tell
// a multi-resource lease from a resource whose name holds a comma.
func TestIntegration_EventResources(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	rec := &recorder{}
	c := newClient(t, root, zklock.WithObserver(rec))
	single, err := c.Acquire(ctx, "a,b")
	if err != nil {
		t.Fatal(err)
	}
	multi, err := c.AcquireAll(ctx, []string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	single.Release(ctx)
	multi.Release(ctx)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, e := range rec.events {
		if e.Kind == zklock.EventSuspended || e.Kind == zklock.EventResumed {
			continue
		}
		want := []string{"a,b"}
		if e.Resource != "a,b" && e.Resource != "a%2Cb" {
			want = []string{"x", "y"}
		}
		if !slices.Equal(e.Resources, want) {
			t.Errorf("%v event for %q: Resources %q, want %q", e.Kind, e.Resource, e.Resources, want)
		}
	}
}

// A Lease already released cannot be downgraded through, even while a
// re-entry keeps its node: the write lock is the re-entry's now.
func TestIntegration_DowngradeOfAReleasedLease(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	outer, err := c.Acquire(ctx, "r", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := c.Acquire(outer.Context(ctx), "r", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	if err := outer.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := outer.Downgrade(ctx); !errors.Is(err, zklock.ErrReleased) {
		t.Fatalf("Downgrade of a released Lease = %v; want ErrReleased", err)
	}
	if n := lockNodes(t, c.Conn(), root); len(n) != 1 || inner.Err() != nil {
		t.Fatalf("nodes %v, inner lease %v; want the write node, still held", n, inner.Err())
	}
	if err := inner.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
