package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A waiter that queues again starts clean: whatever it knew about its
// previous node (the watch on it, its token, its path) belongs to that
// node. These tests take a waiter through a re-queue and then check that
// its lease behaves as any other: lost at once when its node is deleted,
// told of a revocation request, with the token of its own node.

// requeued queues a waiter of its own client behind a holder, deletes the
// waiter's node as an operator would, waits for the waiter to queue again,
// then releases the holder and returns the waiter's lease.
func requeued(t *testing.T, root string, waiterOpts ...zklock.Option) (w *zklock.Client, l *zklock.Lease, op *zklock.Client) {
	t.Helper()
	ctx := testCtx(t)
	holderC := newClient(t, root)
	w = newClientAt(t, zktest.Shared().Addr(), root, waiterOpts...)
	op = newClient(t, root)
	h, err := holderC.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		var err error
		l, err = w.Acquire(ctx, "r")
		got <- err
	}()
	first := waitQueued(t, w, "")
	if err := op.Conn().Delete(first, -1); err != nil {
		t.Fatal(err)
	}
	second := waitQueued(t, w, first)
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter's acquire after its re-queue: %v", err)
	}
	if l.Path() != second {
		t.Fatalf("lease on %s, want the re-queued node %s", l.Path(), second)
	}
	return w, l, op
}

// waitQueued waits until c has exactly one lock node, waiting (position
// >= 1), other than not, and returns its path.
func waitQueued(t *testing.T, c *zklock.Client, not string) string {
	t.Helper()
	var path string
	eventually(t, "a waiter queued on a node other than "+not, func() bool {
		ls := c.Locks()
		if len(ls) != 1 || ls[0].Position < 1 || ls[0].Path == not {
			return false
		}
		path = ls[0].Path
		return true
	})
	return path
}

// lostWithin checks that l ends as lost for reason within d.
func lostWithin(t *testing.T, l *zklock.Lease, reason zklock.LossReason, d time.Duration) {
	t.Helper()
	select {
	case <-l.Done():
	case <-time.After(d):
		t.Fatalf("lease on %s not lost %v after its node was deleted (Err %v)", l.Path(), d, l.Err())
	}
	var le *zklock.LostError
	if !errors.As(l.Err(), &le) || le.Reason != reason {
		t.Fatalf("lease Err = %v; want a LostError for %v", l.Err(), reason)
	}
}

func TestIntegration_RequeuedWaiterLeaseIsWatched(t *testing.T) {
	for _, delay := range []time.Duration{0, zklock.DefaultNodeWatchDelay, time.Hour} {
		t.Run("watch-delay="+delay.String(), func(t *testing.T) {
			root := zktest.UniqueRoot(t)
			_, l, op := requeued(t, root, zklock.WithNodeWatchDelay(delay))
			// Step 4 of the issue: the operator deletes the lease's node.
			time.Sleep(50 * time.Millisecond) // past the default watch delay
			if err := op.Conn().Delete(l.Path(), -1); err != nil {
				t.Fatal(err)
			}
			lostWithin(t, l, zklock.LossNodeDeleted, time.Second)
		})
	}
}

func TestIntegration_RequeuedWaiterLeaseHearsRevocation(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	_, l, op := requeued(t, root)
	if n, err := op.RequestRelease(ctx, "r"); err != nil || n != 1 {
		t.Fatalf("RequestRelease = %d, %v; want 1 holder asked", n, err)
	}
	select {
	case <-l.RevokeRequested():
	case <-time.After(2 * time.Second):
		t.Fatal("a re-queued waiter's lease did not hear the revocation request")
	}
}

func TestIntegration_RequeuedWaiterTokenIsItsNode(t *testing.T) {
	root := zktest.UniqueRoot(t)
	_, l, op := requeued(t, root)
	ok, st, err := op.Conn().Exists(l.Path())
	if err != nil || !ok {
		t.Fatalf("exists %s: %v %v", l.Path(), ok, err)
	}
	if l.Token() != st.Czxid {
		t.Fatalf("token %d, want the czxid of the lease's node %d", l.Token(), st.Czxid)
	}
}

