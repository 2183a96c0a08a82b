package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Waiting you can see, against a real server: a client that held a
// resource reports its hold-time median in its next node; waiters write
// their deadlines (MaxWait, or their context's) in theirs; Inspect's
// turns times the queue's median is each waiter's estimate, and a waiter
// whose deadline falls before it is shown to give up first.
func TestIntegration_WaitEstimate(t *testing.T) {
	const hold = 500 * time.Millisecond
	ctx := testCtx(t)
	root := zktest.UniqueRoot(t)
	holder := newClient(t, root)
	for range 3 {
		l, err := holder.Acquire(ctx, "est")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(hold)
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	held, err := holder.Acquire(ctx, "est")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	if m := holder.Locks()[0].HoldMedian; m < hold || m > 3*hold {
		t.Fatalf("the holder's own median %v; want about %v", m, hold)
	}

	// Three waiters, each its own client: no deadline, MaxWait(30s), and
	// a context deadline sooner than its turn.
	start := func(opts []zklock.AcquireOption, deadline time.Duration) {
		c := newClient(t, root)
		wctx, cancel := context.WithCancel(context.Background()) // no deadline
		if deadline > 0 {
			wctx, cancel = context.WithTimeout(context.Background(), deadline)
		}
		t.Cleanup(cancel)
		n := len(queueOf(t, holder).Nodes)
		go func() {
			if l, err := c.Acquire(wctx, "est", opts...); err == nil {
				l.Release(context.Background())
			}
		}()
		eventually(t, "the waiter to queue", func() bool { return len(queueOf(t, holder).Nodes) > n })
	}
	begun := time.Now()
	start(nil, 0)
	start([]zklock.AcquireOption{zklock.MaxWait(30 * time.Second)}, 0)
	start(nil, 10*time.Second)
	q := queueOf(t, holder)
	now := time.Now()
	m := q.HoldMedian()
	if m < hold || m > 3*hold {
		t.Fatalf("queue's hold median %v; want about %v (the holder's report)", m, hold)
	}
	if len(q.Nodes) != 4 {
		t.Fatalf("%d nodes", len(q.Nodes))
	}
	for i, n := range q.Nodes {
		w, ok := n.EstimatedWait(m)
		if n.Turns != i || !ok || w != time.Duration(i)*m {
			t.Fatalf("node %d: turns %d, estimate %v %v; want %d turns, %v", i, n.Turns, w, ok, i, time.Duration(i)*m)
		}
	}
	if d := q.Nodes[1].Owner.Deadline; !d.IsZero() {
		t.Fatalf("a waiter with no deadline wrote %v", d)
	}
	if d := q.Nodes[2].Owner.Deadline; d.Before(begun.Add(29*time.Second)) || d.After(now.Add(30*time.Second)) {
		t.Fatalf("MaxWait(30s) wrote deadline %v, %v from now", d, d.Sub(now))
	}
	if d := q.Nodes[3].Owner.Deadline; d.Before(begun.Add(10*time.Second-time.Millisecond)) || d.After(now.Add(10*time.Second)) {
		t.Fatalf("a context deadline of 10s wrote %v, %v from now", d, d.Sub(now))
	}
	// Judged at 5s a hold, the last waiter's turn (3 turns: 15s) comes
	// after its deadline (10s); the MaxWait one's (10s) before its own
	// (30s); at 1s a hold, every waiter's comes in time.
	for i, want := range []bool{false, false, false, true} {
		if got := q.Nodes[i].GivesUpFirst(now, 5*time.Second); got != want {
			t.Errorf("node %d gives up first: %v, want %v (deadline %v, %d turns of 5s)", i, got, want, q.Nodes[i].Owner.Deadline.Sub(now), q.Nodes[i].Turns)
		}
		if q.Nodes[i].GivesUpFirst(now, time.Second) {
			t.Errorf("node %d gives up before its turn at 1s a hold", i)
		}
	}
	if q.Nodes[3].GivesUpFirst(now, 0) {
		t.Error("a waiter gives up first on an unknown estimate")
	}
}

func queueOf(t *testing.T, c *zklock.Client) *zklock.Queue {
	t.Helper()
	q, err := c.Inspect(testCtx(t), "est")
	if err != nil {
		t.Fatal(err)
	}
	return q
}
