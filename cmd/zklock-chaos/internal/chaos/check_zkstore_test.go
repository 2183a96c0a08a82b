package chaos_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

// zkParams judges histories of a campaign whose store was ZooKeeper.
var zkParams = func() chaos.Params { p := params; p.Store = chaos.StoreZK; return p }()

// asLogged turns a history written for the store in memory into one of a
// store outside the process: every write gets an id and its writer's
// outcome, each accepted one a committed row, in the history's order, and
// the read-back ends it.
func (h *history) asLogged() *history {
	n := map[string]int64{}
	var rows []chaos.Event
	for i, e := range h.evs {
		if e.Kind != chaos.EvWrite {
			continue
		}
		e.WriteID, e.Called = wid(e.Proc, int64(i+1)), e.T
		e.Outcome = chaos.WriteStale
		if e.Accepted {
			e.Outcome = chaos.WriteCommitted
			n[e.Resource]++
			rows = append(rows, chaos.Event{Kind: chaos.EvCommitted, T: at(9000), Proc: e.Proc, Op: e.Op, Resource: e.Resource, Mode: e.Mode,
				Token: e.Token, Sent: e.Sent, WriteID: e.WriteID, Order: n[e.Resource]})
		}
		h.evs[i] = e
	}
	for _, r := range rows {
		h.add(r)
	}
	return h.readBack()
}

// pausedThenRefused is a holder (proc 1, token 10) that writes, is paused
// and overtaken by proc 2 (token 20), and whose late write ZooKeeper
// refuses (its node gone with its session) before proc 2 has written
// anything: no larger token was in the register yet.
func pausedThenRefused() *history {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.dbWrite(1, 1, "a", chaos.ModeExclusive, 10, 1, chaos.WriteCommitted, 1)
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(10), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 1})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(3500), Proc: 2, Op: 1, Resource: "a", Token: 20})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(5000), FaultID: 1})
	h.dbWrite(1, 1, "a", chaos.ModeExclusive, 10, 5001, chaos.WriteStale, 2)
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(5003), Proc: 1, Op: 1, Resource: "a", Err: `zklock: lease on "a" lost: session_unverified`})
	h.dbWrite(2, 1, "a", chaos.ModeExclusive, 20, 5010, chaos.WriteCommitted, 1)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(5100), Proc: 2, Op: 1, Resource: "a"})
	return h.row(1, 1, "a", chaos.ModeExclusive, 10, 1, 1, 1).row(2, 1, "a", chaos.ModeExclusive, 20, 5010, 1, 2).readBack()
}

// ZooKeeper refuses a write whose lease's node is gone, whatever the
// register holds: the paused holder's refusal, before the next holder
// wrote, fits the ZooKeeper register and is fencing's. A store that
// refuses only below a stored token could not have refused it.
func TestCheckZooKeeperRefusesWithoutALargerToken(t *testing.T) {
	r := chaos.Check(pausedThenRefused().evs, zkParams)
	wantViolations(t, r)
	if r.Stale.Rejected != 1 || r.Stale.RejectedPaused != 1 || r.Stale.Committed != 0 || r.PausedOverlaps != 1 || r.Store.Result != "Ok" ||
		r.Database == nil || r.Database.Rows != 2 {
		t.Fatalf("stale %+v, paused overlaps %d, store %+v, database %+v", r.Stale, r.PausedOverlaps, r.Store, r.Database)
	}
	wantViolations(t, chaos.Check(pausedThenRefused().evs, dbParams), chaos.VStoreHistory)
}

// A refusal in ZooKeeper is judged from when it was answered: a holder
// told of its loss by then is excused as in transit (the next holder's
// grant before the signal is late-loss-signal's), whether or not anyone
// had written with a larger token; a holder told nothing by then had its
// node taken in good standing.
func TestCheckZooKeeperRefusalTiming(t *testing.T) {
	// Told of loss after the next holder's write began: in a database
	// that may have refused it in good standing, in ZooKeeper it was told
	// before its refusal was answered.
	r := chaos.Check(inTransitRefusal(147_100, 146_700, 147_000).evs, zkParams)
	wantViolations(t, r, chaos.VLateLoss)
	if r.Stale.RejectedInTransit != 1 {
		t.Fatalf("stale %+v", r.Stale)
	}
	// The next holder wrote only after the refusal: no token explains it,
	// the lease's node being gone does.
	r = chaos.Check(inTransitRefusal(127_700, 146_700, 152_000).evs, zkParams)
	wantViolations(t, r)
	if r.Stale.RejectedInTransit != 1 {
		t.Fatalf("stale %+v", r.Stale)
	}
	// Told of the loss only after the refusal was answered, neither
	// paused nor deleted: its node was taken while it held, unannounced.
	r = chaos.Check(inTransitRefusal(151_500, 152_000, 152_500).evs, zkParams)
	wantViolations(t, r, chaos.VGoodStanding)
}

