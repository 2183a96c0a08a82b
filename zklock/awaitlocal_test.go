package zklock

import (
	"context"
	"testing"
	"time"
)

// awaitLocal hands the lock on only once the lease of the node ahead has
// ended, so its holder is told before the next holds. The window between
// the node being known gone and its lease ending is too short to hit from
// outside (TestIntegration_LocalHolderToldFirst), so the contract is
// checked here, on the waiter alone.
func TestAwaitLocalWaitsForTheLeaseToEnd(t *testing.T) {
	c := &Client{closeCh: make(chan struct{}), nodes: map[string]*nodeEntry{}}
	w := &waiter{acquisition: &acquisition{}, c: c, park: &parked{}, n: &node{entry: &nodeEntry{gone: make(chan struct{})}, ownWatched: true}}
	ctx := context.Background()
	// awaitLocal, then the parks and wakes that follow, as an acquire
	// and its steps run them (only the awaited channel can end a park
	// here): held says whether the waiter goes on from what lay between
	// pred and it (the hand-off) instead of listing the queue.
	awaitLocal := func(pred *nodeEntry) (held bool, err error) {
		p, err := w.awaitLocal(ctx, pred, nil)
		for err == nil && p != nil {
			<-p.done
			p, err = w.woken(ctx, wokeFired)
		}
		return w.n.wait.keep, err
	}

	// A node ahead that never held: not a hand-off.
	never := &nodeEntry{gone: make(chan struct{})}
	never.watched.Store(true) // its waiter watches it: awaitLocal adds no watch
	close(never.gone)
	if held, err := awaitLocal(never); held || err != nil {
		t.Fatalf("after a node that never held: held %v, err %v; want false, nil", held, err)
	}

	st := newLeaseState(nil, 1, []string{"r"}, Exclusive)
	pred := &nodeEntry{gone: make(chan struct{}), st: st}
	type result struct {
		held bool
		err  error
	}
	got := make(chan result, 1)
	go func() {
		held, err := awaitLocal(pred)
		got <- result{held, err}
	}()
	close(pred.gone) // the node is known gone, its lease not yet ended
	select {
	case r := <-got:
		t.Fatalf("awaitLocal returned %+v before the lease ahead ended", r)
	case <-time.After(50 * time.Millisecond):
	}
	derived, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := &Lease{st: st}
	dctx := l.Context(derived)
	st.end(&LostError{Resource: "r", Reason: LossNodeDeleted})
	r := <-got
	if !r.held || r.err != nil {
		t.Fatalf("after the lease ahead ended: held %v, err %v; want true, nil", r.held, r.err)
	}
	if dctx.Err() == nil {
		t.Fatal("the lost lease's derived context was not cancelled before the next holder went on")
	}
}
