package chaos

import (
	"context"
	"testing"

	"github.com/zklockkit/zklockkit/zklock"
)

// An acquire whose node changes before it holds made its new node by
// queueing again; one that keeps its node did not.
func TestRequeues(t *testing.T) {
	q := newRequeues()
	ctx := context.Background()
	for _, e := range []zklock.Event{
		{Kind: zklock.EventStarted, ID: 1},
		{Kind: zklock.EventEnqueued, ID: 1, Path: "/q/a-1"},
		{Kind: zklock.EventEnqueued, ID: 2, Path: "/q/b-2"},
		{Kind: zklock.EventPosition, ID: 1, Path: "/q/a-3"}, // a new node: queued again
		{Kind: zklock.EventAcquired, ID: 1, Path: "/q/a-3"},
		{Kind: zklock.EventAcquired, ID: 2, Path: "/q/b-2"},
	} {
		q.Observe(ctx, e)
	}
	if !q.take([]string{"/q/a-3"}) || q.take([]string{"/q/a-3"}) || q.take([]string{"/q/b-2"}) || q.take([]string{"/q/a-1"}) {
		t.Fatal("re-queued nodes misread")
	}
	if len(q.path) != 0 {
		t.Fatalf("acquires not forgotten: %v", q.path)
	}
}
