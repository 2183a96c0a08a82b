package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// connect is Connect for the examples: every client of one example shares
// its root.
func connect(root string, opts ...zklock.Option) *zklock.Client {
	c, err := zklock.Connect(context.Background(), servers(), append([]zklock.Option{zklock.WithRoot(root)}, opts...)...)
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// Readers share a read/write lock; a writer waits for every reader, and
// readers queued behind a writer wait for it.
func ExampleClient_Acquire_readWrite() {
	ctx := context.Background()
	a, b, w := connect("/example/rw"), connect("/example/rw"), connect("/example/rw")
	defer a.Close()
	defer b.Close()
	defer w.Close()

	r1, _ := a.Acquire(ctx, "reports", zklock.Read)
	r2, err := b.Acquire(ctx, "reports", zklock.Read)
	fmt.Println("two readers at once:", err == nil)

	_, err = w.Acquire(ctx, "reports", zklock.Write, zklock.Try())
	fmt.Println("writer while they read:", errors.Is(err, zklock.ErrLocked))

	r1.Release(ctx)
	r2.Release(ctx)
	wl, err := w.Acquire(ctx, "reports", zklock.Write)
	fmt.Println("writer once they are done:", err == nil, wl.Mode())
	_, err = a.Acquire(ctx, "reports", zklock.Read, zklock.Try())
	fmt.Println("reader while it writes:", errors.Is(err, zklock.ErrLocked))
	wl.Release(ctx)
	// Output:
	// two readers at once: true
	// writer while they read: true
	// writer once they are done: true write
	// reader while it writes: true
}

// A semaphore lets Limit(n) holders in at once. It is work-conserving:
// whichever holder leaves, the next waiter takes its slot.
func ExampleLimit() {
	ctx := context.Background()
	var cs []*zklock.Client
	for range 3 {
		c := connect("/example/semaphore")
		defer c.Close()
		cs = append(cs, c)
	}
	first, _ := cs[0].Acquire(ctx, "render-farm", zklock.Limit(2))
	second, _ := cs[1].Acquire(ctx, "render-farm", zklock.Limit(2))
	_, err := cs[2].Acquire(ctx, "render-farm", zklock.Limit(2), zklock.Try())
	fmt.Println("third while two hold:", errors.Is(err, zklock.ErrLocked))

	got := make(chan *zklock.Lease)
	go func() {
		l, err := cs[2].Acquire(ctx, "render-farm", zklock.Limit(2))
		if err != nil {
			log.Fatal(err)
		}
		got <- l
	}()
	for q, _ := cs[0].Inspect(ctx, "render-farm"); len(q.Nodes) < 3; q, _ = cs[0].Inspect(ctx, "render-farm") {
		time.Sleep(10 * time.Millisecond) // let it queue
	}
	second.Release(ctx) // the later holder leaves, not the first
	third := <-got
	fmt.Println("third holds beside the first:", first.Err() == nil && third.Err() == nil)

	q, _ := cs[0].Inspect(ctx, "render-farm", zklock.Limit(2))
	fmt.Println("holders:", len(q.Holders()))
	first.Release(ctx)
	third.Release(ctx)
	// Output:
	// third while two hold: true
	// third holds beside the first: true
	// holders: 2
}

// Downgrade turns a write lease into a read lease with no moment in which
// the resource is unlocked: other readers may join, writers still wait.
func ExampleLease_Downgrade() {
	ctx := context.Background()
	c, other := connect("/example/downgrade"), connect("/example/downgrade")
	defer c.Close()
	defer other.Close()

	w, _ := c.Acquire(ctx, "config", zklock.Write)
	// ... write the new config ...
	r, err := w.Downgrade(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("now:", r.Mode(), "; the write lease:", errors.Is(w.Err(), zklock.ErrReleased))

	reader, err := other.Acquire(ctx, "config", zklock.Read, zklock.Try())
	fmt.Println("another reader joins:", err == nil)
	_, err = other.Acquire(ctx, "config", zklock.Write, zklock.Try())
	fmt.Println("a writer waits:", errors.Is(err, zklock.ErrLocked))
	reader.Release(ctx)
	r.Release(ctx)
	// Output:
	// now: read ; the write lease: true
	// another reader joins: true
	// a writer waits: true
}

// RequestRelease asks the holders of a resource to let go, as Curator's
// Revoker does; each holder sees it on RevokeRequested and decides.
func ExampleClient_RequestRelease() {
	ctx := context.Background()
	holder, asker := connect("/example/revoke"), connect("/example/revoke")
	defer holder.Close()
	defer asker.Close()

	lease, _ := holder.Acquire(ctx, "batch/nightly")
	released := make(chan struct{})
	go func() {
		<-lease.RevokeRequested() // e.g. between two batches of work
		lease.Release(ctx)
		close(released)
	}()

	n, err := asker.RequestRelease(ctx, "batch/nightly")
	fmt.Println("asked", n, "holder", err)
	<-released
	l, err := asker.Acquire(ctx, "batch/nightly", zklock.MaxWait(10*time.Second))
	fmt.Println("the asker holds:", err == nil)
	l.Release(ctx)
	// Output:
	// asked 1 holder <nil>
	// the asker holds: true
}

// AcquireAll takes several resources all or nothing, in one canonical
// order, so a transfer a→b and a transfer b→a cannot deadlock.
func ExampleClient_AcquireAll() {
	ctx := context.Background()
	c, other := connect("/example/all"), connect("/example/all")
	defer c.Close()
	defer other.Close()

	done := make(chan error, 2)
	for _, pair := range [][]string{{"accounts/a", "accounts/b"}, {"accounts/b", "accounts/a"}} {
		go func() {
			for range 20 {
				l, err := c.AcquireAll(ctx, pair, zklock.MaxWait(30*time.Second))
				if err != nil {
					done <- err
					return
				}
				l.Release(ctx)
			}
			done <- nil
		}()
	}
	fmt.Println("a→b and b→a, 20 times each:", <-done, <-done)

	l, _ := c.AcquireAll(ctx, []string{"accounts/b", "accounts/a"})
	fmt.Println("one lease, nodes:", len(l.Parts()))
	_, err := other.TryAcquire(ctx, "accounts/b")
	fmt.Println("each part is held:", errors.Is(err, zklock.ErrLocked))
	l.Release(ctx)
	free, err := other.TryAcquire(ctx, "accounts/b")
	fmt.Println("all released together:", err == nil)
	free.Release(ctx)
	// Output:
	// a→b and b→a, 20 times each: <nil> <nil>
	// one lease, nodes: 2
	// each part is held: true
	// all released together: true
}

// Lead runs a function while this process leads, and campaigns again. A
// leader that loses its session (here its connection is cut by a proxy,
// and ZooKeeper expires it) has its function's context cancelled before
// another candidate is elected; that one then leads.
func ExampleClient_Lead() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	cut, err := zktest.NewProxy(servers()[0]) // between candidate a and ZooKeeper
	if err != nil {
		log.Fatal(err)
	}
	defer cut.Close()
	a, err := zklock.Connect(ctx, []string{cut.Addr()}, zklock.WithRoot("/example/lead"), zklock.WithSessionTimeout(2*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b := connect("/example/lead", zklock.WithSessionTimeout(2*time.Second))
	defer b.Close()

	events := make(chan string, 4)
	scheduler := func(name string) func(context.Context) error {
		return func(ctx context.Context) error {
			events <- name + " leads"
			<-ctx.Done() // run the schedule until the leadership ends
			if errors.Is(context.Cause(ctx), zklock.ErrLeaseLost) {
				events <- name + " lost its leadership and stopped"
			}
			return nil
		}
	}
	go a.Lead(ctx, "scheduler", []byte("a"), scheduler("a"))
	fmt.Println(<-events)
	go b.Lead(ctx, "scheduler", []byte("b"), scheduler("b"))
	obs, _ := b.Observe(ctx, "scheduler")
	for l := range obs {
		if l.Path != "" && len(l.Value) > 0 {
			fmt.Printf("observed leader: %s\n", l.Value)
			break
		}
	}

	cut.Blackhole(true) // a's session goes quiet and expires
	fmt.Println(<-events)
	fmt.Println(<-events)
	leader, _ := b.Leader(ctx, "scheduler")
	fmt.Printf("leader now: %s\n", leader.Value)
	// Output:
	// a leads
	// observed leader: a
	// a lost its leadership and stopped
	// b leads
	// leader now: b
}

// Proclaim changes the leader's value without a new election; observers
// see it.
func ExampleLease_Proclaim() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	c := connect("/example/proclaim")
	defer c.Close()

	l, _ := c.Campaign(ctx, "primary", []byte("10.0.0.1:5432"))
	obs, _ := c.Observe(ctx, "primary")
	fmt.Printf("%s\n", (<-obs).Value)
	_ = l.Proclaim(ctx, []byte("10.0.0.2:5432"))
	fmt.Printf("%s\n", (<-obs).Value)
	l.Release(ctx)
	// Output:
	// 10.0.0.1:5432
	// 10.0.0.2:5432
}
