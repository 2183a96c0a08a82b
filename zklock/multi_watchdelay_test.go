package zklock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A part of a multi-resource acquire, held while the others are awaited,
// watches its node at once, whatever the client's node watch delay: the
// delay is for short critical sections, and a part held while the others
// are awaited is not one. With the delay, a delete of the part's node went
// unseen and AcquireAll returned a lease already lost, its part's lock free
// for anyone (78f10eb). Here the delay is a minute, so a part that waited
// for it would be unwatched for the whole test.
func TestIntegration_AcquireAllPartWatchedDespiteWatchDelay(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	a := newClient(t, root, zklock.WithNodeWatchDelay(time.Minute))
	b := newClient(t, root)
	op := newClient(t, root)
	y, err := b.Acquire(ctx, "y")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *zklock.Lease, 1)
	go func() {
		l, err := a.AcquireAll(ctx, []string{"x", "y"})
		if err != nil {
			t.Errorf("AcquireAll: %v", err)
		}
		got <- l
	}()
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
	eventually(t, "a queued again for x", func() bool {
		ls := a.Locks()
		return len(ls) == 2 && ls[0].Path != xNode
	})
	if err := y.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l := <-got
	if l == nil {
		t.FailNow()
	}
	defer func() { _ = l.Release(ctx) }()
	if err := l.Err(); err != nil {
		t.Fatalf("AcquireAll returned a lease already lost: %v", err)
	}
	for _, p := range l.Parts() {
		if p.Path == xNode {
			t.Fatalf("AcquireAll returned part %s on the node the operator deleted", p.Resource)
		}
	}
	// Nobody else gets x while the lease holds.
	if other, err := op.TryAcquire(ctx, "x"); !errors.Is(err, zklock.ErrLocked) {
		if other != nil {
			_ = other.Release(ctx)
		}
		t.Fatalf("another client's TryAcquire of x while the lease holds it: %v", err)
	}
}