// Readers are token-ordered against writers in ZooKeeper, as in memory
// (zkFenceSpec): the paused reader's write committed after the writer's
// with a smaller token is stale there, while a database, which fences no
// reader, counts it as unfenced.
func TestCheckZooKeeperOrdersReaders(t *testing.T) {
	h := overtaken("rw-0", chaos.ModeRead, chaos.WriteCommitted).row(1, 1, "rw-0", chaos.ModeRead, 10, 5001, 1, 2).readBack()
	r := chaos.Check(h.evs, zkParams)
	wantViolations(t, r, chaos.VStaleCommitted, chaos.VStoreHistory)
	if r.Stale.Committed != 1 || r.Stale.Unfenced != 0 {
		t.Fatalf("stale %+v", r.Stale)
	}
	wantViolations(t, chaos.Check(h.evs, dbParams))

	// A writer whose write commits after a reader's with a larger token
	// was ahead of the reader in the queue: the reader could not hold
	// before its node went, nor could it write after.
	h = (&history{}).held(1, 1, "rw-0", chaos.ModeRead, 0, 20, 0, 50, 1).held(2, 1, "rw-0", chaos.ModeWrite, 0, 10, 60, 90, 61).asLogged()
	r = chaos.Check(h.evs, zkParams)
	if r.Stale.Committed != 1 || !hasViolation(r, chaos.VStaleCommitted) {
		t.Fatalf("stale %+v, violations %v", r.Stale, kinds(r))
	}
	if r = chaos.Check(h.evs, dbParams); hasViolation(r, chaos.VStaleCommitted) {
		t.Fatalf("database: violations %v", kinds(r))
	}
}

// In ZooKeeper a semaphore holder's accepted write proves its node still
// existed, so it still held: the write of a holder paused and overtaken
// counts among the holders, and a third holder beside two is over the
// limit. In memory, where nothing fences it, the same write is counted
// apart (TestCheckSemaphoreLimit).
func TestCheckZooKeeperFencesSemaphores(t *testing.T) {
	crowd := func(lateAccepted bool) *history {
		h := (&history{}).held(1, 1, "sem-0", chaos.ModeSemaphore, 2, 10, 0, 100, 1, 60).held(2, 1, "sem-0", chaos.ModeSemaphore, 2, 11, 5, 110, 6, 70)
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(10), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 1})
		h.add(chaos.Event{Kind: chaos.EvHeal, T: at(3000), FaultID: 1})
		h.held(3, 1, "sem-0", chaos.ModeSemaphore, 2, 12, 20, 90, 30).inTimeOrder()
		for i, e := range h.evs {
			if e.Kind == chaos.EvWrite && e.Proc == 1 && e.T == at(60) {
				h.evs[i].Accepted = lateAccepted
			}
		}
		return h.asLogged()
	}
	r := chaos.Check(crowd(true).evs, zkParams)
	wantViolations(t, r, chaos.VOverLimit)
	if r.Stale.Unfenced != 0 {
		t.Fatalf("stale %+v", r.Stale)
	}
	// The paused holder's late write refused instead: two holders wrote.
	r = chaos.Check(crowd(false).evs, zkParams)
	wantViolations(t, r)
	if r.Stale.RejectedPaused != 1 || r.Database.Rows != 4 {
		t.Fatalf("stale %+v, database %+v", r.Stale, r.Database)
	}
}

func hasViolation(r *chaos.Report, kind string) bool {
	for _, v := range r.Violations {
		if v.Kind == kind {
			return true
		}
	}
	return false
}
