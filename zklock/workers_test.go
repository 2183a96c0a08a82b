package zklock

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"
)

// workerGoroutines counts the goroutines running workers.loop.
func workerGoroutines() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Count(buf, []byte("zklock.(*workers).loop("))
}

// settledWorkers waits until at most want worker goroutines are left, and
// returns the last count.
func settledWorkers(want int) int {
	n := workerGoroutines()
	for deadline := time.Now().Add(5 * time.Second); n > want && time.Now().Before(deadline); n = workerGoroutines() {
		time.Sleep(5 * time.Millisecond)
	}
	return n
}

func TestWorkersReuseIdleAndExitOnQuit(t *testing.T) {
	base := settledWorkers(0) // other tests' clients may still be closing
	quit := make(chan struct{})
	w := newWorkers(quit)

	// One job at a time: a single worker does them all.
	for range 100 {
		done := make(chan struct{})
		w.run(func() { close(done) })
		<-done
		for w.idle.Load() != 1 { // the worker is back waiting
			runtime.Gosched()
		}
	}
	if n := workerGoroutines() - base; n != 1 {
		t.Fatalf("%d workers after 100 sequential jobs, want 1", n)
	}

	// Jobs that block: run never blocks, each gets its own goroutine, and
	// no more than maxIdleWorkers stay once they finish.
	const busy = maxIdleWorkers + 50
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(busy)
	for range busy {
		w.run(func() { started.Done(); <-release })
	}
	started.Wait()
	if n := w.idle.Load(); n != 0 {
		t.Fatalf("%d idle workers while all are busy", n)
	}
	close(release)
	if n := settledWorkers(base+maxIdleWorkers) - base; n != maxIdleWorkers {
		t.Fatalf("%d workers once %d blocking jobs finished, want %d (the idle cap)", n, busy, maxIdleWorkers)
	}

	close(quit)
	if n := settledWorkers(base) - base; n != 0 {
		t.Fatalf("%d workers left after quit", n)
	}
	if n := w.idle.Load(); n != 0 {
		t.Fatalf("idle count %d after quit", n)
	}
}
