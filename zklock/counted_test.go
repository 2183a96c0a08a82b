package zklock_test

import (
	"errors"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// With other creates in flight on its session, an acquire of a free lock
// makes its node in one transaction that also reads the queue's child
// count, and holds on that alone: no listing, and no read of its node for
// the fencing token (taken from the transaction's zxid).
func TestIntegration_CountedCreate(t *testing.T) {
	srv := countedServer(t)
	root := "/counted"
	// A long session: the client's pings (every third of the timeout) and
	// proofs of life (a sync every tenth while it holds a lock) stay few
	// in the seconds of the test, however slow the machine.
	c := newClientAt(t, srv.Addr(), root, zklock.WithSessionTimeout(40*time.Second))
	ctx := testCtx(t)
	defer zklock.BusyCreates(c)()
	l, err := c.Acquire(ctx, "a") // makes the queue
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var leases []*zklock.Lease
	recv := packetsDuring(t, srv, func() {
		for range n {
			l, err := c.Acquire(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			leases = append(leases, l)
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
	// One transaction and one delete per cycle; a listing would add n.
	// Allow 4 pings and syncs.
	if recv < 2*n || recv > 2*n+4 {
		t.Fatalf("server received %d packets for %d acquire+release cycles, want %d..%d", recv, n, 2*n, 2*n+4)
	}
	q, err := c.QueuePath("a")
	if err != nil {
		t.Fatal(err)
	}
	data, st, err := c.Conn().Get(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 0 || st.Version != n+1 {
		t.Fatalf("queue data %q version %d, want empty data rewritten %d times", data, st.Version, n+1)
	}
	// Each token is the czxid of its node: the transaction's zxid.
	for i, l := range leases {
		if i > 0 && l.Token() <= leases[i-1].Token() {
			t.Fatalf("token %d after %d", l.Token(), leases[i-1].Token())
		}
	}
	l, err = c.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	_, nst, err := c.Conn().Get(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if l.Token() != nst.Czxid {
		t.Fatalf("token %d, node's czxid %d", l.Token(), nst.Czxid)
	}
}

// When the count shows others in the queue, the acquire lists it and
// waits its turn as usual.
func TestIntegration_CountedCreateContended(t *testing.T) {
	root := zktest.UniqueRoot(t)
	other, c := newClient(t, root), newClient(t, root)
	ctx := testCtx(t)
	defer zklock.BusyCreates(c)()
	h, err := other.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if l, err := c.TryAcquire(ctx, "r"); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("try-lock of a held lock: lease %v, err %v; want ErrLocked", l, err)
	}
	type result struct {
		l   *zklock.Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := c.Acquire(ctx, "r")
		got <- result{l, err}
	}()
	select {
	case r := <-got:
		t.Fatalf("acquired a held lock: lease %v, err %v", r.l, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.l.Token() <= h.Token() {
		t.Fatalf("token %d after the holder's %d", r.l.Token(), h.Token())
	}
	if err := r.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// The count rewrites a queue's data, so it is used only where that data is
// ours and empty: not on a raw path (a Java or Python service's queue),
// nor for a semaphore (whose queue stores its limit).
func TestIntegration_CountedCreateLeavesQueueDataAlone(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root)
	ctx := testCtx(t)
	defer zklock.BusyCreates(c)()
	raw := root + "/java/r"
	for _, p := range []string{path.Dir(root), root, root + "/java"} {
		if _, err := c.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	if _, err := c.Conn().Create(raw, []byte("curator"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	sem, err := c.QueuePath("s")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, acq := range []func() (*zklock.Lease, error){
			func() (*zklock.Lease, error) { return c.Acquire(ctx, raw, zklock.RawPath()) },
			func() (*zklock.Lease, error) {
				return c.Acquire(ctx, "s", zklock.Limit(2))
			},
		} {
			l, err := acq()
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, q := range []string{raw, sem} {
		data, st, err := c.Conn().Get(q)
		if err != nil {
			t.Fatal(err)
		}
		if st.Version != 0 || len(data) == 0 {
			t.Fatalf("%s: data %q version %d; want its first data, never rewritten", q, data, st.Version)
		}
	}
}

// A queue made by someone else with an ACL that lacks WRITE refuses the
// counted create: acquires create and list instead, then and after.
func TestIntegration_CountedCreateWithoutWriteRight(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c, other := newClient(t, root), newClient(t, root)
	ctx := testCtx(t)
	defer zklock.BusyCreates(c)()
	q, err := c.QueuePath("r")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Conn().Create(root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Conn().Create(q, nil, 0, zk.WorldACL(zk.PermRead|zk.PermCreate|zk.PermDelete)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		l, err := c.Acquire(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.TryAcquire(ctx, "r"); !errors.Is(err, zklock.ErrLocked) {
			t.Fatalf("second holder: %v", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, st, err := c.Conn().Get(q); err != nil || st.Version != 0 {
		t.Fatalf("queue version %v, err %v; want 0", st, err)
	}
	eventually(t, "no lock nodes left", func() bool { return len(lockNodes(t, c.Conn(), root)) == 0 })
}
