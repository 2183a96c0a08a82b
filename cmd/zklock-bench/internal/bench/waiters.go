package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// WaiterMemory is what n waiting locks on one session cost the waiting
// process.
type WaiterMemory struct {
	Side    string `json:"side"`
	Waiters int    `json:"waiters"`
	// HeapPerWaiter is the growth of the live heap (HeapAlloc after a
	// garbage collection) divided by Waiters, in bytes.
	HeapPerWaiter float64 `json:"heap_bytes_per_waiter"`
	// StackPerWaiter is the growth of goroutine stacks (StackInuse)
	// divided by Waiters, in bytes.
	StackPerWaiter float64 `json:"stack_bytes_per_waiter"`
	// TotalPerWaiter is HeapPerWaiter + StackPerWaiter.
	TotalPerWaiter float64 `json:"total_bytes_per_waiter"`
	// GoroutinesPerWaiter is the growth of the goroutine count divided by
	// Waiters (1 is the caller's own goroutine).
	GoroutinesPerWaiter float64 `json:"goroutines_per_waiter"`
	// Enqueue is how long it took until every waiter was queued with its
	// watch set.
	Enqueue Duration `json:"enqueue"`
}

type memSnapshot struct {
	heap, stack uint64
	goroutines  int
}

func memNow() memSnapshot {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return memSnapshot{heap: m.HeapAlloc, stack: m.StackInuse, goroutines: runtime.NumGoroutine()}
}

// MeasureWaiters measures the memory of n waiting locks: a holder session
// of side holds n distinct resources; then n goroutines on one other
// session of side each wait for one of them. The growth of the live heap
// and of goroutine stacks between the idle waiting session and the moment
// every waiter is queued (its node exists, its watch is set) is divided by
// n. Both sessions live in this process, but the holder's share is the same
// before and after.
func MeasureWaiters(ctx context.Context, h *Harness, side Side, n int) (WaiterMemory, error) {
	return measureWaiters(ctx, h, side, n, profiles{})
}

// profiles says which profiles a measurement writes (prefixes; empty:
// none): see Config.MemProfile and Config.CPUProfile.
type profiles struct{ mem, cpu string }

// measureWaiters is MeasureWaiters; it also writes the profiles prof asks
// for: heap profiles of the baseline and of the queued waiters, a CPU
// profile of the enqueue.
func measureWaiters(ctx context.Context, h *Harness, side Side, n int, prof profiles) (WaiterMemory, error) {
	profile := prof.mem
	h.stopTimer()
	defer h.startTimer()
	root := h.newRoot("waiters")
	defer h.cleanup(root)
	res := resources("w", n)
	if err := side.prepare(h, root, res); err != nil {
		return WaiterMemory{}, err
	}
	holder, err := side.open(ctx, h, root)
	if err != nil {
		return WaiterMemory{}, err
	}
	defer holder.close()
	holderBase := h.baseWatches()
	if err := parallel(n, 256, func(i int) error {
		_, err := holder.lock(ctx, res[i])
		return err
	}); err != nil {
		return WaiterMemory{}, fmt.Errorf("bench: holding %d locks: %w", n, err)
	}
	// The holder's locks finish setting up (zklock watches a held node
	// after a short delay, on a goroutine that then ends) before the
	// baseline, or their goroutines would be counted against the waiters.
	if holderBase >= 0 {
		if err := h.settle(ctx, holderBase, int64(n*side.holderWatches)); err != nil {
			return WaiterMemory{}, err
		}
	}
	waiters, err := side.open(ctx, h, root)
	if err != nil {
		return WaiterMemory{}, err
	}
	defer waiters.close()
	// The runtime keeps the descriptor of every goroutine that ever ran
	// and reuses it: only the side measured first in a process would
	// otherwise pay for the n waiters' descriptors.
	warmGoroutines(n)
	if err := quiesceGoroutines(ctx); err != nil {
		return WaiterMemory{}, err
	}

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan error, n)
	baseNodes := h.znodeCount()
	baseWatches := h.baseWatches()
	before := memNow()
	if err := writeHeapProfile(profile, side.name, "-before"); err != nil {
		return WaiterMemory{}, err
	}
	stopCPU, err := startCPUProfile(prof.cpu, side.name)
	if err != nil {
		return WaiterMemory{}, err
	}
	defer stopCPU()
	start := time.Now()
	for i := range n {
		go func() {
			_, err := waiters.lock(wctx, res[i])
			results <- err
		}()
	}
	teardown := func() error {
		waiters.close()
		cancel()
		var unexpected error
		for range n {
			if err := <-results; err == nil {
				unexpected = fmt.Errorf("bench: a waiter acquired a lock held by another session")
			}
		}
		return unexpected
	}
	if err := h.waitNodes(ctx, side, root, res, baseNodes, int64(n)); err != nil {
		_ = teardown()
		return WaiterMemory{}, err
	}
	if err := h.settle(ctx, baseWatches, int64(n*side.watches)); err != nil {
		_ = teardown()
		return WaiterMemory{}, err
	}
	enqueue := time.Since(start)
	stopCPU()
	after := memNow()
	if err := writeHeapProfile(profile, side.name, ""); err != nil {
		_ = teardown()
		return WaiterMemory{}, err
	}
	if err := teardown(); err != nil {
		return WaiterMemory{}, err
	}
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) }
	heap, stack := per(after.heap, before.heap), per(after.stack, before.stack)
	return WaiterMemory{
		Side:                side.name,
		Waiters:             n,
		HeapPerWaiter:       heap,
		StackPerWaiter:      stack,
		TotalPerWaiter:      heap + stack,
		GoroutinesPerWaiter: float64(after.goroutines-before.goroutines) / float64(n),
		Enqueue:             Duration(enqueue),
	}, nil
}

