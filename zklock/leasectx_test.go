package zklock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A lease's context that is done because the lease was lost finds the
// loss in the lease's Err at once, and as the context's cause: code that
// returns on the context's end (a gRPC handler, say) and then asks the
// lease why must not find it still held. Done may close a moment later
// (the interceptor once read Done there, and answered OK instead of
// Aborted, 1 CI run in many).
func TestIntegration_LeaseContextDoneMeansErrIsSet(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c, op := newClient(t, root), newClient(t, root)
	ctx := testCtx(t)
	for round := range 20 {
		l, err := c.Acquire(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		// Many contexts of the lease, so that the one waited on is likely
		// cancelled well before the last, and before Done closes.
		var lctx context.Context
		for i := range 2000 {
			c := l.Context(context.Background())
			if i == round*97%2000 {
				lctx = c
			}
		}
		if err := op.Conn().Delete(l.Path(), -1); err != nil {
			t.Fatal(err)
		}
		<-lctx.Done()
		if err := l.Err(); !errors.Is(err, zklock.ErrLeaseLost) {
			t.Fatalf("round %d: the lease's context is done and its Err is %v, want ErrLeaseLost", round, err)
		}
		if cause := context.Cause(lctx); !errors.Is(cause, zklock.ErrLeaseLost) {
			t.Fatalf("round %d: context cause %v, want ErrLeaseLost", round, cause)
		}
		_ = l.Release(ctx)
	}
}
