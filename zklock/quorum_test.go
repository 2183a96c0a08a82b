package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A holder whose server is a follower cut off from the leader, silently,
// keeps hearing that follower answer its pings until the follower gives up
// on the leader (syncLimit × tickTime), while the leader, hearing nothing
// of the session, expires it and lets the next holder in. Pings answered
// by a follower prove nothing to the leader: the holder must be told
// before the takeover all the same (found by the chaos campaign v2).
func TestIntegration_LossBeforeTakeoverOnACutOffFollower(t *testing.T) {
	e, leader := startLinkedEnsemble(t)
	addrs := e.Addrs()
	f := (leader + 1) % 3
	other := 3 - leader - f
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	stuck := connectTo(t, root, []string{addrs[f]})
	next := connectTo(t, root, []string{addrs[leader], addrs[other]})
	var l *zklock.Lease
	eventually(t, "the holder holds (the ensemble may still be settling)", func() bool {
		var err error
		l, err = stuck.Acquire(ctx, "r", zklock.MaxWait(time.Second))
		return err == nil
	})
	toldAt := make(chan time.Time, 1)
	go func() {
		<-l.Done()
		toldAt <- time.Now()
	}()
	got := make(chan time.Time, 1)
	go func() {
		nl, err := next.Acquire(ctx, "r")
		if err != nil {
			t.Error(err)
			return
		}
		got <- time.Now()
		nl.Release(context.Background())
	}()
	time.Sleep(300 * time.Millisecond)
	cut := time.Now()
	if err := e.Isolate(f, zktest.CutSilent); err != nil {
		t.Fatal(err)
	}
	var took time.Time
	select {
	case took = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the next holder never got the lock")
	}
	var told time.Time
	select {
	case told = <-toldAt:
	default:
		t.Fatalf("the next holder took the lock %v after the cut; the cut-off holder has not been told (Err %v)",
			took.Sub(cut).Round(time.Millisecond), l.Err())
	}
	if !told.Before(took) {
		t.Fatalf("cut-off holder told %v after the cut, next holder in at %v", told.Sub(cut), took.Sub(cut))
	}
	t.Logf("cut-off holder told %v after the cut, %v before the next holder took the lock", told.Sub(cut).Round(time.Millisecond), took.Sub(told).Round(time.Millisecond))
	_ = e.Heal()
}
