package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// fencedData makes a data node for fenced writes and returns its path and
// a reader of its value.
func fencedData(t *testing.T, c *zklock.Client, root string) (string, func() string) {
	t.Helper()
	l, err := c.Acquire(testCtx(t), "setup") // makes the root
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Release(testCtx(t))
	p := root + "/data"
	if _, err := c.Conn().Create(p, []byte("v0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Conn().Delete(p, -1) })
	return p, func() string {
		d, _, err := c.Conn().Get(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(d)
	}
}

// A fenced write commits while the lease's node exists, and is refused
// by ZooKeeper itself once an operator deleted it, though the holder has
// not learned of the loss (its node carries no watch yet): the data is
// unchanged and the error matches ErrLeaseLost, naming the part.
func TestIntegration_FencedWriteRefusedAfterOperatorDelete(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root, zklock.WithNodeWatchDelay(time.Hour))
	ctx := testCtx(t)
	data, value := fencedData(t, c, root)
	l, err := c.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	if _, err := c.Fenced(ctx, l, &zk.SetDataRequest{Path: data, Data: []byte("v1"), Version: -1}); err != nil {
		t.Fatalf("fenced write while held: %v", err)
	}
	op := newClient(t, root)
	if err := op.Conn().Delete(l.Path(), -1); err != nil {
		t.Fatal(err)
	}
	if l.Err() != nil {
		t.Fatalf("the holder learned of the delete (%v): the test wants ZooKeeper to refuse", l.Err())
	}
	_, err = c.Fenced(ctx, l, &zk.SetDataRequest{Path: data, Data: []byte("v2"), Version: -1})
	var fe *zklock.FencedError
	if !errors.Is(err, zklock.ErrLeaseLost) || !errors.As(err, &fe) || fe.Part == nil || fe.Part.Path != l.Path() {
		t.Fatalf("fenced write after the delete = %v; want a *FencedError on the lease's node, matching ErrLeaseLost", err)
	}
	if v := value(); v != "v1" {
		t.Fatalf("data = %q after the refused write; want v1", v)
	}
}

// A holder paused past its session's expiry (here: cut off by a silent
// partition) writes when it resumes, on a new session: ZooKeeper refuses
// the write, and keeps the next holder's.
func TestIntegration_FencedWriteRefusedAfterSessionExpiry(t *testing.T) {
	const timeout = 2 * time.Second
	root := zktest.UniqueRoot(t)
	px, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	c := newClientAt(t, px.Addr(), root, zklock.WithSessionTimeout(timeout))
	other := newClient(t, root)
	ctx := testCtx(t)
	data, value := fencedData(t, other, root)
	l, err := c.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	sid := c.SessionID()
	px.Blackhole(true)
	l2, err := other.Acquire(ctx, "r") // granted once the server expires c's session
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release(ctx)
	if _, err := other.Fenced(ctx, l2, &zk.SetDataRequest{Path: data, Data: []byte("next"), Version: -1}); err != nil {
		t.Fatalf("the next holder's fenced write: %v", err)
	}
	px.Blackhole(false)
	for c.SessionID() == sid || c.SessionID() == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	_, err = c.Fenced(ctx, l, &zk.SetDataRequest{Path: data, Data: []byte("stale"), Version: -1})
	var fe *zklock.FencedError
	if !errors.Is(err, zklock.ErrLeaseLost) || !errors.As(err, &fe) || fe.Part == nil {
		t.Fatalf("the expired holder's fenced write = %v; want a *FencedError on its node", err)
	}
	if v := value(); v != "next" {
		t.Fatalf("data = %q; want the next holder's", v)
	}
}

// Every part of a lease is checked: a multi-resource lease whose second
// part's node is gone is refused, naming a part; a read lease, and a
// lease on a raw path, are fenced by their own nodes; a failed operation
// of the caller's is its own error, not a lost lease.
func TestIntegration_FencedWriteChecksEveryPart(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root, zklock.WithNodeWatchDelay(time.Hour))
	ctx := testCtx(t)
	data, value := fencedData(t, c, root)
	set := func(v string) *zk.SetDataRequest { return &zk.SetDataRequest{Path: data, Data: []byte(v), Version: -1} }

	r, err := c.Acquire(ctx, "doc", zklock.Read)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fenced(ctx, r, set("read")); err != nil {
		t.Fatalf("fenced write under a read lease: %v", err)
	}
	_ = r.Release(ctx)

	raw, err := c.Acquire(ctx, root+"/raw", zklock.RawPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fenced(ctx, raw, set("raw")); err != nil {
		t.Fatalf("fenced write under a raw-path lease: %v", err)
	}
	_ = raw.Release(ctx)

	all, err := c.AcquireAll(ctx, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Release(ctx)
	_, err = c.Fenced(ctx, all, &zk.SetDataRequest{Path: data, Data: []byte("x"), Version: 12345})
	var fe *zklock.FencedError
	if !errors.As(err, &fe) || fe.Part != nil || fe.Op != 0 || !errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zklock.ErrLeaseLost) {
		t.Fatalf("a failed operation of the caller's = %v; want a *FencedError at op 0 matching zk.ErrBadVersion, not ErrLeaseLost", err)
	}
	parts := all.Parts()
	if err := c.Conn().Delete(parts[1].Path, -1); err != nil {
		t.Fatal(err)
	}
	// The client learns of the delete (a part of a multi-resource lease
	// watches its node at once) and gives the other part up too: either
	// node may be the one the refusal names.
	_, err = c.Fenced(ctx, all, set("multi"))
	if !errors.Is(err, zklock.ErrLeaseLost) || !errors.As(err, &fe) || fe.Part == nil {
		t.Fatalf("fenced write with part %q gone = %v; want ErrLeaseLost naming a part", parts[1].Resource, err)
	}
	if v := value(); v != "raw" {
		t.Fatalf("data = %q; want the last committed write, raw", v)
	}
}

// Fenced refuses a lease of another backend or Client.
func TestIntegration_FencedWantsThisClientsLease(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root)
	m := zklock.NewMemoryLocker()
	l, err := m.Acquire(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	if _, err := c.Fenced(context.Background(), l); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("Fenced with a MemoryLocker lease = %v; want ErrInvalidOption", err)
	}
}

// A lease released is refused at once with ErrReleased (a new user's probe
// saw ErrLeaseLost, the server's answer for its gone node), and nothing
// is written.
func TestIntegration_FencedRefusesAReleasedLease(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root)
	ctx := testCtx(t)
	data, value := fencedData(t, c, root)
	l, err := c.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fenced(ctx, l, &zk.SetDataRequest{Path: data, Data: []byte("late"), Version: -1}); !errors.Is(err, zklock.ErrReleased) {
		t.Fatalf("Fenced with a released lease = %v; want ErrReleased", err)
	}
	if v := value(); v == "late" {
		t.Fatal("the write of a released lease went through")
	}
}
