package chaos

import (
	"math/rand/v2"
	"testing"
)

// TestPickWaiterSkipsHolders: the operator's "waiter" is a node behind the
// first that no worker reports holding. A semaphore's second permit and a
// node granted since the listing are holders; the CI run of 28 November
// deleted five such "waiters" and never exercised issue #18's sequence.
func TestPickWaiterSkipsHolders(t *testing.T) {
	h := startHub(t)
	n := &nemesis{hub: h}
	const root = "/r"
	queues := map[string][]string{
		root + "/sem-1":  {"s-0000000001", "s-0000000002", "s-0000000003"},
		root + "/res-0":  {"l-0000000007"},
		root + "/load-3": {"l-0000000001", "l-0000000002"},
	}
	h.record(Event{Kind: EvAcquired, Proc: 1, Op: 1, Nodes: []string{root + "/sem-1/s-0000000001"}})
	h.record(Event{Kind: EvAcquired, Proc: 2, Op: 1, Nodes: []string{root + "/sem-1/s-0000000002"}})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		q, node := n.pickWaiter(queues, RecipeExclusive, rng)
		if q != root+"/sem-1" || node != root+"/sem-1/s-0000000003" {
			t.Fatalf("pickWaiter = %q, %q; want sem-1's third node, the only one waiting", q, node)
		}
	}
	// Once the third is granted too, nothing waits: no waiter to delete.
	h.record(Event{Kind: EvAcquired, Proc: 3, Op: 1, Nodes: []string{root + "/sem-1/s-0000000003"}})
	if q, node := n.pickWaiter(queues, RecipeSemaphore, rng); node != "" {
		t.Fatalf("pickWaiter = %q, %q with every node held; want none", q, node)
	}
	// A release ends the hold: the node (were it still listed) waits no more
	// and holds no more, and the hub forgets it.
	h.record(Event{Kind: EvRelease, Proc: 2, Op: 1})
	if h.held(root + "/sem-1/s-0000000002") {
		t.Fatal("held after its release")
	}
	if !h.held(root + "/sem-1/s-0000000001") {
		t.Fatal("not held while its lease is")
	}
}
