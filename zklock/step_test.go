package zklock

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/queue"
)

// The acquire shell's driver (acquireWith, runStep, the park) with a
// stepping backend of the test's own: no ZooKeeper here, only the order
// of steps and parks, the bounds on waiting for a step, and what a step
// given up does. Each part is taken in steps the test scripts (scriptStep).

// scriptStep is one step of scriptBackend's parts: it may block until
// release, then parks on park (if any), fails with err, or holds.
type scriptStep struct {
	release chan struct{} // nil: at once
	park    *scriptPark
	err     error
}

// scriptPark parks until done (the awaited thing), gone (the node's end)
// or end (the context's end) closes, as a queue.Park does.
type scriptPark struct {
	done, gone, end <-chan struct{}
}

func (p *scriptPark) Wait() queue.Wake {
	select {
	case <-p.done:
		return queue.WokeFired
	case <-p.gone:
		return queue.WokeGone
	case <-p.end:
		return queue.WokeEnded
	}
}

type scriptBackend struct {
	runners   stepRunners
	bound     time.Duration
	script    chan scriptStep // the next step of the part under way
	woke      chan queue.Wake // what each step after a park was told
	abandoned chan error      // a parked attempt given up
}

func newScriptBackend(bound time.Duration) *scriptBackend {
	return &scriptBackend{bound: bound, script: make(chan scriptStep, 16),
		woke: make(chan queue.Wake, 16), abandoned: make(chan error, 1)}
}

func (b *scriptBackend) key(r string, raw bool) (string, error) { return "/q/" + r, nil }
func (b *scriptBackend) check(acquireConfig) error              { return nil }
func (b *scriptBackend) answerBound() time.Duration             { return b.bound }
func (b *scriptBackend) annotate(err error) error               { return err }
func (b *scriptBackend) acquired()                              {}
func (b *scriptBackend) observe(context.Context, Event)         {}
func (b *scriptBackend) releaseHolds(context.Context, *leaseState) error {
	return nil
}
func (b *scriptBackend) dropHolds(*leaseState)    {}
func (b *scriptBackend) abandonHolds(*leaseState) {}
func (b *scriptBackend) steps() *stepRunners      { return &b.runners }
func (b *scriptBackend) takeParts(a *acquisition) partTaker {
	return &scriptParts{b: b, a: a}
}

type scriptParts struct {
	b      *scriptBackend
	a      *acquisition
	parked bool
}

func (p *scriptParts) next(woke queue.Wake) (parker, target, int64, error) {
	if p.parked {
		p.b.woke <- woke
	}
	s := <-p.b.script
	if s.release != nil {
		<-s.release // a request in flight, which no context interrupts
	}
	t := p.a.ts[0]
	switch {
	case s.park != nil:
		p.parked = true
		return s.park, target{}, 0, nil
	case s.err != nil:
		return nil, t, 7, s.err
	}
	p.a.lease().addHold(&heldNode{resource: t.resource, parent: t.parent, path: t.parent + "/n", sessionID: 7})
	return nil, target{}, 0, nil
}

func (p *scriptParts) waiting() (target, int64) { return p.a.ts[0], 7 }
func (p *scriptParts) quick(queue.Wake) bool    { return false }
func (p *scriptParts) abandon(err error)        { p.b.abandoned <- err }

// A step that parks hands the wait to the acquiring goroutine; what ends
// the park is what the next step is told, and the acquire holds when a
// step says so.
func TestShellParksBetweenSteps(t *testing.T) {
	b := newScriptBackend(time.Second)
	done := make(chan struct{})
	gone := make(chan struct{})
	b.script <- scriptStep{park: &scriptPark{done: done, gone: gone, end: context.Background().Done()}}
	b.script <- scriptStep{}
	type result struct {
		l   *Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := acquireWith(context.Background(), b, []string{"r"}, acquireConfig{})
		got <- result{l, err}
	}()
	select {
	case r := <-got:
		t.Fatalf("acquire returned %+v while parked", r)
	case <-time.After(50 * time.Millisecond):
	}
	close(done)
	r := <-got
	if r.err != nil || r.l == nil || r.l.Path() != "/q/r/n" {
		t.Fatalf("acquire = %+v", r)
	}
	if w := <-b.woke; w != queue.WokeFired {
		t.Fatalf("the step after the park was told %v, want WokeFired", w)
	}
}

