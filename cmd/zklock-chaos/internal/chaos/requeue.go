package chaos

import (
	"context"
	"sync"

	"github.com/zklockkit/zklockkit/zklock"
)

// requeues watches a Client's lock events for acquires that queued again
// with a new node (their first node was deleted by the operator, or their
// session expired), so that a lane holds such a lease long enough for the
// operator's second delete ("requeued-holder") to find it holding: per
// issue #18, a re-queued waiter once held a lease whose node nothing
// watched.
type requeues struct {
	mu       sync.Mutex
	path     map[uint64]string // acquire ID -> its node
	requeued map[string]bool   // nodes made by a second create of an acquire
}

func newRequeues() *requeues {
	return &requeues{path: map[uint64]string{}, requeued: map[string]bool{}}
}

// Observe implements zklock.Observer.
func (q *requeues) Observe(_ context.Context, e zklock.Event) {
	if e.ID == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch e.Kind {
	case zklock.EventEnqueued, zklock.EventPosition, zklock.EventAcquired:
		if prev, ok := q.path[e.ID]; ok && e.Path != "" && prev != "" && prev != e.Path {
			q.requeued[e.Path] = true
		}
		if e.Path != "" {
			q.path[e.ID] = e.Path
		}
		if e.Kind == zklock.EventAcquired {
			delete(q.path, e.ID)
		}
	case zklock.EventFailed:
		delete(q.path, e.ID)
	}
}

// take reports whether any of paths was made by a re-queue, forgetting them.
func (q *requeues) take(paths []string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	found := false
	for _, p := range paths {
		if q.requeued[p] {
			found = true
			delete(q.requeued, p)
		}
	}
	return found
}
