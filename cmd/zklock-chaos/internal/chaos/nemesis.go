package chaos

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/internal/ctxsleep"
	"github.com/zklockkit/zklockkit/zktest"
)

// FaultKind names a kind of fault the nemesis injects.
type FaultKind string

// Fault kinds. Process faults hit one worker (a lock holder when there is
// one); server faults hit the ensemble.
const (
	// FaultKill sends SIGKILL to a holder; a new worker takes its slot.
	FaultKill FaultKind = "kill"
	// FaultPause stops a holder with SIGSTOP for longer than the session
	// timeout, then continues it: only fencing can stop its stale writes.
	FaultPause FaultKind = "pause"
	// FaultBlackhole silences every connection of a holder to every server
	// (its proxies hold all bytes), for half or one and a half session
	// timeouts, then lets the bytes through.
	FaultBlackhole FaultKind = "blackhole"
	// FaultDrop closes a holder's connections and refuses new ones for up
	// to three quarters of the session timeout.
	FaultDrop FaultKind = "drop"
	// FaultSlow delays every byte between a holder and the servers by up to
	// 40% of the session timeout each way, for one and a half timeouts.
	FaultSlow FaultKind = "slow"
	// FaultLeaderKill sends SIGKILL to the ensemble's leader and starts it
	// again after a moment.
	FaultLeaderKill FaultKind = "leader-kill"
	// FaultServerRestart restarts one follower gracefully.
	FaultServerRestart FaultKind = "server-restart"
	// FaultIsolateLeader cuts the ensemble's leader off from both
	// followers (inside the ensemble: its clients still reach it) for half
	// to one and a half session timeouts, then heals.
	FaultIsolateLeader FaultKind = "isolate-leader"
	// FaultIsolateFollower cuts off the follower the most workers are
	// connected to; half the time those workers also lose their links to
	// the other servers, so their sessions sit on the minority side.
	FaultIsolateFollower FaultKind = "isolate-follower"
	// FaultBridge cuts the link between two servers: the third (the
	// bridge) still sees both.
	FaultBridge FaultKind = "bridge"
	// FaultOpDelete is an operator deleting a lock node: a holder's, a
	// waiter's, or the node of a waiter that queued again after its first
	// node was deleted, once it holds.
	FaultOpDelete FaultKind = "op-delete"
)

// AllFaults lists every fault kind: process faults, server faults,
// partitions inside the ensemble, the operator's.
var AllFaults = []FaultKind{FaultKill, FaultPause, FaultBlackhole, FaultDrop, FaultSlow, FaultLeaderKill, FaultServerRestart,
	FaultIsolateLeader, FaultIsolateFollower, FaultBridge, FaultOpDelete}

// Server reports whether k hits the ensemble rather than one worker.
func (k FaultKind) Server() bool {
	switch k {
	case FaultLeaderKill, FaultServerRestart, FaultIsolateLeader, FaultIsolateFollower, FaultBridge:
		return true
	}
	return false
}

// Partition reports whether k cuts links inside the ensemble.
func (k FaultKind) Partition() bool {
	return k == FaultIsolateLeader || k == FaultIsolateFollower || k == FaultBridge
}

// Network reports whether k is a network or server fault, after which a
// holder must learn of its loss before anyone else acquires. (A killed
// process learns nothing, and a paused one only after it runs again: for
// those, fencing is the guard. An operator's delete reaches the holder and
// the next in line at the same moment: fencing again, and the holder must
// learn of it at once.)
func (k FaultKind) Network() bool { return k != FaultKill && k != FaultPause && k != FaultOpDelete }

// nemesis injects faults, one lane for process faults and one for server
// faults, each lane one fault at a time.
type nemesis struct {
	session time.Duration
	fl      *fleet
	ens     *zktest.Ensemble
	hub     *hub

	root string
	conn *zk.Conn // the operator's own session, straight to the ensemble

	// quietUntil: no lane starts a fault before it (a quiet period, for
	// the liveness figures outside fault windows)
	quietUntil atomic.Int64
	// requeueHit: the operator has deleted a re-queued lease's node
	// (issue #18's sequence); until then it prefers waiters' nodes
	requeueHit atomic.Bool

	mu     sync.Mutex
	counts map[FaultKind]int
	aimed  map[FaultKind]map[string]int // process and operator faults by recipe aimed at
	kills  int
	nextID int
}

func (n *nemesis) count(k FaultKind) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.counts[k]
}

