package zklock

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// A waiting acquire costs its caller's goroutine, parked. Go grows a
// goroutine's stack on demand but shrinks it, at a garbage collection,
// only to half and only while less than a quarter is in use: a stack that
// once went deep (a create, a listing, go-zookeeper's calls, under the
// acquire's frames) stays at 4 KiB or more however shallow the wait. So
// the Client's acquiring goroutine does none of that: an acquire runs in
// steps, each on a goroutine of the Client's (stepRunners), and the
// acquiring goroutine only parks, with the acquire shell's few frames on
// its stack: on the step, and between two steps on what the step said to
// wait for (a watch on the node ahead, a node of this client ahead going,
// a lease ending). A waiting lock then costs the smallest stack a
// goroutine can have, 2 KiB, where the caller's own frames leave room.
//
// A step makes its requests on its own goroutine, one after another (the
// runner argument of queue.Waiter.Step); the acquiring goroutine stops
// waiting for it when the acquire's context ends (runStep).

// A step's states: running until it ends (done) or the acquiring
// goroutine stops waiting for it (abandoned).
const (
	stepRunning int32 = iota
	stepDone
	stepAbandoned
)

// stepRun is one step of an acquire.
type stepRun struct {
	a     *acquisition
	state atomic.Int32
	done  chan struct{}
	next  *stepRun // in stepRunners' queue
}

// runStep runs the acquire's next step (acquisition.step) and waits for
// it; it reports whether the acquire waits for something now (a.parked).
// A backend that does not wait in steps runs its one step right here.
// Otherwise the step runs on one of the backend's runners, and if a.ctx
// ends first the step ends at its next request, deleting its node as a
// failed acquire does, and runStep waits for it as long as the on-the-spot
// delete of a failed acquire may take (giveUp).
func (a *acquisition) runStep() bool {
	s, ok := a.b.(stepper)
	if !ok {
		a.step()
		return false
	}
	if a.parked != nil && a.ctx.Err() == nil && a.parts.quick(a.woke) {
		// Most likely the lock is ours now, with no request: this
		// goroutine is no longer a waiting one, and may take the step
		// itself. Should the step make a request after all, it makes it
		// as the acquiring goroutine does outside steps (call), bounded
		// by the context. Not once the context has ended: the failed
		// step's on-the-spot delete is then bounded by giveUp.
		a.inline = true
		a.step()
		a.inline = false
		return a.parked != nil
	}
	r := &stepRun{a: a, done: make(chan struct{})}
	s.steps().start(r)
	select {
	case <-r.done:
	case <-a.ctx.Done():
		if !r.giveUp() {
			return false
		}
	}
	if a.parked != nil {
		a.noteWaiting()
	}
	return a.parked != nil
}

// noteWaiting records the part a parked acquire waits for. Not inlined:
// the target it copies would widen runStep's frame, which is on the
// acquiring goroutine's stack while it waits for a step (see park).
//
//go:noinline
func (a *acquisition) noteWaiting() {
	t, sid := a.parts.waiting()
	a.at, a.atSid = int32(slices.Index(a.ts, t)), sid
}

// giveUp waits for a step whose acquire's context ended as long as the
// on-the-spot delete of a failed acquire may take (removeNode: a try's
// deadline, or the backend's answer bound). It reports false if it gave
// the step up: the step finishes in the background, the acquisition is
// its (see acquisition.abandoned), and the acquire fails with the
// context's error.
func (r *stepRun) giveUp() bool {
	a := r.a
	deadline := a.deleteBy()
	if deadline.IsZero() {
		// Once per acquire, from when its context ended: a step waited
		// for may park again (a park that needs no request), and the
		// step after it must not get a bound of its own (the long run of
		// 28 November on 4a93c17: an acquire returned 2,009 ms after its
		// deadline, with a bound of 1 s).
		if a.spotBy.IsZero() {
			a.spotBy = time.Now().Add(a.b.answerBound())
		}
		deadline = a.spotBy
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-r.done:
		return true
	case <-t.C:
	}
	if !r.state.CompareAndSwap(stepRunning, stepAbandoned) {
		<-r.done
		return true
	}
	a.gaveUp.Store(true)
	return false
}

func (r *stepRun) run() {
	a := r.a
	a.step()
	if !r.state.CompareAndSwap(stepRunning, stepDone) {
		a.abandoned()
	}
	close(r.done)
}

// maxStepRunners bounds the goroutines that run a client's steps at once.
// A step's goroutine grows its stack to 4 or 8 KiB (go-zookeeper's calls,
// a listing's parse); a new goroutine for every step would leave its first,
// smallest stack among those of the parked acquiring goroutines, and the
// runtime keeps a block of stacks while any of them is in use: 10,000
// parked acquires cost 4 KiB of stack each instead of 2. Runners take the
// steps queued meanwhile, in order, and end when there are none: a burst
// of acquires starts at most this many goroutines, whose stacks go back
// whole once they end. A step never waits for another that is queued (it
// parks instead), so the bound cannot deadlock; it only delays steps in a
// burst. Too low a bound costs a burst its pipelining: with 1,024, 10,000
// acquires on one session took 1.6-1.9x zk.Lock's time to enqueue, with
// 4,096 1.35-1.5x (noisy; medians of 3-5 rounds), at the same 2.2 KiB of
// stack per waiting acquire.
const maxStepRunners = 4096

// stepRunners runs a client's steps (see maxStepRunners).
type stepRunners struct {
	limit      int          // 0: maxStepRunners
	spawn      func(func()) // starts a runner; nil: a goroutine of its own
	mu         sync.Mutex
	running    int
	head, tail *stepRun
}

// start runs s on a runner: a new one, or, with the limit running, the
// first to be free.
func (r *stepRunners) start(s *stepRun) {
	limit := r.limit
	if limit == 0 {
		limit = maxStepRunners
	}
	r.mu.Lock()
	if r.running < limit {
		r.running++
		r.mu.Unlock()
		if r.spawn != nil {
			r.spawn(func() { r.run(s) })
		} else {
			go r.run(s)
		}
		return
	}
	if r.tail == nil {
		r.head = s
	} else {
		r.tail.next = s
	}
	r.tail = s
	r.mu.Unlock()
}

// run runs s, then the queued steps, until there are none.
func (r *stepRunners) run(s *stepRun) {
	for s != nil {
		s.run()
		r.mu.Lock()
		if s = r.head; s != nil {
			r.head, s.next = s.next, nil
			if r.head == nil {
				r.tail = nil
			}
		} else {
			r.running--
		}
		r.mu.Unlock()
	}
}
