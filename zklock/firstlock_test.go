package zklock_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
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

// A connection lost while the first lock makes a missing ancestor leaves
// that ancestor unmade (the read that checks for it lost its reply); the
// acquire must make it on its next try, not fail with ZooKeeper's NoNode.
// The chaos smoke run caught it: the first acquires of a campaign, under a
// root not yet made, failed with "zk: node does not exist" during a fault.
func TestIntegration_FirstLockSurvivesALostReplyWhileMakingAncestors(t *testing.T) {
	top := "/zkfirst-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	root := top + "/deep"
	p := newProxy(t)
	c := newClientAt(t, p.Addr(), root)
	ctx := testCtx(t)
	t.Cleanup(func() {
		for _, n := range []string{root + "/r", root, top} {
			_ = c.Conn().Delete(n, -1)
		}
	})
	lost := p.LoseReply(zktest.OpExists) // the check for the missing top
	l, err := c.Acquire(ctx, "r")
	select {
	case <-lost:
	default:
		t.Fatal("no Exists reply was lost: the test did not set up its case")
	}
	if err != nil {
		t.Fatalf("first lock under a missing root, a reply lost while making it: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
