package zklock_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestIntegration_ConnectUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err = zklock.Connect(ctx, []string{addr})
	if !errors.Is(err, zklock.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrUnavailable and DeadlineExceeded", err)
	}
	if el := time.Since(start); el > time.Second+tryGrace {
		t.Fatalf("Connect returned %v after a 1s deadline", el)
	}
	// A server that accepts and never answers: go-zookeeper's Close waits
	// a second after the failed handshake; Connect must not.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	sctx, scancel := context.WithTimeout(context.Background(), time.Second)
	defer scancel()
	start = time.Now()
	if _, err := zklock.Connect(sctx, []string{silent.Addr().String()}); !errors.Is(err, zklock.ErrUnavailable) {
		t.Fatalf("Connect to a silent server = %v, want ErrUnavailable", err)
	}
	if el := time.Since(start); el > time.Second+tryGrace {
		t.Fatalf("Connect to a silent server returned %v after a 1s deadline", el)
	}
	if _, err := zklock.Connect(ctx, nil); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("no servers: %v", err)
	}
	if _, err := zklock.Connect(ctx, []string{"no-port:"}); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("bad server: %v", err)
	}
}

// Each hand-off wakes exactly one waiter, and the waiter that had only its
// predecessor ahead takes the lock with no further round trip: 16 waiters
// on one session, 16 hand-offs, counted by the server (packets received)
// and by the observer (no waiter but the next one hears anything).
func TestIntegration_HerdFreeHandoff(t *testing.T) {
	srv := countedServer(t)
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	rec := &recorder{}
	// WithNodeWatchDelay(0): the holder watches its node at once, so the
	// watch count below does not depend on timing.
	holderC := newClientAt(t, srv.Addr(), root, zklock.WithSessionTimeout(40*time.Second), zklock.WithNodeWatchDelay(0))
	holder, err := holderC.Acquire(ctx, "herd")
	if err != nil {
		t.Fatal(err)
	}
	// One session per waiter, as with waiters in 16 processes (waiters of
	// one client hand the lock on among themselves with no watch at all:
	// TestIntegration_LocalHandoff).
	const n = 16
	waiters := make([]*zklock.Client, n)
	for i := range waiters {
		waiters[i] = newClientAt(t, srv.Addr(), root, zklock.WithObserver(rec), zklock.WithSessionTimeout(40*time.Second))
	}
	var order []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := waiters[i].Acquire(ctx, "herd")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			l.Release(ctx)
		}()
	}
	eventually(t, "16 waiters enqueued", func() bool { return rec.count(zklock.EventEnqueued) == n })
	// Each waiter watches the one node ahead of it, never the queue (no
	// child watch) nor any other node; only the first waiter, whose
	// predecessor's deletion hands it the lock with no round trip, also
	// watches its own node. So 16 paths (the holder's node and waiters
	// 1..15's) carry 18 watches: the holder's node is watched by its own
	// session and the first waiter's, the first waiter's by itself and the
	// second waiter.
	settledWatches(t, srv, n+2, n)
	wchp, err := srv.FourLetter("wchp")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(wchp, "\n") {
		if strings.HasPrefix(line, "/") && !strings.Contains(line, "-lock-") {
			t.Fatalf("a watch on %s, which is not a lock node:\n%s", line, wchp)
		}
	}
	positionsBefore := rec.count(zklock.EventPosition)
	recv := packetsDuring(t, srv, func() {
		holder.Release(ctx)
		wg.Wait()
	})
	// Per hand-off: the releaser's delete, and at most one re-list by the
	// one waiter woken (its snapshot, taken at enqueue, still listed the
	// nodes ahead of its predecessor). A herd (every waiter re-listing on
	// every change) would cost about n*n/2 = 128 more. Allow 4 pings.
	if recv < n+1 || recv > 2*n+1+4 {
		t.Fatalf("server received %d packets for %d hand-offs, want %d..%d", recv, n, n+1, 2*n+1+4)
	}
	if got := rec.count(zklock.EventPosition) - positionsBefore; got != n {
		t.Fatalf("%d position events during %d hand-offs, want exactly one per hand-off", got, n)
	}
	t.Logf("16 hand-offs: %d packets to the server, %d position events", recv, n)
}

