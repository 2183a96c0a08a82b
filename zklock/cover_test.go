package zklock_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A waiter whose create, among others in flight on its session, finds one
// node ahead lists its queue with a child watch, which stands in for a
// watch on its own node (zklock/cover.go): three requests per waiting
// acquire, as go-zookeeper's zk.Lock makes, with the zero-round-trip
// hand-off kept.

// coverRun is a server of its own with a client p holding resources
// r0..r(n-1) and a client w waiting for each behind p, covered.
type coverRun struct {
	t     *testing.T
	srv   *zktest.Server
	root  string
	ctx   context.Context
	p, w  *zklock.Client
	held  []*zklock.Lease    // p's leases
	got   chan *zklock.Lease // w's acquires' results
	nodes []string           // w's nodes
	mine  map[string]bool    // the same, as a set
}

// client connects another client to the run's server and root.
func (r *coverRun) client(opts ...zklock.Option) *zklock.Client {
	return newClientAt(r.t, r.srv.Addr(), r.root, opts...)
}

// covered starts n acquires at once on w, one per resource r0..r(n-1),
// each held by p, and waits until each is queued with its two watches
// (the one on p's node, and the child watch on its queue). The creates
// run together, so they are counted (see createCounted) and each finds one
// node ahead. p and w are made with opts.
func covered(t *testing.T, n int, opts ...zklock.Option) *coverRun {
	t.Helper()
	srv := countedServer(t)
	root := zktest.UniqueRoot(t)
	p := newClientAt(t, srv.Addr(), root, opts...)
	w := newClientAt(t, srv.Addr(), root, opts...)
	ctx := testCtx(t)
	var held []*zklock.Lease
	for i := range n {
		l, err := p.Acquire(ctx, fmt.Sprintf("r%d", i))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	base := watchCount(t, srv)
	got := make(chan *zklock.Lease, n)
	recv := packetsDuring(t, srv, func() {
		for i := range n {
			go func() {
				l, err := w.Acquire(ctx, fmt.Sprintf("r%d", i))
				if err != nil {
					t.Errorf("acquire r%d: %v", i, err)
				}
				got <- l
			}()
		}
		eventually(t, "every waiter queued with its watches", func() bool {
			return len(w.Locks()) == n && watchCount(t, srv) >= base+2*n
		})
	})
	var nodes []string
	mine := map[string]bool{}
	for _, l := range w.Locks() {
		nodes = append(nodes, l.Path)
		mine[l.Path] = true
	}
	// Per waiter: the counted create, the listing (with the child watch)
	// and the watch on the node ahead; the first create may be alone in
	// flight (create and listing pipelined, and a watch on its own node:
	// one more). Allow 6 for syncs proving the session and pings.
	if recv > 3*n+1+6 {
		t.Fatalf("%d waiters queued with %d requests, want at most 3 each (+7)", n, recv)
	}
	t.Logf("%d waiters queued with %d requests", n, recv)
	return &coverRun{t: t, srv: srv, root: root, ctx: ctx, p: p, w: w, held: held, got: got, nodes: nodes, mine: mine}
}

// takeAll receives w's n leases, checks each with check, and releases it.
func (r *coverRun) takeAll(n int, check func(l *zklock.Lease)) {
	t := r.t
	t.Helper()
	for range n {
		l := <-r.got
		if l == nil {
			t.FailNow()
		}
		check(l)
		l.Release(r.ctx)
	}
}

// watchCount returns the server's data and child watches (mntr).
func watchCount(t *testing.T, srv *zktest.Server) int {
	t.Helper()
	out, err := srv.FourLetter("mntr")
	if err != nil {
		t.Fatal(err)
	}
	_, v, _ := strings.Cut(out, "zk_watch_count\t")
	v, _, _ = strings.Cut(v, "\n")
	k, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		t.Fatalf("mntr's zk_watch_count: %v", err)
	}
	return k
}

