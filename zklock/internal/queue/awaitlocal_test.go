package queue

import (
	"context"
	"testing"
	"time"
)

// testHolder is a lease whose end the test decides.
type testHolder struct{ ended chan struct{} }

func (h *testHolder) Lose(Loss)              {}
func (h *testHolder) Released()              {}
func (h *testHolder) RevokeRequested()       {}
func (h *testHolder) Ended() <-chan struct{} { return h.ended }

// awaitLocal hands the lock on only once the lease of the node ahead has
// ended (Holder.Ended), so its holder is told before the next holds. The
// window between the node being known gone and its lease ending is too
// short to hit from outside (TestIntegration_LocalHolderToldFirst in
// package zklock), so the contract is checked here, on the waiter alone;
// package zklock's TestLeaseEndTellsBeforeEnded checks that a lease ends
// Ended only once its holder has been told.
func TestAwaitLocalWaitsForTheLeaseToEnd(t *testing.T) {
	q := &Queues{nodes: registry{}}
	w := &Waiter{q: q, req: &Request{}, park: &Park{}, n: &node{entry: &Node{gone: make(chan struct{})}, ownWatched: true}}
	ctx := context.Background()
	// awaitLocal, then the parks and wakes that follow, as an acquire
	// and its steps run them (only the awaited channel can end a park
	// here): held says whether the waiter goes on from what lay between
	// pred and it (the hand-off) instead of listing the queue.
	awaitLocal := func(pred *Node) (held bool, err error) {
		p, err := w.awaitLocal(ctx, pred, nil)
		for err == nil && p != nil {
			<-p.done
			p, err = w.woken(ctx, WokeFired)
		}
		return w.n.wait.keep, err
	}

	// A node ahead that never held: not a hand-off.
	never := &Node{gone: make(chan struct{})}
	never.watched.Store(true) // its waiter watches it: awaitLocal adds no watch
	close(never.gone)
	if held, err := awaitLocal(never); held || err != nil {
		t.Fatalf("after a node that never held: held %v, err %v; want false, nil", held, err)
	}

	h := &testHolder{ended: make(chan struct{})}
	pred := &Node{gone: make(chan struct{}), holder: h}
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
	close(h.ended)
	r := <-got
	if !r.held || r.err != nil {
		t.Fatalf("after the lease ahead ended: held %v, err %v; want true, nil", r.held, r.err)
	}
}