// The re-create's reply is lost: the waiter finds its node by its
// protected id. Its token must be that node's czxid, not the deleted one's.
func TestIntegration_RequeueWithLostCreateReply(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	p := newProxy(t)
	holderC := newClient(t, root)
	w := newClientAt(t, p.Addr(), root)
	op := newClient(t, root)
	h, err := holderC.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var l *zklock.Lease
	go func() {
		var err error
		l, err = w.Acquire(ctx, "r")
		got <- err
	}()
	first := waitQueued(t, w, "")
	lost := p.LoseReply(zktest.OpCreate)
	if err := op.Conn().Delete(first, -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost:
	case <-time.After(10 * time.Second):
		t.Fatal("the re-create's reply was not lost")
	}
	second := waitQueued(t, w, first)
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if l.Path() != second {
		t.Fatalf("lease on %s, want %s", l.Path(), second)
	}
	ok, st, err := op.Conn().Exists(l.Path())
	if err != nil || !ok {
		t.Fatalf("exists %s: %v %v", l.Path(), ok, err)
	}
	if l.Token() != st.Czxid {
		t.Fatalf("token %d, want the czxid of the lease's node %d", l.Token(), st.Czxid)
	}
	if n := len(lockNodes(t, op.Conn(), root)); n != 1 {
		t.Fatalf("%d lock nodes, want the lease's alone", n)
	}
	if err := op.Conn().Delete(l.Path(), -1); err != nil {
		t.Fatal(err)
	}
	lostWithin(t, l, zklock.LossNodeDeleted, time.Second)
}

// A waiter whose session expires queues again on the new session; the
// lease it then gets is lost at once when its node is deleted.
func TestIntegration_RequeueAfterSessionExpiry(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	p := newProxy(t)
	holderC := newClient(t, root)
	w := newClientAt(t, p.Addr(), root)
	op := newClient(t, root)
	h, err := holderC.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var l *zklock.Lease
	go func() {
		var err error
		l, err = w.Acquire(ctx, "r")
		got <- err
	}()
	first := waitQueued(t, w, "")
	sid := w.SessionID()
	p.Blackhole(true)
	eventually(t, "the waiter's node gone with its session", func() bool {
		ok, _, err := op.Conn().Exists(first)
		return err == nil && !ok
	})
	p.Blackhole(false)
	second := waitQueued(t, w, first)
	if w.SessionID() == sid {
		t.Fatal("the session did not change")
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if l.Path() != second {
		t.Fatalf("lease on %s, want %s", l.Path(), second)
	}
	time.Sleep(50 * time.Millisecond)
	if err := op.Conn().Delete(l.Path(), -1); err != nil {
		t.Fatal(err)
	}
	lostWithin(t, l, zklock.LossNodeDeleted, time.Second)
}

// A reader of client C queued behind C's own waiting writer, which has no
// watch on its node (it is not next in line): an operator deletes the
// writer's node. The rule now lets the reader hold (only readers are
// ahead), and it must, within a hand-off, though no watch of the writer's
// own told C (found by the model-based test, seed 2500721371).
func TestIntegration_LocalWaiterBehindADeletedWaiter(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	other := newClient(t, root)
	c := newClient(t, root)
	op := newClient(t, root)
	r0, err := other.Acquire(ctx, "b", zklock.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer r0.Release(ctx)
	r1, err := c.Acquire(ctx, "b", zklock.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Release(ctx)
	writer := make(chan error, 1)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	go func() {
		_, err := c.Acquire(wctx, "b", zklock.Exclusive)
		writer <- err
	}()
	var xPath string
	eventually(t, "the writer queued", func() bool {
		for _, l := range c.Locks() {
			if l.Mode == zklock.Exclusive && l.Position == 2 {
				xPath = l.Path
				return true
			}
		}
		return false
	})
	reader := make(chan error, 1)
	go func() {
		l, err := c.Acquire(ctx, "b", zklock.Read)
		if err == nil {
			err = l.Release(ctx)
		}
		reader <- err
	}()
	eventually(t, "the reader queued behind the writer", func() bool {
		for _, l := range c.Locks() {
			if l.Mode == zklock.Read && l.Position == 3 {
				return true
			}
		}
		return false
	})
	time.Sleep(100 * time.Millisecond)
	if err := op.Conn().Delete(xPath, -1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-reader:
		if err != nil {
			t.Fatalf("reader: %v", err)
		}
	case <-time.After(handoffBound):
		t.Fatalf("the reader did not hold %v after the writer ahead of it was deleted", handoffBound)
	}
	wcancel()
	<-writer
}
