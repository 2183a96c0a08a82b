package zklock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A listing that proves its server diverged from the ensemble (two live
// nodes of one queue with one sequence number: ZooKeeper 3.8.0 was seen
// to keep an uncommitted transaction across a resynchronization, and a
// client on that server held on a node no other server had) grants
// nothing. Client b's listings are replayed as such a server would show
// them: a's node, which holds, carries b's sequence number under a name
// that sorts after b's. Trusting them, b would hold beside a. It must
// not hold while a does, must report the divergence (EventDiverged), and
// must hold once the listings are sound again and a has released.
func TestIntegration_DivergedListingGrantsNothing(t *testing.T) {
	_, _, b, diverged, la := holderAndDivergent(t)
	ctx := testCtx(t)
	// The newest node is b's; every other is shown with b's sequence
	// number, under a protected name that sorts after b's.
	zklock.SetListingHook(b, func(_ string, names []string) []string {
		newest := ""
		for _, n := range names {
			if len(n) >= 10 && n[len(n)-10:] > newest {
				newest = n[len(n)-10:]
			}
		}
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = n
			if len(n) >= 10 && n[len(n)-10:] != newest {
				out[i] = "_c_ffffffff-ffff-4fff-bfff-ffffffffffff-lock-" + newest
			}
		}
		return out
	})
	type result struct {
		l   *zklock.Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := b.Acquire(ctx, "r")
		got <- result{l, err}
	}()
	select {
	case r := <-got:
		t.Fatalf("b's acquire returned (%v) on diverged listings while a holds", r.err)
	case <-time.After(2 * time.Second):
	}
	if n := diverged.Load(); n < 2 {
		t.Fatalf("%d diverged listings reported in 2 s; want them reported, and listed again", n)
	}
	zklock.SetListingHook(b, nil)
	select {
	case r := <-got:
		t.Fatalf("b's acquire returned (%v) with sound listings while a holds", r.err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("b's acquire after a released: %v", r.err)
		}
		_ = r.l.Release(ctx)
	case <-time.After(5 * time.Second):
		t.Fatal("b did not hold within 5 s of a's release once its listings were sound")
	}
	t.Logf("%d diverged listings reported", diverged.Load())
}

// A try on a diverged listing decides nothing either: it answers within
// its bound, ErrUnavailable (it could not learn the queue's state), and
// leaves no node behind (deleted in the background once the try's bound
// has passed, as every try's node is).
func TestIntegration_DivergedListingTryAnswersUnavailable(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := newClient(t, root)
	zklock.SetListingHook(c, func(_ string, names []string) []string {
		out := append([]string(nil), names...)
		for _, n := range names {
			if len(n) >= 10 {
				out = append(out, "_c_ffffffff-ffff-4fff-bfff-ffffffffffff-lock-"+n[len(n)-10:])
			}
		}
		return out
	})
	start := time.Now()
	_, err := c.TryAcquire(testCtx(t), "r")
	if !errors.Is(err, zklock.ErrUnavailable) {
		t.Fatalf("try on diverged listings = %v; want ErrUnavailable", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the try answered after %v", took)
	}
	zklock.SetListingHook(c, nil)
	eventually(t, "the try's node deleted", func() bool { return len(lockNodes(t, c.Conn(), root)) == 0 })
}

// A listing that leaves out our own node while it lives (a server that
// diverged from the ensemble, or lost committed transactions, can list a
// queue without it) grants nothing and queues nothing again: the waiter
// asks whether its node exists, reports the listing diverged
// (EventDiverged), and lists again, as for two nodes of one number.
// Queueing again would put a second node behind the first, which nothing
// of ours would delete until the session ended (the model test, seed
// 43412563, saw one stay). Client b's listings leave out its first node
// until the test stops them; b must not hold while they do, must make no
// second node, and must hold on its first once they are sound and a has
// released.
func TestIntegration_UnlistedOwnNodeGrantsNothing(t *testing.T) {
	root, a, b, diverged, la := holderAndDivergent(t)
	ctx := testCtx(t)
	var hidden atomic.Pointer[string] // b's first node, once listed
	zklock.SetListingHook(b, func(_ string, names []string) []string {
		if hidden.Load() == nil {
			newest := ""
			for _, n := range names {
				if len(n) >= 10 && (newest == "" || n[len(n)-10:] > newest[len(newest)-10:]) {
					newest = n
				}
			}
			hidden.Store(&newest)
		}
		h := *hidden.Load()
		out := make([]string, 0, len(names))
		for _, n := range names {
			if n != h {
				out = append(out, n)
			}
		}
		return out
	})
	defer zklock.SetListingHook(b, nil)
	type result struct {
		l   *zklock.Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := b.Acquire(ctx, "r")
		got <- result{l, err}
	}()
	eventually(t, "b's first node listed and left out", func() bool { return hidden.Load() != nil })
	time.Sleep(time.Second)
	if n := len(lockNodes(t, a.Conn(), root)); n != 2 {
		t.Fatalf("%d lock nodes while b's listings leave its node out; want 2 (a's, b's first): %v", n, lockNodes(t, a.Conn(), root))
	}
	if diverged.Load() == 0 {
		t.Fatal("no diverged listing reported in 1 s")
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		t.Fatalf("b's acquire returned (%v) on listings without its node", r.err)
	case <-time.After(500 * time.Millisecond):
	}
	zklock.SetListingHook(b, nil)
	var lb *zklock.Lease
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("b's acquire: %v", r.err)
		}
		lb = r.l
	case <-time.After(5 * time.Second):
		t.Fatalf("b did not hold within 5 s of its listings' return; nodes: %v", lockNodes(t, a.Conn(), root))
	}
	if want := root + "/r/" + *hidden.Load(); lb.Path() != want {
		t.Fatalf("b holds %s; want its first node %s", lb.Path(), want)
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the queue empty", func() bool { return len(lockNodes(t, a.Conn(), root)) == 0 })
	t.Logf("%d diverged listings reported", diverged.Load())
}

// holderAndDivergent returns, under a new root, client a holding "r"
// (its lease la) and client b, whose EventDiverged reports diverged
// counts.
func holderAndDivergent(t *testing.T) (root string, a, b *zklock.Client, diverged *atomic.Int32, la *zklock.Lease) {
	t.Helper()
	root = zktest.UniqueRoot(t)
	a = newClient(t, root)
	diverged = new(atomic.Int32)
	b = newClient(t, root, zklock.WithObserver(zklock.ObserverFunc(func(_ context.Context, e zklock.Event) {
		if e.Kind == zklock.EventDiverged {
			diverged.Add(1)
		}
	})))
	la, err := a.Acquire(testCtx(t), "r")
	if err != nil {
		t.Fatal(err)
	}
	return root, a, b, diverged, la
}