// lane injects faults of the given kinds until ctx ends, always picking a
// kind injected least so far.
func (n *nemesis) lane(ctx context.Context, kinds []FaultKind, rng *rand.Rand) {
	for ctx.Err() == nil {
		if q := time.Until(time.Unix(0, n.quietUntil.Load())); q > 0 {
			sleepCtx(ctx, q)
			continue
		}
		k := slices.MinFunc(shuffled(kinds, rng), func(a, b FaultKind) int { return n.count(a) - n.count(b) })
		n.inject(k, rng)
		gap := time.Duration(300+rng.IntN(900)) * time.Millisecond
		switch {
		case k.Server():
			// Let the ensemble settle: a server fault every few seconds
			// would leave it without a leader much of the time.
			gap += n.session/2 + time.Duration(rng.Int64N(int64(n.session)))
		case k == FaultOpDelete:
			gap += n.session / 2
		}
		sleepCtx(ctx, gap)
	}
}

func shuffled(ks []FaultKind, rng *rand.Rand) []FaultKind {
	out := slices.Clone(ks)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// sleepCtx waits for d or until ctx ends: the campaign's pacers stop at
// its end, which their loops check.
func sleepCtx(ctx context.Context, d time.Duration) { _ = ctxsleep.Sleep(ctx, d) }

// begin records the start of a fault.
func (n *nemesis) begin(k FaultKind, procID int, target, detail string) int {
	return n.beginEvent(Event{Fault: string(k), Proc: procID, Target: target, Detail: detail})
}

// beginEvent records e as the start of a fault, numbering it.
func (n *nemesis) beginEvent(e Event) int {
	n.mu.Lock()
	n.nextID++
	id := n.nextID
	k := FaultKind(e.Fault)
	n.counts[k]++
	if e.Mode != "" {
		if n.aimed[k] == nil {
			n.aimed[k] = map[string]int{}
		}
		n.aimed[k][e.Mode]++
	}
	n.mu.Unlock()
	e.Kind, e.FaultID = EvFault, id
	n.hub.record(e)
	return id
}

// recipeFor picks the recipe a fault of kind k aims at: the one it hit
// least so far, then the one all kinds hit least (kills aim at an
// election's leader every other time, for the leaderless gap). The first
// pause aims at an exclusive lock's holder (in a long critical section,
// see pickTarget), whose late write the fence must refuse: the campaign's
// target that fencing was exercised. A smoke campaign makes three pauses,
// and CI's of 28 November on 11ee600 sent them to a semaphore (whose
// writes no token fences in memory), an election and a downgrade, and
// missed it.
func (n *nemesis) recipeFor(k FaultKind, rng *rand.Rand) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if k == FaultPause && n.aimed[k][RecipeExclusive] == 0 {
		return RecipeExclusive
	}
	if k == FaultKill {
		n.kills++
		if n.kills%2 == 0 {
			return RecipeElection
		}
	}
	rs := slices.Clone(AllRecipes)
	if k == FaultOpDelete {
		rs = slices.DeleteFunc(rs, func(r string) bool { return r == RecipeDowngrade }) // its queues are read/write's
	}
	rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
	total := func(r string) int {
		t := 0
		for _, m := range n.aimed {
			t += m[r]
		}
		return t
	}
	// Least hit by this kind, then least hit by any: every recipe sees
	// every kind, and all of them about as many faults.
	return slices.MinFunc(rs, func(a, b string) int {
		return cmp.Or(n.aimed[k][a]-n.aimed[k][b], total(a)-total(b))
	})
}

func (n *nemesis) end(id int, detail string) {
	n.hub.record(Event{Kind: EvHeal, FaultID: id, Detail: detail})
}

