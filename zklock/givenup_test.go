package zklock_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// An acquire whose context ends while a step of it waits on ZooKeeper
// returns within the answer bound and leaves the step to finish in the
// background. The nodes it made are a failed acquire's from then on:
// Locks leaves them out and Deleting lists them, held parts and the node
// still waiting alike, until the step ends and ZooKeeper confirms them
// gone. Before, they stayed in Locks until the step's request was
// answered: the release long run of 28 November (ZooKeeper store, seed
// 1795864683067746832) found a failed AcquireAll's node in Locks 3 s after
// it returned, its server answering nothing.
func TestIntegration_GivenUpAcquireNodesAreDeleting(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resources []string
		nodes     int // of c's, made before the step hangs
	}{
		{"one resource, waiting", []string{"b"}, 1},
		{"AcquireAll, a held and b waiting", []string{"a", "b"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := zktest.UniqueRoot(t)
			o := newClient(t, root)
			c := newClient(t, root)
			ctx := testCtx(t)
			lo, err := o.Acquire(ctx, "b")
			if err != nil {
				t.Fatal(err)
			}
			// c's listings of b's queue hang until unblock: the step
			// waits on a request that is never answered.
			unblock := make(chan struct{})
			hung := make(chan struct{}, 1)
			zklock.SetListingHook(c, func(parent string, names []string) []string {
				if strings.HasSuffix(parent, "/b") {
					select {
					case hung <- struct{}{}:
					default:
					}
					<-unblock
				}
				return names
			})
			defer zklock.SetListingHook(c, nil)
			actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			var l *zklock.Lease
			if len(tc.resources) == 1 {
				l, err = c.Acquire(actx, tc.resources[0])
			} else {
				l, err = c.AcquireAll(actx, tc.resources)
			}
			took := time.Since(start)
			if err == nil {
				l.Release(ctx)
				t.Fatal("the acquire succeeded while b is held")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want context.DeadlineExceeded", err)
			}
			select {
			case <-hung:
			default:
				close(unblock)
				t.Fatalf("the acquire failed (%v) without its step hanging on b's listing: the test tests nothing", err)
			}
			// the answer bound of a 4 s session is 1 s, counted from the
			// context's end
			if limit := 300*time.Millisecond + time.Second + 500*time.Millisecond; took > limit {
				close(unblock)
				t.Fatalf("the acquire returned after %v, want within %v", took, limit)
			}
			for _, ll := range c.Locks() {
				close(unblock)
				t.Fatalf("Locks lists %s (%s, held %v) of the failed acquire", ll.Path, ll.Resource, ll.Held)
			}
			deleting := c.Deleting()
			if len(deleting) != tc.nodes {
				close(unblock)
				t.Fatalf("Deleting = %v, want the acquire's %d node(s)", deleting, tc.nodes)
			}
			// o's lease is not c's: its node is in neither list
			if slices.Contains(deleting, lo.Path()) {
				close(unblock)
				t.Fatalf("Deleting lists o's node %s", lo.Path())
			}
			// They stay deleting while the step hangs.
			time.Sleep(500 * time.Millisecond)
			if got := c.Deleting(); !slices.Equal(got, deleting) || len(c.Locks()) != 0 {
				close(unblock)
				t.Fatalf("while the step hangs: Deleting = %v, Locks = %v; want %v and none", got, c.Locks(), deleting)
			}
			close(unblock)
			eventually(t, "the failed acquire's nodes gone", func() bool { return len(c.Deleting()) == 0 })
			if got := c.Locks(); len(got) != 0 {
				t.Fatalf("Locks = %v after the step ended", got)
			}
			if err := lo.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if nodes := lockNodes(t, o.Conn(), root); len(nodes) != 0 {
				t.Fatalf("nodes left in ZooKeeper: %v", nodes)
			}
		})
	}
}
