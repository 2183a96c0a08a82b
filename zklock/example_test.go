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

// servers stands for your ensemble, e.g. []string{"zk1:2181", "zk2:2181"}.
func servers() []string { return []string{zktest.Shared().Addr()} }

func ExampleClient_Acquire() {
	ctx := context.Background()
	c, err := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/acquire"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	lease, err := c.Acquire(ctx, "accounts/42")
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(context.WithoutCancel(ctx))

	fmt.Println("holding", lease.Resource(), "token > 0:", lease.Token() > 0)
	// Output: holding accounts/42 token > 0: true
}

func ExampleClient_TryAcquire() {
	ctx := context.Background()
	a, _ := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/try"))
	defer a.Close()
	b, _ := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/try"))
	defer b.Close()

	held, _ := a.Acquire(ctx, "nightly-report")
	_, err := b.TryAcquire(ctx, "nightly-report")
	fmt.Println("busy:", errors.Is(err, zklock.ErrLocked))

	held.Release(ctx)
	l, err := b.TryAcquire(ctx, "nightly-report")
	fmt.Println("free:", err == nil)
	l.Release(ctx)
	// Output:
	// busy: true
	// free: true
}

// A handler runs under the lease's context: it is cancelled if the lease
// is lost, and nested acquires of the same resource re-enter.
func ExampleLease_Context() {
	ctx := context.Background()
	c, _ := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/context"))
	defer c.Close()

	lease, _ := c.Acquire(ctx, "accounts/7")
	work := lease.Context(ctx)

	inner, err := c.Acquire(work, "accounts/7") // same caller: re-enters
	fmt.Println("re-entered:", err == nil, inner.Token() == lease.Token())
	inner.Release(ctx)

	lease.Release(ctx)
	<-work.Done()
	fmt.Println("work context ended:", errors.Is(context.Cause(work), zklock.ErrReleased))
	// Output:
	// re-entered: true true
	// work context ended: true
}

func ExampleClient_Acquire_maxWait() {
	ctx := context.Background()
	c, _ := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/maxwait"))
	defer c.Close()

	held, _ := c.Acquire(ctx, "slot")
	defer held.Release(ctx)
	_, err := c.Acquire(ctx, "slot", zklock.MaxWait(50*time.Millisecond))
	fmt.Println(errors.Is(err, zklock.ErrWaitTimeout))
	// Output: true
}

// Unit tests of code that takes a Locker can use the in-memory one.
func ExampleNewMemoryLocker() {
	var locker zklock.Locker = zklock.NewMemoryLocker()
	ctx := context.Background()
	l, _ := locker.Acquire(ctx, "accounts/1")
	_, err := locker.Acquire(ctx, "accounts/1", zklock.Try())
	fmt.Println(errors.Is(err, zklock.ErrLocked))
	l.Release(ctx)
	// Output: true
}
