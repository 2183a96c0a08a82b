package zklock

import "sync/atomic"

// maxIdleWorkers bounds the goroutines a Client keeps waiting for the next
// call (each keeps its grown stack: a few KiB).
const maxIdleWorkers = 128

// workers runs go-zookeeper requests, which block and take no context, off
// their callers' goroutines (see call). A worker that has finished waits for
// the next request instead of exiting: a fresh goroutine starts on a small
// stack and grows it in every go-zookeeper request (measured before this
// pool: 4% of the client's CPU in a 32-contender run went to copying
// stacks). Idle workers exit when quit closes (Client.Close).
type workers struct {
	jobs chan func() // unbuffered: a send succeeds only to an idle worker
	idle atomic.Int32
	quit <-chan struct{}
}

func newWorkers(quit <-chan struct{}) *workers {
	return &workers{jobs: make(chan func()), quit: quit}
}

// run runs f on an idle worker, or on a new one if none is idle. It never
// blocks.
func (w *workers) run(f func()) {
	select {
	case w.jobs <- f:
	default:
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	for {
		f()
		f = nil // let it be collected while idle
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		select {
		case f = <-w.jobs:
			w.idle.Add(-1)
		case <-w.quit:
			w.idle.Add(-1)
			return
		}
	}
}