// znodeCount returns the first server's znode count, or -1 without mntr.
func (h *Harness) znodeCount() int64 {
	m, err := mntr(h.servers[0])
	if err != nil {
		return -1
	}
	return m["zk_znode_count"]
}

// waitNodes waits until want more znodes exist than base. Without mntr,
// or once the count has not moved for two seconds (nodes of an earlier run
// still going away when base was read can keep it short of base+want for
// good), it checks that every resource's queue has two nodes.
func (h *Harness) waitNodes(ctx context.Context, side Side, root string, res []string, base, want int64) error {
	last, since := int64(-1), time.Now()
	for {
		n := h.znodeCount()
		if base >= 0 && n >= 0 && n-base >= want {
			return nil
		}
		if n != last {
			last, since = n, time.Now()
		}
		if base < 0 || n < 0 || time.Since(since) >= 2*time.Second {
			var missing atomic.Int64
			_ = parallel(len(res), 64, func(i int) error {
				kids, _, err := h.admin.Children(side.queuePath(root, res[i]))
				if err != nil || len(kids) < 2 {
					missing.Add(1)
				}
				return nil
			})
			if missing.Load() == 0 {
				return nil
			}
			since = time.Now() // list again after another stall
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// warmGoroutines starts n goroutines and waits until they have ended, so
// that the runtime holds n free goroutine descriptors.
func warmGoroutines(n int) {
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range n {
		wg.Go(func() { <-release })
	}
	close(release)
	wg.Wait()
}

// writeHeapProfile writes the heap profile, as of the last garbage
// collection, to prefix-side+suffix.pprof; with no prefix it does
// nothing.
func writeHeapProfile(prefix, side, suffix string) error {
	if prefix == "" {
		return nil
	}
	f, err := os.Create(prefix + "-" + side + suffix + ".pprof")
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// startCPUProfile starts a CPU profile to prefix-side-enqueue.pprof and
// returns what stops it (once; later calls do nothing); with no prefix it
// does nothing.
func startCPUProfile(prefix, side string) (stop func(), err error) {
	if prefix == "" {
		return func() {}, nil
	}
	f, err := os.Create(prefix + "-" + side + "-enqueue.pprof")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}, nil
}

// quiesceGoroutines waits until the goroutine count has not changed for
// 100ms (at most 5s), so a baseline does not include goroutines that are
// about to end.
func quiesceGoroutines(ctx context.Context) error {
	deadline := time.Now().Add(5 * time.Second)
	last, since := runtime.NumGoroutine(), time.Now()
	for time.Now().Before(deadline) && time.Since(since) < 100*time.Millisecond {
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
		if n := runtime.NumGoroutine(); n != last {
			last, since = n, time.Now()
		}
	}
	return nil
}