// When the predecessor was the only node ahead in the waiter's snapshot, its
// deletion hands the lock over with no request at all from the waiter: the
// server sees only the deletes.
func TestIntegration_ZeroRoundTripHandoff(t *testing.T) {
	srv := countedServer(t)
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	a := newClientAt(t, srv.Addr(), root, zklock.WithSessionTimeout(40*time.Second), zklock.WithNodeWatchDelay(0))
	b := newClientAt(t, srv.Addr(), root, zklock.WithSessionTimeout(40*time.Second), zklock.WithNodeWatchDelay(0))
	const rounds = 20
	la, err := a.Acquire(ctx, "pp")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i := 0; i < rounds; i++ {
		got := make(chan *zklock.Lease, 1)
		go func() {
			l, err := b.Acquire(ctx, "pp")
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
		eventually(t, "b queued", func() bool {
			ls := b.Locks()
			return len(ls) == 1 && ls[0].Position >= 1
		})
		// b's watches (on a's node and its own) reach the server before
		// the count starts: with a's on its own node, three in all.
		eventually(t, "b's watches set", func() bool {
			wchs, err := srv.FourLetter("wchs")
			return err == nil && strings.Contains(wchs, "Total watches:3\n")
		})
		var lb *zklock.Lease
		total += packetsDuring(t, srv, func() {
			la.Release(ctx)
			lb = <-got
		})
		if lb == nil {
			t.FailNow()
		}
		// b becomes the holder; a takes b's place for the next round
		la, a, b = lb, b, a
	}
	la.Release(ctx)
	// one delete per hand-off; allow 4 pings over the whole run
	if total > rounds+4 {
		t.Fatalf("%d packets for %d hand-offs: the waiter made requests to take the lock", total, rounds)
	}
	t.Logf("%d hand-offs, %d packets to the server", rounds, total)
}

// The listing that follows our create is sent without waiting for the
// create's reply (the server answers a session in order, so it still sees
// our node): an acquire costs the round trips of a create and a delete,
// like the raw pair, not three. Checked on the wire, with every byte
// delayed so that a reply cannot arrive before the next request is sent.
func TestIntegration_CreateAndListPipelined(t *testing.T) {
	p := newProxy(t)
	rec := &wireLog{}
	ctx := testCtx(t)
	// A long node watch delay: the holder's watch stays off the wire.
	c := newClientAt(t, p.Addr(), zktest.UniqueRoot(t), zklock.WithSessionTimeout(40*time.Second),
		zklock.WithDialer(rec.dial), zklock.WithNodeWatchDelay(time.Minute))
	// The queue znode exists first, so the acquire makes no other create.
	l, err := c.Acquire(ctx, "pipe")
	if err != nil {
		t.Fatal(err)
	}
	l.Release(ctx)
	p.SetDelay(300 * time.Millisecond)
	rec.start()
	l, err = c.Acquire(ctx, "pipe")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// create (1), list (12), both replies, delete (2), its reply
	ops := rec.stop()
	if want := []string{"w1", "w12", "r", "w2", "r"}; !slices.Equal(ops, want) {
		t.Fatalf("wire: %v, want %v: the list written right after the create, before any reply", ops, want)
	}
	t.Logf("wire: %v", ops)
}

// wireLog records, while on, each frame written to ZooKeeper ("w" and its
// opcode) and each read from it ("r"), in order. Pings are left out.
type wireLog struct {
	mu  sync.Mutex
	on  bool
	ops []string
}

func (w *wireLog) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &wireLogConn{Conn: c, w: w}, nil
}

func (w *wireLog) start() { w.mu.Lock(); w.on, w.ops = true, nil; w.mu.Unlock() }

func (w *wireLog) stop() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.on = false
	return w.ops
}

func (w *wireLog) add(op string) {
	w.mu.Lock()
	if w.on && (len(w.ops) == 0 || op != "r" || w.ops[len(w.ops)-1] != "r") {
		w.ops = append(w.ops, op)
	}
	w.mu.Unlock()
}

type wireLogConn struct {
	net.Conn
	w *wireLog
}

// Write sees one whole request per call (go-zookeeper writes each frame at
// once): length(4) xid(4) opcode(4).
func (c *wireLogConn) Write(b []byte) (int, error) {
	if len(b) >= 12 {
		if op := int32(binary.BigEndian.Uint32(b[8:12])); op != 11 { // 11: ping
			c.w.add("w" + strconv.Itoa(int(op)))
		}
	}
	return c.Conn.Write(b)
}

