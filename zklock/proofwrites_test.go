package zklock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A write the leader commits proves the session alive as a sync does
// (docs/protocol.md, "Proof of life from the leader"): a holder that keeps
// writing, as a contended client does at every cycle, sends no sync of
// its own, and its loss deadline keeps moving; a holder that only holds
// sends one every tenth of the session timeout.
func TestIntegration_WritesProveTheSession(t *testing.T) {
	const timeout = 10 * time.Second // a sync every second while idle
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	writer := newClient(t, root, zklock.WithSessionTimeout(timeout))
	idle := newClient(t, root, zklock.WithSessionTimeout(timeout))
	for _, c := range []*zklock.Client{writer, idle} {
		l, err := c.Acquire(ctx, "held-"+map[bool]string{true: "w", false: "i"}[c == writer])
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(context.Background())
	}
	w0, i0 := zklock.ProverSyncs(writer), zklock.ProverSyncs(idle)
	const watch = 3500 * time.Millisecond
	minLeft := time.Hour
	cycles := 0
	for start := time.Now(); time.Since(start) < watch; cycles++ {
		l, err := writer.Acquire(ctx, "cycle")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		minLeft = min(minLeft, time.Until(zklock.LossDeadline(writer)))
		time.Sleep(20 * time.Millisecond)
	}
	w, i := zklock.ProverSyncs(writer)-w0, zklock.ProverSyncs(idle)-i0
	t.Logf("in %v: the writer (%d cycles) sent %d syncs, the idle holder %d; the writer's loss deadline was at least %v ahead",
		watch, cycles, w, i, minLeft.Round(time.Millisecond))
	if i < 2 {
		t.Fatalf("the idle holder sent %d syncs in %v: its proof is not kept fresh every %v", i, watch, timeout/10)
	}
	if w != 0 {
		t.Fatalf("the writer sent %d syncs in %v although it wrote every few milliseconds", w, watch)
	}
	// GivenUpAfter is 40% of the timeout after a proof's send; a write
	// every ~25 ms keeps at least 40% less the cycle and one interval (the
	// formula's own slack) ahead.
	if low := timeout*4/10 - timeout/10 - timeout/20; minLeft < low {
		t.Fatalf("the writer's loss deadline fell to %v ahead, below %v: its writes do not prove its session", minLeft, low)
	}
}

// The cut-off follower of TestIntegration_LossBeforeTakeoverOnACutOffFollower,
// with a holder that keeps writing on another resource: its writes, which
// the follower can no longer have committed, prove nothing after the cut,
// and it is told before the next holder comes in.
func TestIntegration_LossBeforeTakeoverWhileWritingOnACutOffFollower(t *testing.T) {
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
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var cycles, cyclesAfterCut int
	var cut time.Time
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			wl, err := stuck.Acquire(wctx, "w")
			if err == nil {
				err = wl.Release(wctx)
			}
			cancel()
			mu.Lock()
			if err == nil {
				cycles++
				if !cut.IsZero() {
					cyclesAfterCut++
				}
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()
	var before int
	told, took := toldBeforeTakeover(t, ctx, e, f, l, next, 500*time.Millisecond, func() {
		mu.Lock()
		before, cut = cycles, time.Now()
		mu.Unlock()
		if before == 0 {
			t.Fatal("the holder wrote nothing before the cut")
		}
	})
	mu.Lock()
	t.Logf("%d write cycles before the cut, %d after; cut-off holder told %v after the cut, %v before the next holder took the lock",
		before, cyclesAfterCut, told.Round(time.Millisecond), (took - told).Round(time.Millisecond))
	mu.Unlock()
	_ = e.Heal()
}
