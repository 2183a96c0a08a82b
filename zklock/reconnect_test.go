package zklock_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A waiter whose node ahead goes takes the lock with no request, trusting
// that a deletion of its own node would have reached it first: ZooKeeper
// sends a session's watch events in the order of the changes. Across a
// reconnection that order is gone: go-zookeeper restores its watches in
// one setWatches request, and the server answers it with an event for
// every watched node that went meanwhile, in the order of the request's
// list (go-zookeeper's map order), not of the changes. So a waiter that
// reconnects must not take the lock on its predecessor's event without
// finding its own node.
//
// The sequence, on each of n resources: w waits behind p's holder, c
// behind w. w's connection is cut; an operator deletes w's node, c moves
// up behind p, p releases, c holds. w reconnects and hears of all the
// deletions at once, in no particular order. Each w must queue again
// behind c, not hold beside it. With the events in random order, a client
// that trusts their order held beside c on 1 to 4 of the 12 resources in
// 9 of 12 rounds (4 runs, each failed).
//
// w's acquires start one at a time, each queued before the next starts, so
// that each waits with the two watches of a direct hand-off (on p's node
// and on its own); in the last round they start together, and all but
// the first wait on a cover (cover.go), which lists the queue when it
// fires.
func TestIntegration_HandoffAfterReconnectFindsOwnNode(t *testing.T) {
	srv := countedServer(t)
	for range 3 {
		t.Run("direct", func(t *testing.T) { handoffAfterReconnect(t, srv, false) })
	}
	t.Run("covered", func(t *testing.T) { handoffAfterReconnect(t, srv, true) })
}

func handoffAfterReconnect(t *testing.T, srv *zktest.Server, together bool) {
	const n = 12
	watches := func() int {
		// data and child watches both (wchs counts data watches only)
		out, err := srv.FourLetter("mntr")
		if err != nil {
			t.Fatal(err)
		}
		_, v, _ := strings.Cut(out, "zk_watch_count\t")
		v, _, _ = strings.Cut(v, "\n")
		k, _ := strconv.Atoi(strings.TrimSpace(v))
		return k
	}
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	px, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	w := newClientAt(t, px.Addr(), root, zklock.WithSessionTimeout(20*time.Second))
	p := newClientAt(t, srv.Addr(), root)
	c := newClientAt(t, srv.Addr(), root)
	op := newClientAt(t, srv.Addr(), root)
	type result struct {
		i int
		l *zklock.Lease
	}
	res := func(i int) string { return fmt.Sprintf("r%d", i) }
	var held []*zklock.Lease
	for i := range n {
		l, err := p.Acquire(ctx, res(i))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	base := watches()
	wGot := make(chan result, n)
	var wNodes []string
	queued := func(k int) func() bool {
		return func() bool {
			wNodes = wNodes[:0]
			for _, l := range w.Locks() {
				if l.Position >= 1 {
					wNodes = append(wNodes, l.Path)
				}
			}
			return len(wNodes) == k
		}
	}
	for i := range n {
		go func() {
			l, err := w.Acquire(ctx, res(i))
			if err != nil {
				t.Errorf("w's acquire of %s: %v", res(i), err)
			}
			wGot <- result{i, l}
		}()
		if !together {
			eventually(t, "w queued on "+res(i), queued(i+1))
		}
	}
	eventually(t, "w queued on every resource", queued(n))
	if together {
		// w's covers: a child watch on each queue (the first waiter's
		// may be the two watches instead).
		eventually(t, "w's covers", func() bool { return watches() >= base+n })
	} else {
		// w's watches are set: on p's node and on its own.
		eventually(t, "w's watches", func() bool { return watches() >= base+2*n })
	}
	cGot := make(chan result, n)
	for i := range n {
		go func() {
			l, err := c.Acquire(ctx, res(i))
			if err != nil {
				t.Errorf("c's acquire of %s: %v", res(i), err)
			}
			cGot <- result{i, l}
		}()
	}
	eventually(t, "c queued on every resource", func() bool { return len(c.Locks()) == n })

	px.RejectNew(true)
	px.DropAll()
	for _, node := range wNodes {
		if err := op.Conn().Delete(node, -1); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range held {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cHolds := make([]*zklock.Lease, n)
	for range n {
		select {
		case r := <-cGot:
			if r.l == nil {
				t.FailNow()
			}
			cHolds[r.i] = r.l
		case <-time.After(10 * time.Second):
			t.Fatal("c did not take every lock after w's nodes were deleted and p released")
		}
	}
	px.RejectNew(false)
	// w reconnects and hears of every deletion; it must queue again
	// behind c everywhere.
	timeout := time.After(1500 * time.Millisecond)
	var twice []string
	for done := false; !done; {
		select {
		case r := <-wGot:
			if r.l == nil {
				t.FailNow()
			}
			twice = append(twice, fmt.Sprintf("%s (w's lease Err %v)", res(r.i), r.l.Err()))
		case <-timeout:
			done = true
		}
	}
	if len(twice) > 0 {
		t.Fatalf("w held %d of %d resources while c held them: %s", len(twice), n, strings.Join(twice, ", "))
	}
	eventually(t, "w queued again on every resource", func() bool {
		k := 0
		for _, l := range w.Locks() {
			if l.Position >= 1 && !strings.Contains(strings.Join(wNodes, " "), l.Path) {
				k++
			}
		}
		return k == n
	})
	for _, l := range cHolds {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		r := <-wGot
		if r.l == nil {
			t.FailNow()
		}
		if err := r.l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
