package zklock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A holder cut off from ZooKeeper is told its lease is lost at the
// deadline docs/guarantees.md states: the last answered sync's send time
// plus 40% of the session timeout with the default loss margin (the
// proven anchor, a proof interval and a quarter of the timeout before
// the sync, plus the timeout, less the margin of a quarter). Syncs go
// every tenth of the timeout while the client holds a lock, so the last
// one answered was sent before the cut, and the holder must be told
// within 40% of the timeout of the cut. The other tests of the loss
// signal check only that it comes before the next holder's grant, which
// a lease given up at the session timeout itself, with no margin (60% of
// the timeout after the cut at the earliest), also passes: the proven
// anchor's own slack keeps it ahead of ZooKeeper's expiry. A session
// timeout of 8 s puts 0.8 s between the two.
func TestIntegration_LossToldAtTheDeadline(t *testing.T) {
	const (
		timeout  = 8 * time.Second
		deadline = timeout * 4 / 10 // after the last answered sync
		interval = timeout / 10     // between two syncs while a lock is held
		slack    = 400 * time.Millisecond
	)
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	for round := range 2 {
		p := newProxy(t)
		c := newClientAt(t, p.Addr(), root, zklock.WithSessionTimeout(timeout))
		l, err := c.Acquire(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * interval) // the holder's syncs are answered
		cut := time.Now()
		p.Blackhole(true)
		select {
		case <-l.Done():
		case <-time.After(timeout):
			t.Fatalf("round %d: the holder, cut off, was not told its lease is lost within the session timeout (%v)", round, timeout)
		}
		told := time.Since(cut)
		var lost *zklock.LostError
		if !errors.As(l.Err(), &lost) || lost.Reason != zklock.LossSessionUnverified {
			t.Fatalf("round %d: Err = %v; want a LostError for %v", round, l.Err(), zklock.LossSessionUnverified)
		}
		t.Logf("round %d: told %v after the cut (the deadline is %v after the last answered sync, sent up to %v before the cut)",
			round, told.Round(time.Millisecond), deadline, interval)
		if told > deadline+slack {
			t.Errorf("round %d: the holder was told %v after the cut; want within %v (40%% of the session timeout) and %v for the timer: "+
				"the lease outlived its loss margin", round, told.Round(time.Millisecond), deadline, slack)
		}
		p.Blackhole(false)
		c.Close()
	}
}
