package zklock_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Waiters deep in one queue keep nothing of their snapshot of it while they
// wait: the live heap grows with the queue's length, not with its square
// (1,000 waiters each keeping the names ahead of it would keep ~500,000).
// Then the queue drains in order, one holder at a time.
func TestIntegration_DeepQueueMemory(t *testing.T) {
	const n = 1000
	root := zktest.UniqueRoot(t)
	holder := newClient(t, root)
	waiters := newClient(t, root)
	ctx := testCtx(t)
	queue, err := holder.QueuePath("deep")
	if err != nil {
		t.Fatal(err)
	}
	first, err := holder.Acquire(ctx, "deep")
	if err != nil {
		t.Fatal(err)
	}
	// Each waiter watches the node just ahead of it: n paths in the queue.
	watched := func() int {
		wchp, err := zktest.Shared().FourLetter("wchp")
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, line := range strings.Split(wchp, "\n") {
			if strings.HasPrefix(line, queue+"/") {
				k++
			}
		}
		return k
	}

	var (
		wg   sync.WaitGroup
		o    overlap
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	// queueUp adds k waiters and returns the live heap once every waiter
	// so far has set its watch.
	queued := 0
	queueUp := func(k int) uint64 {
		for range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := waiters.Acquire(ctx, "deep")
				if err != nil {
					fail(err)
					return
				}
				o.enter()
				time.Sleep(100 * time.Microsecond)
				o.leave()
				if err := l.Release(context.WithoutCancel(ctx)); err != nil {
					fail(err)
				}
			}()
		}
		queued += k
		deadline := time.Now().Add(45 * time.Second)
		for watched() < queued {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d watches set", watched(), queued)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return liveHeap()
	}
	// The growth of the live heap from half the queue to all of it: what
	// the process holds besides (another test's client winding down, say)
	// is in both figures. A waiter that kept the names ahead of it would
	// cost ~75 KB here (the mean of 500 to 1,000 names), not ~4 KB.
	half := queueUp(n / 2)
	full := queueUp(n - n/2)
	perWaiter := (float64(full) - float64(half)) / float64(n-n/2)
	t.Logf("live heap: %.0f B per waiter from %d to %d deep", perWaiter, n/2, n)
	if perWaiter > 8<<10 {
		t.Errorf("%.0f B of live heap per waiter from %d to %d deep, want at most 8 KiB", perWaiter, n/2, n)
	}

	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(errs) > 0 || o.entries != n || o.violations != 0 {
		t.Fatalf("drain: %d acquired of %d, %d overlaps, errors %v", o.entries, n, o.violations, errs)
	}
}
