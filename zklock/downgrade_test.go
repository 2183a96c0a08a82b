package zklock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A Downgrade whose delete of the write node waits out the session (the
// delete's reply lost, reconnects refused) must not hand out the read lease
// it made meanwhile: that lease was lost before the caller had it, and a
// writer may have come in since. The chaos campaign caught it returning
// such a lease (a blackhole of the worker during the delete).
func TestIntegration_DowngradeLostWhileReleasingTheWriteLease(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	p := newProxy(t)
	c := newClientAt(t, p.Addr(), root)
	other := newClient(t, root)
	w, err := c.Acquire(ctx, "r", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	p.RejectNew(true) // the connection in use carries on; a reconnect is refused
	lost := p.LoseReply(zktest.OpDelete)
	healed := make(chan struct{})
	go func() {
		defer close(healed)
		select {
		case <-lost:
			time.Sleep(testSessionTimeout + time.Second) // the server expires the session
		case <-ctx.Done():
		}
		p.RejectNew(false)
	}()
	start := time.Now()
	r, err := w.Downgrade(ctx)
	took := time.Since(start)
	select {
	case <-lost:
	default:
		t.Fatal("the write node's delete never lost its reply: the test did not set up its case")
	}
	if err == nil {
		t.Fatalf("Downgrade returned a read lease after %v whose Err is %v; want an error matching ErrLeaseLost", took, r.Err())
	}
	if !errors.Is(err, zklock.ErrLeaseLost) {
		t.Fatalf("Downgrade = %v; want an error matching ErrLeaseLost", err)
	}
	// Neither lease is held, and the write lease says so: its holder
	// must not work on under it. Here the session's end deleted the write
	// node first, which completed the release Downgrade began: Err is
	// ErrReleased; had the delete still been waiting, the loss.
	select {
	case <-w.Done():
	default:
		t.Fatal("the write lease's Done is open after Downgrade reported both leases lost")
	}
	if err := w.Err(); !errors.Is(err, zklock.ErrLeaseLost) && !errors.Is(err, zklock.ErrReleased) {
		t.Fatalf("the write lease's Err = %v after Downgrade reported both leases lost; want ErrLeaseLost or ErrReleased", err)
	}
	<-healed
	// The session is gone with both nodes: a writer gets in at once.
	l, err := other.TryAcquire(ctx, "r", zklock.Write)
	if err != nil {
		t.Fatalf("another client's TryAcquire after the failed Downgrade: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A Downgrade of a lease already lost says so: the loss, not ErrReleased
// (a new user's probe: ErrReleased is for a lease released), on ZooKeeper
// (its node deleted, and its client closed) and on the MemoryLocker.
func TestIntegration_DowngradeOfALostLeaseSaysLost(t *testing.T) {
	ctx := testCtx(t)
	root := zktest.UniqueRoot(t)
	c, op := newClient(t, root), newClient(t, root)
	w, err := c.Acquire(ctx, "deleted", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Conn().Delete(w.Path(), -1); err != nil {
		t.Fatal(err)
	}
	<-w.Done()
	if _, err := w.Downgrade(ctx); !errors.Is(err, zklock.ErrLeaseLost) {
		t.Errorf("Downgrade of a lease whose node was deleted = %v; want ErrLeaseLost", err)
	}
	closing := newClient(t, root)
	w, err = closing.Acquire(ctx, "closed", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	_ = closing.Close()
	if _, err := w.Downgrade(ctx); !errors.Is(err, zklock.ErrLeaseLost) || !errors.Is(err, zklock.ErrClosed) {
		t.Errorf("Downgrade of a lease of a closed client = %v; want ErrLeaseLost and ErrClosed", err)
	}
	m := zklock.NewMemoryLocker()
	w, err = m.Acquire(ctx, "expired", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	m.Expire()
	if _, err := w.Downgrade(ctx); !errors.Is(err, zklock.ErrLeaseLost) {
		t.Errorf("MemoryLocker: Downgrade of an expired lease = %v; want ErrLeaseLost", err)
	}
	// Asked again, the loss again; a released lease says ErrReleased.
	if _, err := w.Downgrade(ctx); errors.Is(err, zklock.ErrReleased) {
		t.Errorf("the same, twice = %v; want the loss again", err)
	}
	r, err := m.Acquire(ctx, "released", zklock.Write)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Downgrade(ctx); !errors.Is(err, zklock.ErrReleased) {
		t.Errorf("Downgrade of a released lease = %v; want ErrReleased", err)
	}
}
