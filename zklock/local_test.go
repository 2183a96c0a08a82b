package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Waiters of one client in one queue hand the lock on among themselves: a
// waiter whose predecessor is a node of its own client waits for it with no
// watch on it, and takes the lock when it goes after holding, with no
// request. The server sees one request per hand-off, the release's delete.
func TestIntegration_LocalHandoff(t *testing.T) {
	srv := countedServer(t)
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	rec := &recorder{}
	holderC := newClientAt(t, srv.Addr(), root, zklock.WithSessionTimeout(40*time.Second), zklock.WithNodeWatchDelay(0))
	c := newClientAt(t, srv.Addr(), root, zklock.WithObserver(rec), zklock.WithSessionTimeout(40*time.Second))
	holder, err := holderC.Acquire(ctx, "local")
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var ov overlap
	var mu sync.Mutex
	var tokens []int64 // in the order the lock was taken
	var wg sync.WaitGroup
	for i := range n {
		if i == 1 {
			// The first waiter queues alone, so that it watches the
			// holder's node and its own (with others in flight, a create
			// that finds one node ahead waits on a cover instead, see
			// cover.go and cover_test.go).
			eventually(t, "the first waiter enqueued", func() bool { return rec.count(zklock.EventEnqueued) == 1 })
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := c.Acquire(ctx, "local")
			if err != nil {
				t.Error(err)
				return
			}
			ov.enter()
			mu.Lock()
			tokens = append(tokens, l.Token())
			mu.Unlock()
			ov.leave()
			if err := l.Release(context.WithoutCancel(ctx)); err != nil {
				t.Error(err)
			}
		}()
	}
	eventually(t, "16 waiters enqueued", func() bool { return rec.count(zklock.EventEnqueued) == n })
	// The first waiter watches the holder's node and its own; every other
	// waiter only its own. With the holder's watch on its node: n+2
	// watches on n+1 paths, and none on another waiter's node.
	settledWatches(t, srv, n+2, n+1)
	recv := packetsDuring(t, srv, func() {
		if err := holder.Release(ctx); err != nil {
			t.Error(err)
		}
		wg.Wait()
	})
	// The holder's delete and each waiter's; allow 4 pings. A waiter that
	// listed the queue or set a watch when woken would add n more.
	if recv < n+1 || recv > n+1+4 {
		t.Fatalf("server received %d packets for %d hand-offs, want %d..%d (the deletes)", recv, n, n+1, n+1+4)
	}
	if len(tokens) != n || !slices.IsSorted(tokens) || ov.violations != 0 {
		t.Fatalf("tokens in acquisition order %v (want %d, increasing: queue order), %d overlaps", tokens, n, ov.violations)
	}
	if nodes := lockNodes(t, c.Conn(), root); len(nodes) != 0 {
		t.Fatalf("nodes left: %v", nodes)
	}
	t.Logf("%d local hand-offs: %d packets to the server", n, recv)
}

// A holder whose node is deleted (by an operator) is told before the waiter
// of its own client behind it holds.
func TestIntegration_LocalHolderToldFirst(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root, zklock.WithNodeWatchDelay(0))
	op := newClient(t, root)
	for round := range 5 {
		h, err := c.Acquire(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			l         *zklock.Lease
			err       error
			holderErr error // the holder's Err when the waiter returned
		}
		got := make(chan result, 1)
		go func() {
			l, err := c.Acquire(ctx, "r")
			got <- result{l, err, h.Err()}
		}()
		eventually(t, "the waiter queued", func() bool { return len(c.Locks()) == 2 })
		if round%2 == 1 {
			time.Sleep(20 * time.Millisecond) // the holder's watch is set by now
		}
		if err := op.Conn().Delete(h.Path(), -1); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if r.err != nil {
			t.Fatal(r.err)
		}
		if !errors.Is(r.holderErr, zklock.ErrLeaseLost) {
			t.Fatalf("round %d: the waiter held while the holder's Err was %v, want it lost first", round, r.holderErr)
		}
		if err := r.l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// The node of a waiter behind another of its client's nodes is watched:
// deleted, the waiter queues again at once, and the one behind it moves up.
func TestIntegration_LocalWaiterNodeDeleted(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	op := newClient(t, root)
	h, err := c.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	var ov overlap
	var mu sync.Mutex
	var order []int
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			l, err := c.Acquire(ctx, "r")
			if err == nil {
				ov.enter()
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				ov.leave()
				err = l.Release(ctx)
			}
			errs <- err
		}()
		eventually(t, fmt.Sprintf("waiter %d queued", i), func() bool { return len(c.Locks()) == i+2 })
	}
	var first string
	for _, l := range c.Locks() {
		if l.Position == 1 {
			first = l.Path
		}
	}
	// wait until the waiters' own watches are set: a waiter behind a node of
	// its own client sets one before it waits
	time.Sleep(100 * time.Millisecond)
	if err := op.Conn().Delete(first, -1); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first waiter queued again", func() bool {
		ls := c.Locks()
		return len(ls) == 3 && !slices.ContainsFunc(ls, func(l zklock.LocalLock) bool { return l.Path == first })
	})
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(order, []int{1, 0}) || ov.violations != 0 {
		t.Fatalf("order %v, %d overlaps; want [1 0] (the re-queued waiter last) and 0", order, ov.violations)
	}
	eventually(t, "an empty queue", func() bool { return len(lockNodes(t, op.Conn(), root)) == 0 })
}

