package zklock_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/zklock"
)

// A lease's Done asked for again and again, through LeaseFromContext as a
// leader's loop might, registers nothing that lives as long as the lease:
// a view cannot be released, and ends with the state. The lease's own Done
// is registered once, however often it is asked for.
func TestLeaseFromContextDoneRegistersNothing(t *testing.T) {
	ctx := testCtx(t)
	m := zklock.NewMemoryLocker()
	l, err := m.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	lctx := l.Context(ctx)
	for range 1000 {
		_ = zklock.LeaseFromContext(lctx).Done()
		_ = l.Done()
	}
	if n := zklock.LeaseViews(l); n != 1 {
		t.Fatalf("%d Done channels registered after 1,000 calls of each kind; want 1 (the lease's own)", n)
	}
	done := zklock.LeaseFromContext(lctx).Done()
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	default:
		t.Fatal("a view's Done is open after the lease's release")
	}
}