// pickTarget returns the slot and process of a current holder of a lease
// of the recipe, preferring one in a long critical section (waiting up to
// 2s for one, 4s for any; 10 s for an exclusive lock's), or of a random
// worker when nobody holds one.
func (n *nemesis) pickTarget(rng *rand.Rand, recipe string) (*slot, *proc) {
	tries := 80
	if recipe == RecipeExclusive {
		tries = 200 // up to 10 s: the first pause needs a holder (recipeFor)
	}
	for i := range tries {
		hs, long := n.hub.holders(recipe)
		if i < 40 && recipe == RecipeExclusive {
			hs = long
		}
		rng.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
		for _, id := range hs {
			if s := n.fl.slotOf(id); s != nil {
				if p := s.current(); p != nil && p.alive() {
					return s, p
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := n.fl.slots[rng.IntN(len(n.fl.slots))]
	return s, s.current()
}

// inject runs one fault to its end. Faults are not cut short when the
// campaign stops: each keeps its shape.
func (n *nemesis) inject(k FaultKind, rng *rand.Rand) {
	st := n.session
	jitter := func(d time.Duration) time.Duration { return time.Duration(rng.Int64N(int64(d) + 1)) }
	if k.Server() {
		n.serverFault(k, rng)
		return
	}
	if k == FaultOpDelete {
		n.opDelete(rng)
		return
	}
	recipe := n.recipeFor(k, rng)
	s, p := n.pickTarget(rng, recipe)
	if p == nil || !p.alive() {
		return
	}
	target := fmt.Sprintf("slot-%d", s.idx)
	beginAimed := func(detail string) int {
		return n.beginEvent(Event{Fault: string(k), Proc: p.id, Target: target, Detail: detail, Mode: recipe})
	}
	switch k {
	case FaultKill:
		id := beginAimed("")
		n.fl.kill(p)
		time.Sleep(200*time.Millisecond + jitter(600*time.Millisecond))
		err := n.fl.spawn(s)
		detail := "respawned"
		if err != nil {
			detail = "respawn failed: " + err.Error()
		}
		n.end(id, detail)
	case FaultPause:
		d := st*3/2 + jitter(st/2)
		id := beginAimed(fmt.Sprintf("for=%v", d))
		if err := p.signal(syscall.SIGSTOP); err != nil {
			n.end(id, err.Error())
			return
		}
		time.Sleep(d)
		_ = p.signal(syscall.SIGCONT)
		n.end(id, "")
	case FaultBlackhole:
		d := st / 2
		if rng.IntN(2) == 0 {
			d = st*3/2 + jitter(st/2)
		}
		id := beginAimed(fmt.Sprintf("for=%v", d))
		for _, px := range s.proxies {
			px.Blackhole(true)
		}
		time.Sleep(d)
		for _, px := range s.proxies {
			px.Blackhole(false)
		}
		n.end(id, "")
	case FaultDrop:
		d := jitter(st * 3 / 4)
		id := beginAimed(fmt.Sprintf("reject-new-for=%v", d))
		for _, px := range s.proxies {
			px.RejectNew(true)
			px.DropAll()
		}
		time.Sleep(d)
		for _, px := range s.proxies {
			px.RejectNew(false)
		}
		n.end(id, "")
	case FaultSlow:
		delays := []time.Duration{st / 20, st / 6, st * 2 / 5}
		delay := delays[rng.IntN(len(delays))]
		d := st * 3 / 2
		id := beginAimed(fmt.Sprintf("delay=%v for=%v", delay, d))
		for _, px := range s.proxies {
			px.SetDelay(delay)
		}
		time.Sleep(d)
		for _, px := range s.proxies {
			px.SetDelay(0)
		}
		n.end(id, "")
	}
}

func (n *nemesis) serverFault(k FaultKind, rng *rand.Rand) {
	if k.Partition() {
		n.partition(k, rng)
		return
	}
	var s *zktest.Server
	var idx int
	switch k {
	case FaultLeaderKill:
		var err error
		s, idx, err = n.ens.Leader()
		if err != nil {
			n.hub.record(Event{Kind: EvNote, Detail: "leader-kill skipped: " + err.Error()})
			return
		}
	case FaultServerRestart:
		_, li, err := n.ens.Leader()
		if err != nil {
			li = -1
		}
		idx = rng.IntN(len(n.ens.Servers))
		if idx == li {
			idx = (idx + 1) % len(n.ens.Servers)
		}
		s = n.ens.Servers[idx]
	}
	target := fmt.Sprintf("zk%d(%s)", idx+1, s.Addr())
	id := n.begin(k, 0, target, "")
	var err error
	if k == FaultLeaderKill {
		err = s.Kill()
		time.Sleep(500*time.Millisecond + time.Duration(rng.Int64N(int64(1500*time.Millisecond))))
		if err == nil {
			err = startWithRetry(s)
		}
	} else {
		err = s.Stop()
		if err == nil {
			err = startWithRetry(s)
		}
	}
	detail := ""
	if err != nil {
		detail = "error: " + err.Error()
	}
	if err := n.ens.WaitForQuorum(60 * time.Second); err != nil {
		detail += " quorum: " + err.Error()
	}
	n.end(id, detail)
}

// startWithRetry starts a stopped server, trying again if it does not come
// up (a loaded machine can be slow to rejoin).
func startWithRetry(s *zktest.Server) error {
	var err error
	for range 3 {
		if err = s.Start(); err == nil {
			return nil
		}
		_ = s.Kill()
	}
	return err
}