// A context that ends while a step's request is in flight ends the
// acquire within the on-the-spot delete's bound, not when the request
// returns; the step, given up, then cleans up after itself.
func TestShellGivesUpAStep(t *testing.T) {
	const bound = 100 * time.Millisecond
	b := newScriptBackend(bound)
	release := make(chan struct{})
	gone := make(chan struct{})
	b.script <- scriptStep{release: release, park: &scriptPark{done: make(chan struct{}), gone: gone}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := acquireWith(ctx, b, []string{"r"}, acquireConfig{})
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire = %v, want the context's deadline", err)
	}
	if took < 50*time.Millisecond+bound/2 || took > 10*time.Second {
		t.Errorf("acquire returned after %v; want the deadline plus about %v", took, bound)
	}
	select {
	case err := <-b.abandoned:
		t.Fatalf("abandoned (%v) before the step's request returned", err)
	default:
	}
	close(release) // the request returns; the step parks, with nobody to wait
	select {
	case err := <-b.abandoned:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("abandoned with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the step given up did not clean up")
	}
}

// The bound runs once, from the context's end: a step waited for that
// parks again within it (a park that needs no request) does not give the
// step after it a bound of its own. Before, such an acquire returned two
// bounds after its deadline (the long run of 28 November on 4a93c17).
func TestShellBoundsAllStepsAfterTheContextEndsOnce(t *testing.T) {
	const bound = time.Second
	b := newScriptBackend(bound)
	release1, release2 := make(chan struct{}), make(chan struct{})
	defer close(release2)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// The first step's request is in flight when the context ends; it
	// returns 0.9 bounds later and parks again, the park over at once.
	b.script <- scriptStep{release: release1, park: &scriptPark{done: make(chan struct{}), end: ctx.Done()}}
	// The second step's request does not return in time.
	b.script <- scriptStep{release: release2, err: errors.New("late")}
	go func() {
		<-ctx.Done()
		time.Sleep(bound * 9 / 10)
		close(release1)
	}()
	start := time.Now()
	_, err := acquireWith(ctx, b, []string{"r"}, acquireConfig{})
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire = %v, want the context's deadline", err)
	}
	if w := <-b.woke; w != queue.WokeEnded {
		t.Fatalf("the second step was told %v, want WokeEnded", w)
	}
	if took > 50*time.Millisecond+bound*3/2 {
		t.Errorf("acquire returned %v after it began; want the 50 ms deadline plus about one bound (%v)", took, bound)
	}
}

// A step that ends within the bound after the context's end is waited for:
// its outcome, a failure here, is the acquire's.
func TestShellWaitsForAStepWithinTheBound(t *testing.T) {
	b := newScriptBackend(5 * time.Second)
	release := make(chan struct{})
	errBoom := errors.New("boom")
	b.script <- scriptStep{release: release, err: errBoom}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := acquireWith(ctx, b, []string{"r"}, acquireConfig{})
		got <- err
	}()
	cancel()
	time.Sleep(20 * time.Millisecond)
	close(release)
	if err := <-got; !errors.Is(err, errBoom) {
		t.Fatalf("acquire = %v, want the step's own failure", err)
	}
}

// At most limit runners run at once; the steps queued meanwhile all run,
// in the order they came.
func TestStepRunnersBound(t *testing.T) {
	// run starts n steps, each waiting for release, with limit runners.
	run := func(limit, n int, hold bool) (most int32, order []int) {
		release := make(chan struct{})
		if !hold {
			close(release)
		}
		r := &stepRunners{limit: limit}
		var running, peak atomic.Int32
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			b := &funcBackend{run: func() {
				defer wg.Done()
				c := running.Add(1)
				for m := peak.Load(); c > m && !peak.CompareAndSwap(m, c); m = peak.Load() {
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				<-release
				running.Add(-1)
			}}
			r.start(&stepRun{a: &acquisition{b: b, parts: b, started: true}, done: make(chan struct{})})
		}
		if hold {
			for peak.Load() < int32(limit) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond) // no fourth one starts
			close(release)
		}
		wg.Wait()
		return peak.Load(), order
	}
	if most, order := run(3, 10, true); most != 3 || len(order) != 10 {
		t.Fatalf("limit 3: %d at once, %d of 10 ran", most, len(order))
	}
	_, order := run(1, 10, false)
	for i, v := range order {
		if v != i {
			t.Fatalf("limit 1: steps ran in order %v", order)
		}
	}
}

// funcBackend is a stepper whose every step runs run and then fails.
type funcBackend struct {
	scriptBackend
	run func()
}

func (b *funcBackend) next(queue.Wake) (parker, target, int64, error) {
	b.run()
	return nil, target{}, 0, errors.New("done")
}
func (b *funcBackend) waiting() (target, int64) { return target{}, 0 }
func (b *funcBackend) quick(queue.Wake) bool    { return false }
func (b *funcBackend) abandon(error)            {}
