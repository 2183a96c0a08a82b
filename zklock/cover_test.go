package zklock_test

import (
	"context"
	"errors"
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
// node ahead lists its queue with a child watch, which stands in for the
// watches on the node ahead and on its own node (zklock/cover.go): two
// requests and one watch per waiting acquire, where go-zookeeper's zk.Lock
// makes three requests, and one listing to take the lock, as zk.Lock's.

// coverRun is a server of its own with a client p holding resources
// r0..r(n-1) and a client w waiting for each behind p, covered.
type coverRun struct {
	t     *testing.T
	srv   *zktest.Server
	root  string
	ctx   context.Context
	p, w  *zklock.Client
	held  []*zklock.Lease      // p's leases
	got   <-chan *zklock.Lease // w's acquires' results
	nodes []string             // w's nodes
	mine  map[string]bool      // the same, as a set
}

// client connects another client to the run's server and root.
func (r *coverRun) client(opts ...zklock.Option) *zklock.Client {
	return newClientAt(r.t, r.srv.Addr(), r.root, opts...)
}

// covered starts n acquires at once on w, one per resource r0..r(n-1),
// each held by p, and waits until each is queued with its one watch (the
// child watch on its queue). The creates
// run together, so they are counted (see createCounted) and each finds one
// node ahead. p and w are made with opts.
func covered(t *testing.T, n int, opts ...zklock.Option) *coverRun {
	t.Helper()
	srv := countedServer(t)
	root := zktest.UniqueRoot(t)
	p := newClientAt(t, srv.Addr(), root, opts...)
	w := newClientAt(t, srv.Addr(), root, opts...)
	ctx := testCtx(t)
	held := holdAll(t, ctx, p, n)
	var got <-chan *zklock.Lease
	recv := packetsDuring(t, srv, func() { got = waitCovered(t, ctx, srv, w, n, errorIfFailed(t)) })
	var nodes []string
	mine := map[string]bool{}
	for _, l := range w.Locks() {
		nodes = append(nodes, l.Path)
		mine[l.Path] = true
	}
	// Per waiter: the counted create and the listing (with the child
	// watch); the first create may be alone in flight (create and listing
	// pipelined, then the watches on the node ahead and on its own node:
	// two more). Allow 6 for syncs proving the session and pings.
	if recv > 2*n+2+6 {
		t.Fatalf("%d waiters queued with %d requests, want at most 2 each (+8)", n, recv)
	}
	t.Logf("%d waiters queued with %d requests", n, recv)
	return &coverRun{t: t, srv: srv, root: root, ctx: ctx, p: p, w: w, held: held, got: got, nodes: nodes, mine: mine}
}

// holdAll has p hold resources r0..r(n-1).
func holdAll(t *testing.T, ctx context.Context, p *zklock.Client, n int) []*zklock.Lease {
	t.Helper()
	var held []*zklock.Lease
	for i := range n {
		l, err := p.Acquire(ctx, fmt.Sprintf("r%d", i))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	return held
}

// waitCovered starts n acquires at once on w, one per resource
// r0..r(n-1), each held by another client, and waits until each is queued
// with its cover: srv's watches grow by n, a child watch per queue (the
// first waiter may be alone in flight, and set its two watches instead).
// Each acquire's result is passed to done, then its lease (nil if it
// failed) to the returned channel.
func waitCovered(t *testing.T, ctx context.Context, srv *zktest.Server, w *zklock.Client, n int, done func(i int, err error)) <-chan *zklock.Lease {
	t.Helper()
	base := watchCount(t, srv)
	got := make(chan *zklock.Lease, n)
	for i := range n {
		go func() {
			l, err := w.Acquire(ctx, fmt.Sprintf("r%d", i))
			done(i, err)
			got <- l
		}()
	}
	eventually(t, "every waiter queued with its cover", func() bool {
		return len(w.Locks()) == n && watchCount(t, srv) >= base+n
	})
	return got
}

// errorIfFailed is waitCovered's done for acquires that must hold.
func errorIfFailed(t *testing.T) func(int, error) {
	return func(i int, err error) {
		if err != nil {
			t.Errorf("acquire r%d: %v", i, err)
		}
	}
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

// The holder releases: each covered waiter's cover fires, and it takes the
// lock with one listing.
func TestIntegration_CoveredWaitersTakeTheLockWithOneListing(t *testing.T) {
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
	// p's deletes, and a listing each from w (the first waiter, queued
	// alone in flight, watched the node ahead instead: none). Allow 4
	// pings.
	if recv > 2*n+4 {
		t.Fatalf("%d packets for %d hand-offs: the covered waiters made more than a listing each to take the lock", recv, n)
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
// lists its queue and watches the node ahead and its own node (three
// requests), and takes the lock with no more when the node ahead goes;
// the node behind waits.
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
	// c's watches on w's nodes; each cover spent, replaced by w's
	// watches on p's node and on its own (all but the first waiter's,
	// queued alone in flight with those two watches and no cover).
	eventually(t, "c queued, w's own nodes watched", func() bool {
		return len(c.Locks()) == n && watchCount(t, srv) >= base+2*n-1
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
// transaction: the cover's child watch fires, the waiter lists, finds its
// node gone, and queues again.
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

// Close ends covered waiters at once with ErrClosed, and they make no
// request for it.
func TestIntegration_CloseEndsCoveredWaiters(t *testing.T) {
	const n = 8
	srv := countedServer(t)
	root := zktest.UniqueRoot(t)
	p := newClientAt(t, srv.Addr(), root)
	ctx := testCtx(t)
	holdAll(t, ctx, p, n)
	w, err := zklock.Connect(ctx, []string{srv.Addr()}, zklock.WithRoot(root))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, n)
	waitCovered(t, ctx, srv, w, n, func(_ int, err error) { errs <- err })
	start := time.Now()
	recv := packetsDuring(t, srv, func() {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for range n {
			select {
			case err := <-errs:
				if !errors.Is(err, zklock.ErrClosed) {
					t.Fatalf("a covered waiter ended with %v, want ErrClosed", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Close did not end every covered waiter within 5s")
			}
		}
	})
	// The close, and p's pings.
	if recv > 1+2 {
		t.Fatalf("%d packets to the server during Close: the covered waiters made requests", recv)
	}
	t.Logf("%d covered waiters ended %v after Close, %d packets", n, time.Since(start).Round(time.Millisecond), recv)
}

// Covered waiters whose session expires queue again on the new session,
// with new nodes, and hold once the holder releases: a session's end fires
// every cover (dropCoversLocked), and the listing that follows finds the
// session gone.
func TestIntegration_CoveredWaitersRequeueAfterSessionExpiry(t *testing.T) {
	const n = 8
	srv := countedServer(t)
	root := zktest.UniqueRoot(t)
	px, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	p := newClientAt(t, srv.Addr(), root)
	w := newClientAt(t, px.Addr(), root, zklock.WithSessionTimeout(testSessionTimeout))
	op := newClientAt(t, srv.Addr(), root)
	ctx := testCtx(t)
	held := holdAll(t, ctx, p, n)
	got := waitCovered(t, ctx, srv, w, n, errorIfFailed(t))
	old := map[string]bool{}
	for _, l := range w.Locks() {
		old[l.Path] = true
	}
	sid := w.SessionID()
	px.Blackhole(true)
	eventually(t, "w's old nodes gone with its session", func() bool {
		for node := range old {
			if ok, _, err := op.Conn().Exists(node); err != nil || ok {
				return false
			}
		}
		return true
	})
	px.Blackhole(false)
	eventually(t, "w queued again on a new session", func() bool {
		ls := w.Locks()
		if w.SessionID() == sid || len(ls) != n {
			return false
		}
		for _, l := range ls {
			if old[l.Path] || l.Position < 1 {
				return false
			}
		}
		return true
	})
	for _, l := range held {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		l := <-got
		if l == nil {
			t.FailNow()
		}
		if old[l.Path()] {
			t.Fatalf("w holds %s, a node of its expired session", l.Path())
		}
		if ok, _, err := op.Conn().Exists(l.Path()); err != nil || !ok {
			t.Fatalf("w holds %s, which does not exist (%v)", l.Path(), err)
		}
		l.Release(ctx)
	}
}
