package zklock_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/zklock"
)

// The first lock of a resource makes its queue with one create, whatever
// the depth of the root: every create is a transaction of the whole
// ensemble, a failed one too, so ancestors that exist are not created
// again. Ancestors that are missing are made (persistent), from the top.
func TestIntegration_FirstLockOfAQueue(t *testing.T) {
	srv := countedServer(t)
	ctx := testCtx(t)
	c := newClientAt(t, srv.Addr(), "/first/time/locks")
	cycle := func(resource string) {
		t.Helper()
		l, err := c.Acquire(ctx, resource)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cycle("warm") // makes the root and its ancestors

	// Alone: the create and its pipelined listing find no queue (2), the
	// queue (1), the create and listing again (2), the release (1).
	// Creating every ancestor again would add 3. Allow 2 pings.
	if n := packetsDuring(t, srv, func() { cycle("a") }); n < 6 || n > 8 {
		t.Errorf("first lock alone: %d packets, want 6 (+2 pings)", n)
	}
	// Among other creates: the counted create finds no queue (1), the
	// queue (1), the counted create again (1), the release (1).
	done := zklock.BusyCreates(c)
	n := packetsDuring(t, srv, func() { cycle("b") })
	done()
	if n < 4 || n > 6 {
		t.Errorf("first lock among other creates: %d packets, want 4 (+2 pings)", n)
	}

	// A root not made yet: its ancestors are made too.
	c2 := newClientAt(t, srv.Addr(), "/other/root")
	l, err := c2.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	for _, p := range []string{"/other", "/other/root"} {
		ok, st, err := c2.Conn().Exists(p)
		if err != nil || !ok || st.EphemeralOwner != 0 {
			t.Errorf("%s: exists %v, %+v, %v; want a persistent node", p, ok, st, err)
		}
	}
}
