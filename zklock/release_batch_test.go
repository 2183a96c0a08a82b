package zklock_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Leases released at once by one client go out as a few transactions of
// deletes, not a delete each: 200 concurrent Releases cost the server far
// fewer than 200 requests (counted by the server: srst, then mntr), and
// every node is gone when they return.
func TestIntegration_ConcurrentReleasesAreBatched(t *testing.T) {
	srv := countedServer(t)
	root := zktest.UniqueRoot(t)
	c := newClientAt(t, srv.Addr(), root, zklock.WithNodeWatchDelay(time.Hour))
	ctx := testCtx(t)
	const n = 200
	leases := make([]*zklock.Lease, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := c.Acquire(ctx, fmt.Sprintf("r/%d", i))
			if err != nil {
				t.Error(err)
			}
			leases[i] = l
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if _, err := srv.FourLetter("srst"); err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	for _, l := range leases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := l.Release(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	mntr, err := srv.FourLetter("mntr")
	if err != nil {
		t.Fatal(err)
	}
	packets := mntrValue(t, mntr, "zk_packets_received") - 1 // mntr counts itself
	t.Logf("%d concurrent releases: %d requests", n, packets)
	if packets >= n/2 {
		t.Fatalf("%d concurrent releases cost %d requests; want them batched (far fewer than %d)", n, packets, n)
	}
	if nodes := lockNodes(t, c.Conn(), root); len(nodes) != 0 {
		t.Fatalf("%d nodes left after the releases", len(nodes))
	}
}