func TestIntegration_CoveredWaitersHandOffWithNoRequest(t *testing.T) {
	const n = 20
	r := covered(t, n, zklock.WithSessionTimeout(40*time.Second), zklock.WithNodeWatchDelay(time.Hour))
	srv, ctx, held, got := r.srv, r.ctx, r.held, r.got
	var leases []*zklock.Lease
	recv := packetsDuring(t, srv, func() {
		for _, l := range held {
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for range n {
			leases = append(leases, <-got)
		}
	})
	// p's deletes, and nothing from w. Allow 4 pings.
	if recv > n+4 {
		t.Fatalf("%d packets for %d hand-offs: the covered waiters made requests to take the lock", recv, n)
	}
	for _, l := range leases {
		if l == nil {
			t.FailNow()
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d hand-offs, %d packets to the server", n, recv)
}

// A node queued behind a covered waiter fires its cover: the waiter then
// watches its own node (one request) and still takes the lock with no
// more when the node ahead goes; the node behind waits.
func TestIntegration_CoverFiredByANodeBehind(t *testing.T) {
	const n = 8
	opts := []zklock.Option{zklock.WithSessionTimeout(40 * time.Second), zklock.WithNodeWatchDelay(time.Hour)}
	r := covered(t, n, opts...)
	srv, ctx, held, got := r.srv, r.ctx, r.held, r.got
	c := r.client(opts...)
	base := watchCount(t, srv)
	cGot := make(chan *zklock.Lease, n)
	for i := range n {
		go func() {
			l, err := c.Acquire(ctx, fmt.Sprintf("r%d", i))
			if err != nil {
				t.Errorf("c's acquire r%d: %v", i, err)
			}
			cGot <- l
		}()
	}
	// c's watches on w's nodes; each cover spent, replaced by a watch on
	// w's own node.
	eventually(t, "c queued, w's own nodes watched", func() bool {
		return len(c.Locks()) == n && watchCount(t, srv) >= base+n
	})
	var leases []*zklock.Lease
	recv := packetsDuring(t, srv, func() {
		for _, l := range held {
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for range n {
			leases = append(leases, <-got)
		}
	})
	if recv > n+4 {
		t.Fatalf("%d packets for %d hand-offs after the covers fired: w made requests to take the lock", recv, n)
	}
	select {
	case l := <-cGot:
		t.Fatalf("c holds %v while w does", l)
	case <-time.After(200 * time.Millisecond):
	}
	for _, l := range leases {
		if l == nil {
			t.FailNow()
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		if l := <-cGot; l != nil {
			l.Release(ctx)
		}
	}
}

// An operator deletes a covered waiter's node: the cover fires, and the
// waiter queues again at once with a new node, though the node ahead still
// holds.
func TestIntegration_CoveredWaiterRequeuesWhenItsNodeIsDeleted(t *testing.T) {
	const n = 8
	r := covered(t, n)
	ctx, w, held, nodes := r.ctx, r.w, r.held, r.nodes
	op := r.client()
	start := time.Now()
	for _, node := range nodes {
		if err := op.Conn().Delete(node, -1); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "w queued again everywhere", func() bool {
		ls := w.Locks()
		if len(ls) != n {
			return false
		}
		for _, l := range ls {
			if l.Position < 1 || r.mine[l.Path] {
				return false
			}
		}
		return true
	})
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("w took %v to queue again after its nodes were deleted", d)
	}
	t.Logf("queued again %v after the deletes", time.Since(start).Round(time.Millisecond))
	for _, l := range held {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	r.takeAll(n, func(l *zklock.Lease) {
		if r.mine[l.Path()] {
			t.Fatalf("w holds its deleted node %s", l.Path())
		}
	})
}

// An operator deletes a covered waiter's node and the node ahead in one
// transaction, ours first: the cover's child watch fires before the node
// ahead's deletion arrives, so the hand-off is not taken on trust; the
// waiter lists, finds its node gone, and queues again.
func TestIntegration_CoveredWaiterNodeAndPredDeletedTogether(t *testing.T) {
	const n = 8
	r := covered(t, n)
	op := r.client()
	for i, l := range r.held {
		var wNode string
		for _, node := range r.nodes {
			if strings.Contains(node, fmt.Sprintf("/r%d/", i)) {
				wNode = node
			}
		}
		if _, err := op.Conn().Multi(&zk.DeleteRequest{Path: wNode, Version: -1}, &zk.DeleteRequest{Path: l.Path(), Version: -1}); err != nil {
			t.Fatal(err)
		}
	}
	r.takeAll(n, func(l *zklock.Lease) {
		if r.mine[l.Path()] {
			t.Fatalf("w holds %s, deleted with the node ahead of it", l.Path())
		}
		if ok, _, err := op.Conn().Exists(l.Path()); err != nil || !ok {
			t.Fatalf("w holds %s, which does not exist (%v)", l.Path(), err)
		}
	})
}
