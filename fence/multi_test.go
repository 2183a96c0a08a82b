package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/zklock"
)

// Why a multi-resource lease is fenced part by part: its Token is the
// largest czxid of its nodes, and the next holder of one of its resources
// can have a smaller one. Y holds "a"; A asks for {a, b} and queues on "a";
// B queues on "a" behind A; Y lets go: A holds "a", then creates its node
// on "b" (after B's node on "a"). A's Token is above B's, though B holds
// "a" after A: a fence on "a" fed A's Token would refuse B, and accept A's
// late writes after B's. Guard fences each resource with its own part's
// token: B writes, then A's late write is refused.
func TestMultiResourceTokenIsNotPerResource(t *testing.T) {
	ctx := testCtx(t)
	c := newClient(t)
	y, err := c.Acquire(ctx, "a")
	must(t, err)
	queued := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			q, err := c.Inspect(ctx, "a")
			if err == nil && len(q.Nodes) == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("queue of a never reached %d nodes", n)
			}
		}
	}
	type result struct {
		l   *zklock.Lease
		err error
	}
	multi, single := make(chan result, 1), make(chan result, 1)
	go func() { l, err := c.AcquireAll(ctx, []string{"a", "b"}); multi <- result{l, err} }()
	queued(2)
	go func() { l, err := c.Acquire(ctx, "a"); single <- result{l, err} }()
	queued(3)
	must(t, y.Release(ctx))
	a := <-multi
	must(t, a.err)
	must(t, a.l.Release(context.WithoutCancel(ctx)))
	b := <-single
	must(t, b.err)
	defer b.l.Release(ctx)
	if a.l.Token() <= b.l.Token() {
		t.Fatalf("multi-resource lease token %d, next holder of a %d: the hazard did not arise", a.l.Token(), b.l.Token())
	}
	t.Logf("lease of {a, b}: Token %d; the next lease of a: %d (smaller, though granted later)", a.l.Token(), b.l.Token())

	// Guard fences part by part: B (the later holder of a) writes, then
	// A's late write is refused, on both engines.
	for _, e := range engines(t) {
		t.Run(e.name, func(t *testing.T) {
			tx, err := e.db.BeginTx(ctx, nil)
			must(t, err)
			must(t, e.fence.Guard(ctx, tx, b.l))
			must(t, tx.Commit())
			tx, err = e.db.BeginTx(ctx, nil)
			must(t, err)
			defer tx.Rollback()
			if err := e.fence.Guard(ctx, tx, a.l); !errors.Is(err, fence.ErrStaleToken) {
				t.Fatalf("the earlier multi-resource lease's late write: %v, want ErrStaleToken", err)
			}
		})
	}
}
