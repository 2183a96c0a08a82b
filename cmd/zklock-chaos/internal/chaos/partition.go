package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// partition injects a partition inside the ensemble (its links run through
// zktest's link proxies) and heals it:
//
//   - isolate-leader: the leader loses both followers;
//   - isolate-follower: the follower most workers are on loses the other
//     two; half the time those workers also lose their own links to the
//     other servers ("stuck": their sessions sit on the minority side);
//   - bridge: the link between two servers is cut, the third sees both.
//
// Each cut resets the links or silences them (half the time each), for
// half to two session timeouts. The fault's Target names the servers cut
// off, Detail the mode, the duration and the stuck workers.
func (n *nemesis) partition(k FaultKind, rng *rand.Rand) {
	st := n.session
	mode := zktest.CutReset
	if rng.IntN(2) == 0 {
		mode = zktest.CutSilent
	}
	d := st/2 + time.Duration(rng.Int64N(int64(st*3/2)))
	_, leader, err := n.ens.Leader()
	if err != nil {
		n.hub.record(Event{Kind: EvNote, Detail: string(k) + " skipped: " + err.Error()})
		return
	}
	var cut []int // servers (0-based) on the minority side
	var stuck []*slot
	var target string
	var do func() error
	switch k {
	case FaultIsolateLeader:
		cut = []int{leader}
		target = fmt.Sprintf("zk%d(leader)", leader+1)
		do = func() error { return n.ens.Isolate(leader, mode) }
	case FaultIsolateFollower:
		f := n.busiestFollower(leader, rng)
		cut = []int{f}
		target = fmt.Sprintf("zk%d(follower)", f+1)
		if rng.IntN(2) == 0 {
			stuck = n.slotsOn(f + 1)
		}
		do = func() error { return n.ens.Isolate(f, mode) }
	case FaultBridge:
		b := rng.IntN(3)
		var ends []int
		for i := range 3 {
			if i != b {
				ends = append(ends, i)
			}
		}
		target = fmt.Sprintf("zk%d-zk%d(bridge zk%d)", ends[0]+1, ends[1]+1, b+1)
		cut = ends // either end may be the one left out
		do = func() error { return n.ens.Bridge(b, mode) }
	}
	var procs []string
	for _, s := range stuck {
		if p := s.current(); p != nil {
			procs = append(procs, fmt.Sprint(p.id))
		}
	}
	detail := fmt.Sprintf("mode=%s for=%v leader=zk%d", mode, d.Round(time.Millisecond), leader+1)
	if len(procs) > 0 {
		detail += " stuck=" + strings.Join(procs, ",")
	}
	servers := ""
	for _, c := range cut {
		servers += fmt.Sprintf("zk%d,", c+1)
	}
	id := n.beginEvent(Event{Fault: string(k), Target: target, Detail: detail, Nodes: []string{strings.TrimSuffix(servers, ",")}})
	err = do()
	for _, s := range stuck { // isolate-follower only: cut holds the follower
		for j, px := range s.proxies {
			if !slices.Contains(cut, j) {
				px.Blackhole(true)
			}
		}
	}
	time.Sleep(d)
	for _, s := range stuck {
		for _, px := range s.proxies {
			px.Blackhole(false)
		}
	}
	healErr := n.ens.Heal()
	end := ""
	if err != nil || healErr != nil {
		end = fmt.Sprintf("error: %v %v", err, healErr)
	}
	if err := n.ens.WaitForQuorum(60 * time.Second); err != nil {
		end += " quorum: " + err.Error()
	}
	n.end(id, end)
}

// busiestFollower returns the follower the most live workers were last
// connected to (ties broken at random).
func (n *nemesis) busiestFollower(leader int, rng *rand.Rand) int {
	count := map[int]int{}
	for _, srv := range n.hub.servers() {
		count[srv-1]++
	}
	best, bestN := -1, -1
	for _, i := range rng.Perm(len(n.ens.Servers)) {
		if i != leader && count[i] > bestN {
			best, bestN = i, count[i]
		}
	}
	return best
}

// slotsOn returns the slots whose worker was last on server (1-based).
func (n *nemesis) slotsOn(server int) []*slot {
	on := n.hub.servers()
	var out []*slot
	for _, s := range n.fl.slots {
		if p := s.current(); p != nil && on[p.id] == server {
			out = append(out, s)
		}
	}
	return out
}