func (c *wireLogConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.w.add("r")
	}
	return n, err
}

// settledWatches waits until the server holds watches watches on paths
// paths, and checks that the count stays there: a waiter reports its place
// before its watch reaches the server.
func settledWatches(t *testing.T, srv *zktest.Server, watches, paths int) {
	t.Helper()
	var wchs string
	set := func() bool {
		var err error
		if wchs, err = srv.FourLetter("wchs"); err != nil {
			t.Fatal(err)
		}
		return strings.Contains(wchs, "Total watches:"+strconv.Itoa(watches)+"\n")
	}
	eventually(t, "the waiters' watches", set)
	time.Sleep(100 * time.Millisecond)
	if !set() || !strings.Contains(wchs, "watching "+strconv.Itoa(paths)+" paths") {
		t.Fatalf("watches: %s, want %d paths and %d watches", wchs, paths, watches)
	}
}

// packetsDuring returns how many packets the server received while f ran.
func packetsDuring(t *testing.T, srv *zktest.Server, f func()) int {
	t.Helper()
	if _, err := srv.FourLetter("srst"); err != nil {
		t.Fatal(err)
	}
	f()
	mntr, err := srv.FourLetter("mntr")
	if err != nil {
		t.Fatal(err)
	}
	return mntrValue(t, mntr, "zk_packets_received") - 1 // mntr counts itself
}

func mntrValue(t *testing.T, mntr, key string) int {
	for _, line := range strings.Split(mntr, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == key {
			v, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no %s in mntr output:\n%s", key, mntr)
	return 0
}

func TestIntegration_ThousandWaitersOneSession(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	holders, waiters := newClient(t, root), newClient(t, root)
	const n = 1000
	leases := make([]*zklock.Lease, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := holders.Acquire(ctx, fmt.Sprintf("res/%d", i))
			if err != nil {
				t.Error(err)
			}
			leases[i] = l
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var acquired atomic.Int64
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := waiters.Acquire(ctx, fmt.Sprintf("res/%d", i))
			if err != nil {
				t.Error(err)
				return
			}
			acquired.Add(1)
			l.Release(ctx)
		}()
	}
	eventually(t, "1000 waiting", func() bool { return len(waiters.Locks()) == n })
	if acquired.Load() != 0 {
		t.Fatal("a waiter acquired a held lock")
	}
	for _, l := range leases {
		l.Release(ctx)
	}
	wg.Wait()
	if acquired.Load() != n {
		t.Fatalf("%d of %d acquired", acquired.Load(), n)
	}
	if nodes := lockNodes(t, holders.Conn(), root); len(nodes) != 0 {
		t.Fatalf("%d nodes left", len(nodes))
	}
}

// Connections dropped at random while acquiring: every acquire still ends
// with the lock held exactly once, never two holders, and no node is left.
func TestIntegration_ConnectionDropsMidOperation(t *testing.T) {
	root := zktest.UniqueRoot(t)
	p := newProxy(t)
	ctx := testCtx(t)
	rec := &recorder{}
	flaky := newClientAt(t, p.Addr(), root, zklock.WithSessionTimeout(8*time.Second), zklock.WithObserver(rec))
	steady := newClient(t, root)
	stop := make(chan struct{})
	var drops atomic.Int64
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(20+(i*37)%80) * time.Millisecond):
				p.DropAll()
				drops.Add(1)
			}
		}
	}()
	var o overlap
	var wg sync.WaitGroup
	for w, c := range []*zklock.Client{flaky, flaky, steady} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				l, err := c.Acquire(ctx, "r")
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				o.enter()
				time.Sleep(time.Millisecond)
				o.leave()
				// The release of a flaky client may outlive a short context;
				// it completes in the background.
				rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				if err := l.Release(rctx); err != nil && !errors.Is(err, zklock.ErrLeaseLost) {
					t.Errorf("release: %v", err)
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	close(stop)
	if o.violations != 0 {
		t.Fatalf("%d overlapping holders", o.violations)
	}
	defer func() {
		if t.Failed() {
			var owners []string
			for _, n := range lockNodes(t, steady.Conn(), root) {
				if _, st, err := steady.Conn().Get(n); err == nil {
					owners = append(owners, fmt.Sprintf("%s owner %#x", n, st.EphemeralOwner))
				}
			}
			t.Logf("flaky session %#x (state %v, local locks %+v), steady %#x; nodes left: %q",
				flaky.SessionID(), flaky.Conn().State(), flaky.Locks(), steady.SessionID(), owners)
		}
	}()
	eventually(t, "no nodes left", func() bool { return len(lockNodes(t, steady.Conn(), root)) == 0 })
	if rec.count(zklock.EventSuspended) == 0 {
		t.Fatal("the connection was never lost")
	}
	t.Logf("%d connection drops (%d seen by the client), %d critical sections, 0 overlaps",
		drops.Load(), rec.count(zklock.EventSuspended), o.entries)
}

