package zklock_test

import (
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Inspect decides who holds over the nodes that still exist after its
// reads: a holder that released between the listing and the reads must not
// leave its successor looking like a waiter behind nobody (64e7063). The
// inspecting client's link is slowed so that the release lands, every
// time, after the listing and before the reads of the nodes' data.
func TestIntegration_InspectAfterAHolderLeftDuringItsReads(t *testing.T) {
	const d = 400 * time.Millisecond // each way
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	p := newProxy(t)
	inspector := newClientAt(t, p.Addr(), root, zklock.WithSessionTimeout(10*time.Second))
	h, w := newClient(t, root), newClient(t, root)
	held, err := h.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *zklock.Lease, 1)
	go func() {
		l, err := w.Acquire(ctx, "r")
		if err != nil {
			t.Errorf("waiter: %v", err)
		}
		got <- l
	}()
	eventually(t, "the waiter queued", func() bool { ls := w.Locks(); return len(ls) == 1 && !ls[0].Held })
	waiterNode := w.Locks()[0].Path

	p.SetDelay(d)
	type result struct {
		q   *zklock.Queue
		err error
	}
	res := make(chan result, 1)
	start := time.Now()
	go func() {
		q, err := inspector.Inspect(ctx, "r")
		res <- result{q, err}
	}()
	// The listing reaches the server at about d and its answer the client
	// at 2d; the reads reach the server at about 3d. Release at 2d.
	time.Sleep(2*d - time.Since(start))
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	if took := time.Since(start); took < 3*d {
		t.Fatalf("Inspect took %v, less than the three one-way delays it must wait (the proxy did not slow it)", took)
	}
	hs := r.q.Holders()
	if len(r.q.Nodes) != 1 || len(hs) != 1 || hs[0].Path != waiterNode {
		t.Fatalf("Inspect after the holder left: nodes %+v, holders %+v; want the successor %s holding", r.q.Nodes, hs, waiterNode)
	}
	if l := <-got; l != nil {
		_ = l.Release(ctx)
	}
}
