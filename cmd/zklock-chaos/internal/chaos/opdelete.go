package chaos

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// opDelete is the operator's fault: delete one lock node from the
// operator's own session, aiming at the recipe hit least so far. Half the
// time the node is a holder's (the first in its queue), half the time a
// waiter's (mostly the next in line), and every time a waiter's until the
// operator has once deleted a re-queued lease's node while it held. After
// deleting a waiter's node it watches, for up to three session timeouts,
// for the same session to hold the same queue with a new node, and
// deletes that one too ("requeued-holder"): a waiter that queued again
// must watch its new node like any other (issue #18).
func (n *nemesis) opDelete(rng *rand.Rand) {
	if n.conn == nil {
		return
	}
	recipe := n.recipeFor(FaultOpDelete, rng)
	queues, err := n.queues()
	if err != nil || len(queues) == 0 {
		return
	}
	if rng.IntN(2) == 0 || !n.requeueHit.Load() {
		if q, victim := n.pickWaiter(queues, recipe, rng); victim != "" {
			n.deleteWaiter(q, victim)
			return
		}
	}
	var names []string
	for q := range queues {
		if recipeOfResource(path.Base(q)) == recipe && len(queues[q]) > 0 {
			names = append(names, q)
		}
	}
	if len(names) == 0 {
		for q := range queues {
			if len(queues[q]) > 0 && recipeOfResource(path.Base(q)) != RecipeLoad {
				names = append(names, q)
			}
		}
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	q := names[rng.IntN(len(names))]
	n.deleteNode(q+"/"+queues[q][0], "holder", recipeOfResource(path.Base(q)))
}

// pickWaiter returns a queue of recipe (of any recipe but the load phase's
// if recipe has none) and a node in it that waits: behind the first, and
// not one a worker reports holding. Mostly the next in line: it may be
// watching its own node for a hand-off, state that must not outlive the
// node.
func (n *nemesis) pickWaiter(queues map[string][]string, recipe string, rng *rand.Rand) (queue, node string) {
	waiting := map[string][]string{}
	for q, kids := range queues {
		if recipeOfResource(path.Base(q)) == RecipeLoad {
			continue
		}
		for _, k := range kids[min(1, len(kids)):] {
			if !n.hub.held(q + "/" + k) {
				waiting[q] = append(waiting[q], k)
			}
		}
	}
	var names []string
	for q := range waiting {
		if recipeOfResource(path.Base(q)) == recipe {
			names = append(names, q)
		}
	}
	if len(names) == 0 {
		names = slices.Collect(maps.Keys(waiting))
	}
	if len(names) == 0 {
		return "", ""
	}
	slices.Sort(names)
	q := names[rng.IntN(len(names))]
	ws := waiting[q]
	i := 0
	if rng.IntN(4) == 0 {
		i = rng.IntN(len(ws))
	}
	return q, q + "/" + ws[i]
}

// deleteWaiter deletes victim, a waiter's node in queue q, unless a worker
// reported holding it since the listing; then, once the waiter's worker
// reports holding a lease of that session on that queue whose acquire
// queued again, deletes that lease's node too.
func (n *nemesis) deleteWaiter(q, victim string) {
	if n.hub.held(victim) {
		return // granted since the listing: not a waiter's any more
	}
	owner := n.deleteNode(victim, "waiter", recipeOfResource(path.Base(q)))
	if owner == 0 {
		return
	}
	since := time.Now().UnixNano()
	deadline := time.Now().Add(3 * n.session)
	for time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		if node := n.hub.requeuedSince(owner, path.Base(q), since); node != "" {
			if n.deleteNode(node, "requeued-holder", recipeOfResource(path.Base(q))) != 0 {
				n.requeueHit.Store(true)
			}
			return
		}
	}
}

// deleteNode deletes p and records the fault; it returns p's owner
// session, 0 if the node was gone already or the delete failed.
func (n *nemesis) deleteNode(p, role, recipe string) int64 {
	ok, st, err := n.conn.Exists(p)
	if err != nil || !ok {
		return 0
	}
	id := n.beginEvent(Event{Fault: string(FaultOpDelete), Target: p, Resource: path.Base(path.Dir(p)), Session: st.EphemeralOwner,
		Mode: recipe, Detail: role})
	err = n.conn.Delete(p, -1)
	detail := ""
	if err != nil {
		detail = "error: " + err.Error()
		if errors.Is(err, zk.ErrNoNode) {
			detail = "gone already"
		}
	}
	n.end(id, detail)
	if err != nil {
		return 0
	}
	return st.EphemeralOwner
}

// queues lists every queue under the root with its children in queue order.
func (n *nemesis) queues() (map[string][]string, error) {
	names, _, err := n.conn.Children(n.root)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, name := range names {
		q := n.root + "/" + name
		kids, err := n.children(q)
		if err == nil {
			out[q] = kids
		}
	}
	return out, nil
}

// children lists a queue's nodes sorted by their sequence suffix.
func (n *nemesis) children(q string) ([]string, error) {
	kids, _, err := n.conn.Children(q)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(kids, func(a, b string) int { return strings.Compare(seqOf(a), seqOf(b)) })
	return kids, nil
}

// seqOf returns a node name's 10-digit sequence suffix.
func seqOf(name string) string {
	if len(name) < 10 {
		return name
	}
	return name[len(name)-10:]
}

// recipeOfResource names the recipe of a campaign resource by its name
// (see resourceNames).
func recipeOfResource(name string) string {
	switch {
	case strings.HasPrefix(name, "rw-"):
		return RecipeRW
	case strings.HasPrefix(name, "sem-"):
		return RecipeSemaphore
	case strings.HasPrefix(name, "el-"):
		return RecipeElection
	case strings.HasPrefix(name, "all-"):
		return RecipeMulti
	case strings.HasPrefix(name, "load-"):
		return RecipeLoad
	}
	return RecipeExclusive
}

// resourceNames returns the campaign's resources: n exclusive ones, and
// those of each recipe.
func resourceNames(n int) (exclusive, rw []string, sems []semSpec, elections []string, multi [][]string) {
	for i := range n {
		exclusive = append(exclusive, fmt.Sprintf("res-%d", i))
	}
	rw = []string{"rw-0", "rw-1"}
	sems = []semSpec{{Name: "sem-0", Limit: 2}, {Name: "sem-1", Limit: 3}}
	elections = []string{"el-0"}
	multi = [][]string{{"all-a", "all-b"}, {"all-b", "all-c"}, {"all-c", "all-a"}}
	return
}