// A waiter of the client that gives up leaves the one behind it to find
// its place again; nobody hangs and nothing is left.
func TestIntegration_LocalWaiterCancelled(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	h, err := c.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	errs := make([]chan error, 3)
	for i := range 3 {
		errs[i] = make(chan error, 1)
		actx := ctx
		if i == 1 {
			actx = cctx
		}
		go func() {
			l, err := c.Acquire(actx, "r")
			if err == nil {
				err = l.Release(ctx)
			}
			errs[i] <- err
		}()
		eventually(t, fmt.Sprintf("waiter %d queued", i), func() bool { return len(c.Locks()) == i+2 })
	}
	cancel()
	if err := <-errs[1]; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v, want context.Canceled", err)
	}
	eventually(t, "three nodes left in the queue", func() bool { return len(lockNodes(t, c.Conn(), root)) == 3 })
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2} {
		if err := <-errs[i]; err != nil {
			t.Fatalf("waiter %d: %v", i, err)
		}
	}
	eventually(t, "an empty queue", func() bool { return len(lockNodes(t, c.Conn(), root)) == 0 })
}

// A part of a multi-resource acquire that held and was given back when the
// acquire failed hands its resource to the client's waiter behind it.
func TestIntegration_LocalAfterAbandonedPart(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	hb, err := c.Acquire(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	multiCtx, cancel := context.WithCancel(ctx)
	multi := make(chan error, 1)
	go func() {
		_, err := c.AcquireAll(multiCtx, []string{"a", "b"})
		multi <- err
	}()
	// "a" held by the multi-resource acquire, which waits for "b"
	eventually(t, "the multi-resource acquire holding a", func() bool { return len(c.Locks()) == 3 })
	got := make(chan error, 1)
	go func() {
		l, err := c.Acquire(ctx, "a")
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	eventually(t, "a waiter on a", func() bool { return len(c.Locks()) == 4 })
	cancel()
	if err := <-multi; !errors.Is(err, context.Canceled) {
		t.Fatalf("multi-resource acquire: %v, want context.Canceled", err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter on a still waits 10s after the multi-resource acquire gave it back")
	}
	if err := hb.Release(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "an empty queue", func() bool { return len(lockNodes(t, c.Conn(), root)) == 0 })
}

// A waiter handed the lock by its own client while the server is out of
// reach (its holder was given up: the session could not be proven alive)
// must prove the session alive before it holds. That proof waits for the
// link to come back, within the waiter's context; it does not fail the
// acquire with go-zookeeper's connection error (seen in the chaos
// campaign as acquires failing with "zk: connection closed").
func TestIntegration_LocalHandoffWhileCutOff(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	for round := range 3 {
		p := newProxy(t)
		c := newClientAt(t, p.Addr(), root)
		h, err := c.Acquire(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			l, err := c.Acquire(ctx, "r")
			if err == nil {
				err = l.Release(ctx)
			}
			got <- err
		}()
		eventually(t, "the waiter queued", func() bool { return len(c.Locks()) == 2 })
		time.Sleep(200 * time.Millisecond) // its watch on its own node is set
		// Round 0: silence (the link blackholed); rounds 1 and 2: the
		// connection dropped and reconnects refused, for a while after
		// the holder is given up.
		if round == 0 {
			p.Blackhole(true)
		} else {
			p.RejectNew(true)
			p.DropAll()
		}
		select {
		case <-h.Done():
		case <-time.After(4 * testSessionTimeout):
			t.Fatal("the holder was not given up while cut off")
		}
		time.Sleep(time.Duration(round) * 1500 * time.Millisecond)
		p.Blackhole(false)
		p.RejectNew(false)
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("round %d: the waiter's acquire failed: %v", round, err)
			}
		case <-time.After(6 * testSessionTimeout):
			t.Fatalf("round %d: the waiter did not acquire after the link came back", round)
		}
		c.Close()
	}
}
