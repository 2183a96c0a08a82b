package zklock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// A release that ZooKeeper cannot confirm leaves the node with the client
// until it can: Locks leaves it out, Deleting lists it, until the delete
// gets through.
func TestIntegration_DeletingListsNodesUntilZooKeeperConfirms(t *testing.T) {
	p := newProxy(t)
	c := newClientAt(t, p.Addr(), zktest.UniqueRoot(t))
	ctx := testCtx(t)
	l, err := c.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	path := l.Path()
	if got := c.Deleting(); len(got) != 0 {
		t.Fatalf("Deleting = %v before any release", got)
	}
	p.Blackhole(true)
	rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := l.Release(rctx); err == nil {
		t.Fatal("Release returned nil with ZooKeeper out of reach")
	}
	// the delete goes on in the background once Release returns
	eventually(t, "Deleting lists the node", func() bool { return slices.Equal(c.Deleting(), []string{path}) })
	time.Sleep(300 * time.Millisecond)
	if got := c.Deleting(); !slices.Equal(got, []string{path}) {
		t.Fatalf("Deleting = %v while the delete waits, want [%s]", got, path)
	}
	for _, ll := range c.Locks() {
		if ll.Path == path {
			t.Fatalf("Locks lists the released node %s", path)
		}
	}
	p.Blackhole(false)
	eventually(t, "the delete gets through", func() bool { return len(c.Deleting()) == 0 })
}
