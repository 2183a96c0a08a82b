package zklock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

func TestMemoryLocker(t *testing.T) {
	ctx := context.Background()
	m := zklock.NewMemoryLocker()
	l, err := m.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire(ctx, "a", zklock.Try()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("try: %v", err)
	}
	if _, err := m.Acquire(ctx, "a", zklock.MaxWait(20*time.Millisecond)); !errors.Is(err, zklock.ErrWaitTimeout) {
		t.Fatalf("max wait: %v", err)
	}
	if h, w := m.Holders("a"); h != 1 || w != 0 {
		t.Fatalf("holders %d waiting %d", h, w)
	}
	// FIFO order.
	var order []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := m.Acquire(ctx, "a")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			l.Release(ctx)
		}()
		for {
			if _, w := m.Holders("a"); w == i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	inner, err := m.Acquire(l.Context(ctx), "a")
	if err != nil || inner.Token() != l.Token() {
		t.Fatalf("re-entry: %v", err)
	}
	inner.Release(ctx)
	l.Release(ctx)
	wg.Wait()
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v, want FIFO", order)
		}
	}
	// Readers share, writers wait; loss is signalled.
	r1, _ := m.Acquire(ctx, "rw", zklock.WithMode(zklock.Read))
	r2, err := m.Acquire(ctx, "rw", zklock.WithMode(zklock.Read), zklock.Try())
	if err != nil {
		t.Fatalf("second reader: %v", err)
	}
	if _, err := m.Acquire(ctx, "rw", zklock.WithMode(zklock.Write), zklock.Try()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("writer with readers: %v", err)
	}
	m.Expire()
	<-r1.Done()
	<-r2.Done()
	if !errors.Is(r1.Err(), zklock.ErrSessionExpired) || !errors.Is(r2.Release(ctx), zklock.ErrLeaseLost) {
		t.Fatalf("loss: %v", r1.Err())
	}
	if h, w := m.Holders("rw"); h != 0 || w != 0 {
		t.Fatalf("after expire: %d held %d waiting", h, w)
	}
	if _, err := m.Acquire(ctx, ""); !errors.Is(err, zklock.ErrInvalidResource) {
		t.Fatalf("empty name: %v", err)
	}
}