// A holder cut off from ZooKeeper is told its lease is lost before the
// server expires its session and hands the lock to the next waiter.
func TestIntegration_LossBeforeTakeover(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	for round := 0; round < 2; round++ {
		p, err := zktest.NewProxy(zktest.Shared().Addr())
		if err != nil {
			t.Fatal(err)
		}
		holderC := newClientAt(t, p.Addr(), root)
		other := newClient(t, root)
		l, err := holderC.Acquire(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		oldSession := holderC.SessionID()
		var lostAt time.Time
		lostCh := make(chan struct{})
		go func() { <-l.Done(); lostAt = time.Now(); close(lostCh) }()
		got := make(chan time.Time, 1)
		go func() {
			ol, err := other.Acquire(ctx, "r")
			if err != nil {
				t.Error(err)
				got <- time.Time{}
				return
			}
			got <- time.Now()
			ol.Release(ctx)
		}()
		eventually(t, "waiter queued", func() bool { return len(other.Locks()) == 1 })
		p.Blackhole(true)
		acquiredAt := <-got
		<-lostCh
		if !errors.Is(l.Err(), zklock.ErrLeaseLost) {
			t.Fatalf("Err = %v", l.Err())
		}
		margin := acquiredAt.Sub(lostAt)
		if margin <= 0 {
			t.Fatalf("round %d: holder told of loss %v AFTER another client acquired", round, -margin)
		}
		t.Logf("round %d: loss signalled %v before the takeover", round, margin.Round(time.Millisecond))
		p.Blackhole(false)
		// The old session is expired: the client moves to a new one and
		// keeps nothing of the old.
		eventually(t, "new session", func() bool { s := holderC.SessionID(); return s != 0 && s != oldSession })
		if ls := holderC.Locks(); len(ls) != 0 {
			t.Fatalf("stale locks: %+v", ls)
		}
		holderC.Close()
		p.Close()
	}
}

// A waiter whose session expires enqueues again on the new session and
// still acquires within its original deadline.
func TestIntegration_WaiterSurvivesSessionExpiry(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	p := newProxy(t)
	holderC := newClient(t, root)
	waiterC := newClientAt(t, p.Addr(), root)
	h, err := holderC.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	old := waiterC.SessionID()
	wctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	got := make(chan *zklock.Lease, 1)
	go func() {
		l, err := waiterC.Acquire(wctx, "r")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	eventually(t, "waiter queued", func() bool { return len(waiterC.Locks()) == 1 })
	p.Blackhole(true)
	// Wait until the server has expired the waiter's session: its node goes.
	eventually(t, "waiter's node expired", func() bool { return len(lockNodes(t, holderC.Conn(), root)) == 1 })
	p.Blackhole(false)
	eventually(t, "re-enqueued on a new session", func() bool {
		ls := waiterC.Locks()
		return len(ls) == 1 && ls[0].SessionID != old
	})
	h.Release(ctx)
	l := <-got
	if l == nil {
		t.FailNow()
	}
	if l.SessionID() == old {
		t.Fatal("lease on the expired session")
	}
	l.Release(ctx)
}

// A server restart shorter than the session timeout keeps held leases and
// waiters; the lock still works afterwards.
func TestIntegration_ServerRestart(t *testing.T) {
	srv, err := zktest.StartServer(zktest.WithTickTime(500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var inspectErr error
	defer func() {
		if t.Failed() {
			t.Logf("last Inspect error: %v; server %s (running: %v), last lines of its log:\n%s",
				inspectErr, srv.Addr(), srv.Running(), srv.LogTail(40))
		}
	}()
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	opts := []zklock.Option{zklock.WithSessionTimeout(10 * time.Second)}
	a := newClientAt(t, srv.Addr(), root, opts...)
	b := newClientAt(t, srv.Addr(), root, opts...)
	l, err := a.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *zklock.Lease, 1)
	go func() {
		w, err := b.Acquire(ctx, "r")
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	eventually(t, "waiter queued", func() bool { return len(b.Locks()) == 1 })
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnected", func() bool {
		_, inspectErr = a.Inspect(ctx, "r")
		return inspectErr == nil
	})
	if err := l.Err(); err != nil {
		t.Fatalf("lease lost across a short restart: %v", err)
	}
	if _, err := a.TryAcquire(ctx, "other"); err != nil {
		t.Fatalf("client unusable after restart: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	w := <-got
	if w == nil {
		t.FailNow()
	}
	w.Release(ctx)
}

// An acquire whose context ends while ZooKeeper is cut off says so:
// ErrUnavailable as well as the context's error.
func TestIntegration_AcquireDuringPartitionIsUnavailable(t *testing.T) {
	root := zktest.UniqueRoot(t)
	p := newProxy(t)
	c := newClientAt(t, p.Addr(), root)
	p.Blackhole(true)
	defer p.Blackhole(false)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := c.Acquire(ctx, "r")
	if !errors.Is(err, zklock.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrUnavailable and DeadlineExceeded", err)
	}
}

// An acquire whose context ends while ZooKeeper is out of reach returns at
// its deadline, not after a reconnect: its node is deleted in the
// background instead (found by the chaos campaign; it returned up to a
// session timeout late).
func TestIntegration_AcquireReturnsAtDeadlineWhileDisconnected(t *testing.T) {
	p, holder, root, deadline, done := waiterWithDeadline(t, 2*time.Second)
	p.RejectNew(true)
	p.DropAll()
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if late := time.Since(deadline); late > time.Second {
		t.Fatalf("returned %v after its deadline", late)
	}
	// Once reachable again, the waiter's node goes: nothing is left.
	p.RejectNew(false)
	eventually(t, "waiter's node deleted", func() bool { return len(lockNodes(t, holder.Conn(), root)) == 1 })
}

// A waiter whose deadline passes just as its connection dies returns once
// the client sees the connection lost, not after the whole moment it
// allows itself to delete its node on the spot (found by the long chaos
// campaign: acquires ending as the leader was killed returned 1 s late).
// The link goes silent before the deadline and is cut 100 ms after it.
func TestIntegration_DeadlineAsConnectionDies(t *testing.T) {
	p, holder, root, deadline, done := waiterWithDeadline(t, 1500*time.Millisecond)
	time.Sleep(time.Until(deadline.Add(-100 * time.Millisecond)))
	p.Blackhole(true)
	time.Sleep(time.Until(deadline.Add(100 * time.Millisecond)))
	p.RejectNew(true)
	p.DropAll()
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	late := time.Since(deadline)
	if late > 600*time.Millisecond {
		t.Fatalf("returned %v after its deadline; the connection was cut 100 ms after it", late)
	}
	t.Logf("returned %v after its deadline", late)
	p.Blackhole(false)
	p.RejectNew(false)
	eventually(t, "waiter's node deleted", func() bool { return len(lockNodes(t, holder.Conn(), root)) == 1 })
}

// waiterWithDeadline queues a waiter behind a lock held by another client
// (holder, under root) and returns once it is enqueued. The waiter reaches
// the server through p, with an 8 s session, so its on-the-spot delete may
// take min(8s/3, 1s) = 1 s; its acquire's deadline is wait after it
// connected, and done receives the acquire's error.
func waiterWithDeadline(t *testing.T, wait time.Duration) (p *zktest.Proxy, holder *zklock.Client, root string, deadline time.Time, done <-chan error) {
	t.Helper()
	p = newProxy(t)
	root, ctx := zktest.UniqueRoot(t), testCtx(t)
	holder = newClient(t, root)
	l, err := holder.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	waiter := newClientAt(t, p.Addr(), root, zklock.WithSessionTimeout(8*time.Second))
	deadline = time.Now().Add(wait)
	actx, cancel := context.WithDeadline(ctx, deadline)
	t.Cleanup(cancel)
	errc := make(chan error, 1)
	go func() { _, err := waiter.Acquire(actx, "r"); errc <- err }()
	eventually(t, "waiter enqueued", func() bool { return len(waiter.Locks()) == 1 })
	return p, holder, root, deadline, errc
}

// The reply to our create is lost, then the reply to the listing that
// looks for the node by its UUID: the waiter must list again and adopt
// its node, not create a second one. A second create would queue it twice
// and leave the first node, owned by a live session and unknown to its
// client, ahead of every later waiter until the session ends.
func TestIntegration_CreateAndSearchRepliesLost(t *testing.T) {
	for _, held := range []bool{false, true} {
		t.Run(fmt.Sprintf("held=%v", held), func(t *testing.T) {
			root := zktest.UniqueRoot(t)
			p := newProxy(t)
			ctx := testCtx(t)
			flaky := newClientAt(t, p.Addr(), root)
			steady := newClient(t, root)
			// The queue exists before the losses are armed, so the lost
			// create is the lock node's, not a parent's.
			holder, err := steady.Acquire(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			if !held {
				if err := holder.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			created, searched := p.LoseReply(zktest.OpCreate), p.LoseReply(zktest.OpGetChildren2)

			type result struct {
				l   *zklock.Lease
				err error
			}
			done := make(chan result, 1)
			go func() {
				l, err := flaky.Acquire(ctx, "r")
				done <- result{l, err}
			}()
			for _, lost := range []<-chan struct{}{created, searched} {
				select {
				case <-lost:
				case r := <-done:
					t.Fatalf("Acquire returned (%v) before both replies were lost", r.err)
				case <-ctx.Done():
					t.Fatal("the replies were never lost")
				}
			}
			if held {
				eventually(t, "the waiter queued", func() bool {
					ls := flaky.Locks()
					return len(ls) == 1 && ls[0].Position >= 1
				})
				// Give a wrong second create time to land.
				time.Sleep(200 * time.Millisecond)
				if n := lockNodes(t, steady.Conn(), root); len(n) != 2 {
					t.Fatalf("queue while waiting = %q; want the holder's node and one of the waiter's", n)
				}
				if err := holder.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("Acquire hangs after the losses; nodes: %q, local: %+v", lockNodes(t, steady.Conn(), root), flaky.Locks())
			}
			if r.err != nil {
				t.Fatalf("Acquire after the losses: %v", r.err)
			}
			nodes := lockNodes(t, steady.Conn(), root)
			if len(nodes) != 1 {
				t.Fatalf("queue while holding = %q; want one node", nodes)
			}
			if _, st, err := steady.Conn().Get(nodes[0]); err != nil || st.EphemeralOwner != flaky.SessionID() {
				t.Fatalf("the node left is not the holder's: owner %#x, %v; holder session %#x", st.EphemeralOwner, err, flaky.SessionID())
			}
			if ls := flaky.Locks(); len(ls) != 1 || !ls[0].Held || ls[0].Path != nodes[0] {
				t.Fatalf("local record %+v; want the held node %s", ls, nodes[0])
			}
			if _, err := steady.TryAcquire(ctx, "r"); !errors.Is(err, zklock.ErrLocked) {
				t.Fatalf("TryAcquire by another client = %v; want ErrLocked", err)
			}
			if err := r.l.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if n := lockNodes(t, steady.Conn(), root); len(n) != 0 {
				t.Fatalf("nodes left after release: %q", n)
			}
		})
	}
}

// Any request of a lock cycle may lose its reply to a connection drop.
// For each kind of request, the first reply of that kind in one cycle is
// lost, for Acquire and TryAcquire, with the lock free and with it held
// by another client. The cycle must still end as it would have without
// the fault, with one node per holder, and leave no node behind. (Exists
// is sent only to prove a silent session alive, which TestIntegration_
// LossBeforeTakeover covers.) The counted create (a multi) is sent when
// other creates are in flight on the session (busy).
func TestIntegration_LostReplies(t *testing.T) {
	always := func(try, held bool) bool { return true }
	ops := []struct {
		name string
		op   zktest.Op
		sent func(try, held bool) bool // the cycle must send this request
		busy bool
	}{
		{"create", zktest.OpCreate, always, false},
		{"list", zktest.OpGetChildren2, always, false},
		// the watch on the predecessor; other cycles may read their own node
		{"getData", zktest.OpGetData, func(try, held bool) bool { return held && !try }, false},
		{"delete", zktest.OpDelete, always, false},
		{"counted-create", zktest.OpMulti, always, true},
		// a counted create that finds the lock held lists the queue
		{"list-after-count", zktest.OpGetChildren2, func(try, held bool) bool { return held }, true},
	}
	for _, o := range ops {
		for _, try := range []bool{false, true} {
			for _, held := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/try=%v/held=%v", o.name, try, held), func(t *testing.T) {
					t.Parallel()
					fired := lostReplyCycle(t, o.op, try, held, o.busy)
					if !fired && o.sent(try, held) {
						t.Fatalf("no %s reply was lost: the cycle sent no such request", o.name)
					}
					t.Logf("reply lost: %v", fired)
				})
			}
		}
	}
}

// lostReplyCycle runs one cycle of TestIntegration_LostReplies and reports
// whether the reply was lost (the cycle sent a request of that kind).
func lostReplyCycle(t *testing.T, op zktest.Op, try, held, busy bool) bool {
	root := zktest.UniqueRoot(t)
	p := newProxy(t)
	ctx := testCtx(t)
	flaky := newClientAt(t, p.Addr(), root)
	steady := newClient(t, root)
	if busy {
		defer zklock.BusyCreates(flaky)()
	}
	// The queue exists before the loss is armed.
	holder, err := steady.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if !held {
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	lost := p.LoseReply(op)
	var lease *zklock.Lease
	switch {
	case try:
		start := time.Now()
		lease, err = flaky.TryAcquire(ctx, "r")
		if took := time.Since(start); took > tryBound+tryGrace {
			t.Fatalf("TryAcquire answered after %v; want within %v", took, tryBound)
		}
		// A try does not wait out a reconnection past its bound (one
		// server: go-zookeeper waits a second before it reconnects):
		// after a lost reply it may answer ErrUnavailable, leaving no
		// node behind all the same.
		unavailable := errors.Is(err, zklock.ErrUnavailable)
		if unavailable {
			select {
			case <-lost:
			default:
				t.Fatalf("TryAcquire = %v with no reply lost", err)
			}
			t.Logf("the try answered %v", err)
		}
		switch {
		case held && !unavailable && !errors.Is(err, zklock.ErrLocked):
			t.Fatalf("TryAcquire of a held lock = %v; want ErrLocked", err)
		case !held && !unavailable && err != nil:
			t.Fatalf("TryAcquire of a free lock: %v", err)
		}
		if held {
			eventually(t, "the try's node deleted", func() bool { return len(lockNodes(t, steady.Conn(), root)) == 1 })
			if err := holder.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	default:
		done := make(chan error, 1)
		go func() {
			var err error
			lease, err = flaky.Acquire(ctx, "r")
			done <- err
		}()
		if held {
			eventually(t, "the waiter queued", func() bool {
				ls := flaky.Locks()
				return len(ls) == 1 && ls[0].Position >= 1
			})
			time.Sleep(100 * time.Millisecond)
			if err := holder.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("Acquire: %v", err)
		}
	}
	if lease != nil {
		nodes := lockNodes(t, steady.Conn(), root)
		if len(nodes) != 1 || nodes[0] != lease.Path() {
			t.Fatalf("queue while holding = %q; want only the lease's node %s", nodes, lease.Path())
		}
		if _, err := steady.TryAcquire(ctx, "r"); !errors.Is(err, zklock.ErrLocked) {
			t.Fatalf("TryAcquire by another client while held = %v; want ErrLocked", err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
	}
	eventually(t, "no nodes left", func() bool { return len(lockNodes(t, steady.Conn(), root)) == 0 })
	if ls := flaky.Locks(); len(ls) != 0 {
		t.Fatalf("local record after the cycle: %+v", ls)
	}
	select {
	case <-lost:
		return true
	default:
		return false
	}
}

// A create that runs on a new session after the waiter's session expired
// makes a node of the new, live session. The waiter must treat it as
// such: hold it on that session (so loss detection, Release and Locks see
// the right session) or delete it, never forget it as gone with the old
// one. Here the queue is made while the connection breaks: the reply to
// the queue's create is lost, the client cannot reconnect until its
// session has expired, and the lock node's create then runs on the new
// session. In the second case the caller gives up while that create is
// in flight.
func TestIntegration_CreateRunsOnNewSession(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancelled=%v", cancelled), func(t *testing.T) {
			root := zktest.UniqueRoot(t)
			p := newProxy(t)
			ctx := testCtx(t)
			flaky := newClientAt(t, p.Addr(), root)
			steady := newClient(t, root)
			old := flaky.SessionID()
			// An ephemeral node of the old session shows when the server
			// expires it.
			marker := root + "-session-marker"
			if _, err := flaky.Conn().Create(root[:strings.LastIndexByte(root, '/')], nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				t.Fatal(err)
			}
			if _, err := flaky.Conn().Create(marker, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			// The root exists, so that the queue's create makes the queue
			// (a client creates a missing root only after that create
			// fails for want of it).
			if _, err := flaky.Conn().Create(root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			p.RejectNew(true) // the current connection works until the loss closes it
			lost := p.LoseReply(zktest.OpCreateContainer)
			type result struct {
				l   *zklock.Lease
				err error
			}
			actx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan result, 1)
			go func() {
				l, err := flaky.Acquire(actx, "r")
				done <- result{l, err}
			}()
			select {
			case <-lost:
			case r := <-done:
				t.Fatalf("Acquire returned (%v) before the queue's create lost its reply", r.err)
			case <-ctx.Done():
				t.Fatal("the queue's create never lost its reply")
			}
			eventually(t, "the old session expired", func() bool {
				ok, _, err := steady.Conn().Exists(marker)
				return err == nil && !ok
			})
			if cancelled {
				// Slow enough that the create is still in flight when
				// the caller gives up; well within the session's pings.
				p.SetDelay(800 * time.Millisecond)
			}
			p.RejectNew(false)
			if cancelled {
				eventually(t, "the new session", func() bool { return flaky.SessionID() != old })
				time.Sleep(300 * time.Millisecond)
				cancel()
			}
			var r result
			select {
			case r = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("Acquire hangs; nodes: %q, local: %+v", lockNodes(t, steady.Conn(), root), flaky.Locks())
			}
			cur := flaky.SessionID()
			if cur == old {
				t.Fatal("the client kept its old session; the test did not expire it")
			}
			if cancelled {
				if !errors.Is(r.err, context.Canceled) {
					t.Fatalf("Acquire = %v; want context.Canceled", r.err)
				}
				// The create, sent before the cancel, lands; then its node
				// must go.
				eventually(t, "the abandoned create landed", func() bool { return len(lockNodes(t, steady.Conn(), root)) == 1 })
				eventually(t, "the abandoned node deleted", func() bool { return len(lockNodes(t, steady.Conn(), root)) == 0 })
				if ls := flaky.Locks(); len(ls) != 0 {
					t.Fatalf("local record after the cancelled acquire: %+v", ls)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("Acquire: %v", r.err)
			}
			nodes := lockNodes(t, steady.Conn(), root)
			if len(nodes) != 1 || nodes[0] != r.l.Path() {
				t.Fatalf("queue = %q; want only the lease's node %s", nodes, r.l.Path())
			}
			if _, st, err := steady.Conn().Get(nodes[0]); err != nil || st.EphemeralOwner != cur {
				t.Fatalf("lease node owner %#x (%v); want the new session %#x", st.EphemeralOwner, err, cur)
			}
			if got := r.l.SessionID(); got != cur {
				t.Fatalf("lease session %#x; want the new session %#x (old %#x)", got, cur, old)
			}
			if ls := flaky.Locks(); len(ls) != 1 || ls[0].SessionID != cur {
				t.Fatalf("local record %+v; want one node of session %#x", ls, cur)
			}
			if err := r.l.Release(ctx); err != nil {
				t.Fatalf("Release: %v", err)
			}
			if n := lockNodes(t, steady.Conn(), root); len(n) != 0 {
				t.Fatalf("nodes left after release: %q", n)
			}
		})
	}
}
