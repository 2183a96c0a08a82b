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
	told, took := toldBeforeTakeover(t, ctx, e, f, l, next, 300*time.Millisecond, nil)
	t.Logf("cut-off holder told %v after the cut, %v before the next holder took the lock", told.Round(time.Millisecond), (took - told).Round(time.Millisecond))
	_ = e.Heal()
}

// toldBeforeTakeover has next wait for l's lock ("r"), cuts follower f,
// the only server of l's client, off from the rest silently after settle
// (calling atCut, if given, just before), and checks that l's holder is
// told of its loss before next holds. It returns when each happened,
// after the cut.
func toldBeforeTakeover(t *testing.T, ctx context.Context, e *zktest.Ensemble, f int, l *zklock.Lease, next *zklock.Client, settle time.Duration, atCut func()) (told, took time.Duration) {
	t.Helper()
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
	time.Sleep(settle)
	if atCut != nil {
		atCut()
	}
	cut := time.Now()
	if err := e.Isolate(f, zktest.CutSilent); err != nil {
		t.Fatal(err)
	}
	var tookAt time.Time
	select {
	case tookAt = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the next holder never got the lock")
	}
	var toldAtT time.Time
	select {
	case toldAtT = <-toldAt:
	default:
		t.Fatalf("the next holder took the lock %v after the cut; the cut-off holder has not been told (Err %v)",
			tookAt.Sub(cut).Round(time.Millisecond), l.Err())
	}
	if !toldAtT.Before(tookAt) {
		t.Fatalf("cut-off holder told %v after the cut, next holder in at %v", toldAtT.Sub(cut), tookAt.Sub(cut))
	}
	return toldAtT.Sub(cut), tookAt.Sub(cut)
}
