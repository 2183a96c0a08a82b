package zklock_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A create sent to a leader cut off from its followers, silently, is
// proposed and waits for them; the client's connection is lost, and it
// comes back on a follower F, which must first hear from the leader that
// the session is still valid. When the link to F mends (the other follower
// still cut off), the leader reads F's question before F's acknowledgement
// of the create, so F is told the session is valid before it is told the
// create committed, and a listing read on F right away does not show the
// node: an acquire that took that listing for "no node made" created a
// second one. The first, unknown to its client, stood ahead of it in the
// queue until the session ended (the chaos short run on 3312a8f: five
// phantoms, two sessions, 12 s).
//
// The acquire must end up with one node in the queue, and hold once the
// holder releases.
//
// Whether a listing without a sync would miss the node is a race on F:
// the leader's answer to F's question about the session against its
// commit of the create. With the mended link as fast as loopback the
// commit often came first, and the test passed an acquire that listed
// without a sync (the canary lost-create-no-sync) in most rounds. The
// mended link therefore carries every byte linkDelay late, so
// that F hears the commit a round trip on that link after the session's
// answer: an acquire that lists on F without a sync first does so in
// between. The holder's session is holderSession, so that its proofs,
// answered late the same way, keep its lease through the cut.
func TestIntegration_LostCreateCommittedLateIsNotQueuedTwice(t *testing.T) {
	const (
		linkDelay     = 300 * time.Millisecond
		holderSession = 10 * time.Second // the longest the ensemble's tick allows (20 ticks)
	)
	e, leader := startLinkedEnsemble(t)
	addrs := e.Addrs()
	f := (leader + 1) % 3
	proxy := func(addr string) *zktest.Proxy {
		p, err := zktest.NewProxy(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	toLeader, toFollower := proxy(addrs[leader]), proxy(addrs[f])
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	admin, _, err := zk.Connect([]string{addrs[f]}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	const rounds = 3
	for round := range rounds {
		resource := "r" + string(rune('0'+round))
		holder := connectTo(t, root, []string{addrs[f]}, zklock.WithSessionTimeout(holderSession))
		var held *zklock.Lease
		eventually(t, "the holder holds (the ensemble may still be settling)", func() bool {
			var err error
			held, err = holder.Acquire(ctx, resource, zklock.MaxWait(time.Second))
			return err == nil
		})
		toFollower.RejectNew(true) // the waiter starts on the leader
		toLeader.RejectNew(false)
		waiter := connectTo(t, root, []string{toLeader.Addr(), toFollower.Addr()})
		if err := e.Isolate(leader, zktest.CutSilent); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		var lease *zklock.Lease
		go func() {
			var err error
			lease, err = waiter.Acquire(ctx, resource)
			got <- err
		}()
		time.Sleep(300 * time.Millisecond) // the create is with the leader, proposed
		// F takes connections before the waiter's is dropped: the client
		// dials again at once, and a refused dial costs it a second's
		// pause, after which the create has long been committed.
		toLeader.RejectNew(true)
		toFollower.RejectNew(false)
		toLeader.DropAll()
		time.Sleep(700 * time.Millisecond) // the waiter is back, on F, which asks the leader
		if err := e.Delay(leader, f, linkDelay); err != nil {
			t.Fatal(err)
		}
		if err := e.Mend(leader, f); err != nil {
			t.Fatal(err)
		}
		queue := root + "/" + resource
		eventually(t, "the waiter's node is in the queue", func() bool {
			kids, _, err := admin.Children(queue)
			return err == nil && len(kids) >= 2
		})
		time.Sleep(time.Second) // anything left to clean up is cleaned up by now
		if err := e.Delay(leader, f, 0); err != nil {
			t.Fatal(err)
		}
		if err := e.Heal(); err != nil {
			t.Fatal(err)
		}
		kids, _, err := admin.Children(queue)
		if err != nil {
			t.Fatal(err)
		}
		if len(kids) != 2 {
			t.Errorf("round %d: the queue holds %d nodes, want the holder's and the waiter's: %v", round, len(kids), kids)
		}
		if err := held.Release(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("round %d: the waiter's acquire failed: %v", round, err)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
		case <-time.After(2 * testSessionTimeout):
			t.Fatalf("round %d: the holder released, and the waiter still waits (queue %v)", round, kids)
		}
		waiter.Close()
		holder.Close()
	}
}
