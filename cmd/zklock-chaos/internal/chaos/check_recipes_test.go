package chaos_test

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
	"github.com/zklockkit/zklockkit/zklock"
)

// held adds a lease of the given mode: acquired at acq (its acquire began
// 1 ms before), released at rel (confirmed 1 ms later), with accepted
// writes at the given times. A semaphore's limit is in limit.
func (h *history) held(proc int, op int64, r, mode string, limit int, token int64, acq, rel int, writes ...int) *history {
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(acq - 1), Proc: proc, Op: op, Resource: r, Mode: mode, Limit: limit, Deadline: at(acq + 5000)})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(acq), Began: at(acq - 1), Proc: proc, Op: op, Resource: r, Mode: mode, Limit: limit,
		Token: token, Deadline: at(acq + 5000), Nodes: []string{nodeOf(r, token)}})
	for _, w := range writes {
		h.add(chaos.Event{Kind: chaos.EvWrite, T: at(w), Sent: at(w), Proc: proc, Op: op, Resource: r, Mode: storeMode(mode), Token: token, Accepted: true})
	}
	if rel > 0 {
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(rel), Proc: proc, Op: op, Resource: r, Mode: mode, Token: token})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(rel + 1), Proc: proc, Op: op, Resource: r, Mode: mode, Token: token, Outcome: "ok"})
	}
	return h
}

// inTimeOrder renumbers the history in time order: the store's order is
// the history's, and held adds each lease's events together.
func (h *history) inTimeOrder() *history {
	slices.SortStableFunc(h.evs, func(a, b chaos.Event) int { return cmp.Compare(a.T, b.T) })
	for i := range h.evs {
		h.evs[i].Seq = int64(i + 1)
	}
	return h
}

func nodeOf(r string, token int64) string {
	return "/root/" + r + "/_c_x-lock-" + string(rune('0'+token%10))
}

func storeMode(mode string) string {
	switch mode {
	case chaos.ModeRead, chaos.ModeDowngrade:
		return chaos.ModeRead
	case chaos.ModeSemaphore:
		return chaos.ModeSemaphore
	}
	return chaos.ModeExclusive
}

// Readers may hold and write together; a writer beside a reader may not,
// neither granted (the reader still held) nor writing (its write falls
// inside the reader's writes).
func TestCheckReadersAndWriter(t *testing.T) {
	h := (&history{}).held(1, 1, "rw-0", chaos.ModeRead, 0, 10, 0, 100, 1, 50).held(2, 1, "rw-0", chaos.ModeRead, 0, 11, 5, 110, 6, 60)
	h.held(3, 1, "rw-0", chaos.ModeWrite, 0, 12, 120, 200, 121, 150)
	wantViolations(t, chaos.Check(h.evs, params))

	// A broken store (it took the reader's 10 after the writer's 12) lets
	// the interleaving through: the checker sees it, the stale write
	// itself (the store in memory fences readers by writers' tokens), and
	// porcupine sees the store's verdicts fit no fenced register.
	h = (&history{}).held(1, 1, "rw-0", chaos.ModeRead, 0, 10, 0, 100, 1, 50).held(2, 1, "rw-0", chaos.ModeWrite, 0, 12, 20, 90, 30).inTimeOrder()
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VStaleCommitted, chaos.VSharedOverlap, chaos.VDoubleGrant, chaos.VStoreHistory)
	if r.SharedOverlaps != 1 || r.DoubleGrants != 1 || r.Stale.Committed != 1 || !strings.Contains(r.Violations[1].Detail, "proc 2 op 1 (w, token 0xc)") {
		t.Fatalf("counts %d %d %d, detail %s", r.SharedOverlaps, r.DoubleGrants, r.Stale.Committed, r.Violations[1].Detail)
	}
	// A reader let in beside a writer whose writes do not interleave with
	// its own is still a grant beside a writer.
	h = (&history{}).held(1, 1, "rw-0", chaos.ModeWrite, 0, 10, 0, 100, 1).held(2, 1, "rw-0", chaos.ModeRead, 0, 12, 20, 90, 30).inTimeOrder()
	wantViolations(t, chaos.Check(h.evs, params), chaos.VDoubleGrant)
}

// A semaphore of 2: two holders write together; a third beside them is
// over the limit, unless it was paused (its writes cannot be fenced, and
// are counted apart).
func TestCheckSemaphoreLimit(t *testing.T) {
	two := func() *history {
		return (&history{}).held(1, 1, "sem-0", chaos.ModeSemaphore, 2, 10, 0, 100, 1, 60).held(2, 1, "sem-0", chaos.ModeSemaphore, 2, 11, 5, 110, 6, 70)
	}
	wantViolations(t, chaos.Check(two().evs, params))

	h := two().held(3, 1, "sem-0", chaos.ModeSemaphore, 2, 12, 20, 90, 30).inTimeOrder()
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VOverLimit, chaos.VDoubleGrant)
	if !strings.Contains(r.Violations[0].Detail, "3 holders of a semaphore of 2 wrote at once") {
		t.Fatalf("detail %s", r.Violations[0].Detail)
	}

	// The first holder paused from 10 ms: overtaken, and its write at 65
	// is left out of the count.
	h = two()
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(10), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 1})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(3000), FaultID: 1})
	h.held(3, 1, "sem-0", chaos.ModeSemaphore, 2, 12, 20, 90, 30).inTimeOrder()
	r = chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.Stale.Unfenced != 1 || r.PausedOverlaps != 1 {
		t.Fatalf("unfenced %d, paused overlaps %d", r.Stale.Unfenced, r.PausedOverlaps)
	}
}

// A downgrade leaves no moment in which another writer can get in.
func TestCheckDowngradeGap(t *testing.T) {
	downgrade := func(h *history) *history {
		h.held(1, 1, "rw-0", chaos.ModeWrite, 0, 10, 0, 0, 1)
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(50), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeWrite, Detail: "downgrade"})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(61), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeWrite, Outcome: "downgraded"})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(60), Began: at(50), Proc: 1, Op: 2, Resource: "rw-0", Mode: chaos.ModeDowngrade,
			Token: 11, From: 1, Detail: "downgrade"})
		h.add(chaos.Event{Kind: chaos.EvWrite, T: at(70), Sent: at(70), Proc: 1, Op: 2, Resource: "rw-0", Mode: chaos.ModeRead, Token: 11, Accepted: true})
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(100), Proc: 1, Op: 2, Resource: "rw-0", Mode: chaos.ModeDowngrade})
		return h.add(chaos.Event{Kind: chaos.EvReleased, T: at(101), Proc: 1, Op: 2, Resource: "rw-0", Mode: chaos.ModeDowngrade, Outcome: "ok"})
	}
	r := chaos.Check(downgrade(&history{}).evs, params)
	wantViolations(t, r)
	if r.Downgrades != 1 {
		t.Fatalf("downgrades %d", r.Downgrades)
	}
	h := downgrade(&history{})
	h.held(2, 1, "rw-0", chaos.ModeWrite, 0, 12, 55, 58)
	wantViolations(t, chaos.Check(h.evs, params), chaos.VDowngradeGap)
}

// A Downgrade that gave the write lease up and then lost the read lease
// it made (ErrLeaseLost, "downgrade-lost") ended the write lease at its
// call, even when the loss reached the worker before the call returned: a
// reader let in by the write node's delete, during the call, is no late
// loss signal (the long run of 27 Nov, seed 1795818299634638510: proc 105's
// downgrade on rw-0 took 6 s across an isolated leader, proc 102's reader
// came in meanwhile). The same order of events after a plain Release is
// one: that loss came before the call.
func TestCheckLostDowngradeEndsAtTheCall(t *testing.T) {
	run := func(detail string) *chaos.Report {
		h := (&history{}).held(1, 1, "rw-0", chaos.ModeWrite, 0, 10, 0, 0, 1)
		h.held(2, 1, "rw-0", chaos.ModeRead, 0, 12, 60, 90, 70)
		// the worker hears of the loss (the lease's Done) before the call
		// returns, so the loss comes first in the history
		h.add(chaos.Event{Kind: chaos.EvLost, T: at(80), Proc: 1, Op: 1, Resource: "rw-0", Err: "lost: session_unverified"})
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(50), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeWrite, Token: 10, Detail: detail})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(81), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeWrite, Token: 10, Outcome: "lost"})
		return chaos.Check(h.evs, params)
	}
	wantViolations(t, run("downgrade-lost"))
	wantViolations(t, run(""), chaos.VLateLoss)
}

// A holder whose node the operator deletes must stop holding within the
// notice bound; the next holder, let in by the same deletion, is no double
// grant, and the holder's late write, refused, is no violation either.
func TestCheckOperatorDelete(t *testing.T) {
	run := func(lostAt int) *chaos.Report {
		h := (&history{}).held(1, 1, "res-0", chaos.ModeExclusive, 0, 10, 0, 0, 1)
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(100), Fault: string(chaos.FaultOpDelete), FaultID: 1, Target: nodeOf("res-0", 10),
			Resource: "res-0", Detail: "holder"})
		h.add(chaos.Event{Kind: chaos.EvHeal, T: at(101), FaultID: 1})
		h.held(2, 1, "res-0", chaos.ModeExclusive, 0, 20, 102, 3000, 103)
		h.write(1, 1, "res-0", 10, 104, false)
		h.add(chaos.Event{Kind: chaos.EvLost, T: at(lostAt), Proc: 1, Op: 1, Resource: "res-0", Err: "lost: node_deleted"})
		return chaos.Check(h.evs, params)
	}
	r := run(150)
	wantViolations(t, r)
	if r.OperatorOverlaps != 1 || r.Stale.RejectedAfterDelete != 1 || r.OpDeleteHolders != 1 || r.OpDeleteNotice.MedianMS != 50 {
		t.Fatalf("overlaps %d, rejected after delete %d, holders %d, notice %+v", r.OperatorOverlaps, r.Stale.RejectedAfterDelete, r.OpDeleteHolders, r.OpDeleteNotice)
	}
	// A holder that released 200 ms after the delete, never told, held a
	// lease whose node was gone without knowing.
	h := (&history{}).held(1, 1, "res-0", chaos.ModeExclusive, 0, 10, 0, 300, 1)
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(100), Fault: string(chaos.FaultOpDelete), FaultID: 1, Target: nodeOf("res-0", 10),
		Resource: "res-0", Detail: "requeued-holder"})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(101), FaultID: 1}).inTimeOrder()
	wantViolations(t, chaos.Check(h.evs, params), chaos.VDeleteUnnoticed)

	// The race runs from the delete's reply, the last moment ZooKeeper can
	// have committed it: a holder that released 60 ms after a slow reply
	// (180 ms after the delete was sent) may not have been told yet; one
	// that released 160 ms after it was not told in time.
	slowReply := func(release int) *chaos.Report {
		h := (&history{}).held(1, 1, "el-0", chaos.ModeElection, 0, 10, 0, release, 1)
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(100), Fault: string(chaos.FaultOpDelete), FaultID: 1, Target: nodeOf("el-0", 10),
			Resource: "el-0", Detail: "holder"})
		h.add(chaos.Event{Kind: chaos.EvHeal, T: at(220), FaultID: 1})
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	wantViolations(t, slowReply(280))
	wantViolations(t, slowReply(380), chaos.VDeleteUnnoticed)

	// A delete that found the node gone already (its reply came after the
	// holder's own release: the operator's session sat on a cut-off
	// server) deleted nothing: the holder, never told, is no violation
	// (the long run of 2026-11-26, el-0, fault 464).
	h = (&history{}).held(1, 1, "res-0", chaos.ModeExclusive, 0, 10, 0, 300, 1)
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(100), Fault: string(chaos.FaultOpDelete), FaultID: 1, Target: nodeOf("res-0", 10),
		Resource: "res-0", Detail: "holder"})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(2500), FaultID: 1, Detail: "gone already"})
	h.held(2, 1, "res-0", chaos.ModeExclusive, 0, 20, 400, 500, 401).inTimeOrder()
	r = chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.OpDeleteHolders != 0 || r.OpDeletesGone != 1 {
		t.Fatalf("holders hit %d, gone already %d", r.OpDeleteHolders, r.OpDeletesGone)
	}

	// A delete that failed (its connection closed: the operator's session
	// sat on a follower cut off from the leader), whose node a server
	// listed after it had ended, deleted nothing: the holder, never told,
	// is no violation (the long run of 2026-11-26 06:11, el-0, fault 629).
	// Without that listing it may have deleted the node at any moment up
	// to its end, and the holder must be told from there.
	failed := func(listedAt int) *chaos.Report {
		h := (&history{}).held(1, 1, "el-0", chaos.ModeElection, 0, 10, 0, 3000, 1)
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(100), Fault: string(chaos.FaultOpDelete), FaultID: 1, Target: nodeOf("el-0", 10),
			Resource: "el-0", Detail: "waiter"})
		h.add(chaos.Event{Kind: chaos.EvHeal, T: at(1700), FaultID: 1, Detail: "error: zk: connection closed"})
		h.add(chaos.Event{Kind: chaos.EvQueues, T: at(listedAt), End: at(listedAt + 5), Server: 2,
			Owners: map[string]int64{nodeOf("el-0", 10): 1}})
		h.add(chaos.Event{Kind: chaos.EvLocal, T: at(listedAt), Proc: 1, Session: 1, Nodes: []string{nodeOf("el-0", 10)}})
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	r = failed(2400)
	wantViolations(t, r)
	if r.OpDeleteHolders != 0 || r.OpDeletesUndone != 1 {
		t.Fatalf("holders hit %d, failed deletes that deleted nothing %d", r.OpDeleteHolders, r.OpDeletesUndone)
	}
	wantViolations(t, failed(1500), chaos.VDeleteUnnoticed) // listed before the delete ended: no proof

	r = run(2100)
	wantViolations(t, r, chaos.VDeleteUnnoticed)
	if !strings.Contains(r.Violations[0].Detail, "lost at") || !strings.Contains(r.Violations[0].Detail, "2000 ms later") {
		t.Fatalf("detail %s", r.Violations[0].Detail)
	}
}

// A waiter's grant can reach it after the operator deleted its node: the
// listing that granted it left ZooKeeper before the delete, on a slow link
// (the smoke run of 2026-11-26, seed 1795658688636237324). The holders let
// in by the delete are no double grant; the born-lost holder must still
// hear of its loss within the notice bound, counted from the delete.
func TestCheckGrantedAfterItsNodeWasDeleted(t *testing.T) {
	run := func(lostAt int) *chaos.Report {
		h := (&history{}).held(1, 1, "sem-0", chaos.ModeSemaphore, 2, 10, 0, 3000, 1)
		h.held(2, 1, "sem-0", chaos.ModeSemaphore, 2, 11, 5, 100, 6)
		// proc 3 queues at 10 with the node of token 12 ...
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(10), Proc: 3, Op: 1, Resource: "sem-0", Mode: chaos.ModeSemaphore, Limit: 2, Deadline: at(9000)})
		// ... which the operator deletes at 200, letting proc 4 in beside proc 1
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(200), Fault: string(chaos.FaultOpDelete), FaultID: 1, Target: nodeOf("sem-0", 12),
			Resource: "sem-0", Detail: "waiter"})
		h.add(chaos.Event{Kind: chaos.EvHeal, T: at(201), FaultID: 1})
		h.held(4, 1, "sem-0", chaos.ModeSemaphore, 2, 13, 202, 3000, 203)
		// ... and proc 3's grant arrives at 500, its loss after.
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(500), Began: at(10), Proc: 3, Op: 1, Resource: "sem-0", Mode: chaos.ModeSemaphore, Limit: 2,
			Token: 12, Deadline: at(9000), Nodes: []string{nodeOf("sem-0", 12)}})
		h.add(chaos.Event{Kind: chaos.EvLost, T: at(lostAt), Proc: 3, Op: 1, Resource: "sem-0", Err: "lost: node_deleted"})
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(lostAt + 1), Proc: 3, Op: 1, Resource: "sem-0", Mode: chaos.ModeSemaphore, Token: 12})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(lostAt + 2), Proc: 3, Op: 1, Resource: "sem-0", Mode: chaos.ModeSemaphore, Token: 12,
			Outcome: "lost", Err: "lost: node_deleted"})
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	r := run(510)
	wantViolations(t, r)
	if r.OperatorOverlaps != 1 || r.OpDeleteHolders != 1 || r.OpDeleteBornLost != 1 || r.OpDeleteNotice.MedianMS != 310 {
		t.Fatalf("overlaps %d, holders %d, born lost %d, notice %+v", r.OperatorOverlaps, r.OpDeleteHolders, r.OpDeleteBornLost, r.OpDeleteNotice)
	}
	// Told 1.5 s after the delete: too late, though only 1 s after its grant.
	r = run(1700)
	wantViolations(t, r, chaos.VDeleteUnnoticed)
}

// A grant can also come after a delete whose reply was lost, which may
// have taken effect at any moment up to its end: the holder that released
// untold before then is no violation, and one that released well after it
// is (the long run of 28 November, ZooKeeper store, res-3, fault 172: the
// waiter's grant 343 ms after the delete was sent, its release 454 ms
// after, the delete's connection closed at 774 ms; the store committed the
// holder's writes, which check the node, until its release).
func TestCheckGrantedBeforeAFailedDeleteEnded(t *testing.T) {
	run := func(release int) *chaos.Report {
		h := &history{}
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(0), Proc: 1, Op: 1, Resource: "res-3", Deadline: at(9000)})
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(100), Fault: string(chaos.FaultOpDelete), FaultID: 1, Target: nodeOf("res-3", 10),
			Resource: "res-3", Detail: "waiter"})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(443), Began: at(0), Proc: 1, Op: 1, Resource: "res-3", Token: 10, Deadline: at(9000),
			Nodes: []string{nodeOf("res-3", 10)}})
		h.write(1, 1, "res-3", 10, 450, true)
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(release), Proc: 1, Op: 1, Resource: "res-3", Token: 10})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(release + 10), Proc: 1, Op: 1, Resource: "res-3", Token: 10, Outcome: "ok"})
		h.add(chaos.Event{Kind: chaos.EvHeal, T: at(874), FaultID: 1, Detail: "error: zk: connection closed"})
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	wantViolations(t, run(554))
	wantViolations(t, run(1100), chaos.VDeleteUnnoticed)
}

// A multi-resource lease is judged per part, with each part's token.
func TestCheckMultiParts(t *testing.T) {
	h := &history{}
	// The lease's own token is its first node's (all-a, made last here);
	// all-b's node has its own, lower, token.
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "all-a,all-b", Mode: chaos.ModeMulti, Token: 30,
		Parts: map[string]int64{"all-a": 30, "all-b": 11}})
	h.write(1, 1, "all-a", 30, 1, true).write(1, 1, "all-b", 11, 2, true)
	h.held(2, 1, "all-b", chaos.ModeExclusive, 0, 12, 3, 20, 4)
	h.write(1, 1, "all-b", 11, 5, false)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(30), Proc: 1, Op: 1, Resource: "all-a,all-b", Mode: chaos.ModeMulti})
	r := chaos.Check(h.evs, params)
	// all-b changed hands while the lease held it: a double grant on that
	// part only, and the holder's write refused in good standing.
	wantViolations(t, r, chaos.VGoodStanding, chaos.VDoubleGrant)
	if v := r.Violations[1]; v.Resource != "all-b" || !strings.Contains(v.Detail, "proc 1 op 1 (token 0xb, release) still held when proc 2 op 1 (token 0xc)") {
		t.Fatalf("double grant on %s: %s", v.Resource, v.Detail)
	}
}

// The liveness figures miss their targets: a try that took 1.5 s, a
// semaphore slot left free for 1.9 s while a waiter waited.
func TestCheckLivenessTargets(t *testing.T) {
	h := (&history{}).held(1, 1, "res-0", chaos.ModeExclusive, 0, 10, 0, 100)
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(200), Proc: 2, Op: 1, Resource: "res-0", Detail: "try", Deadline: at(9000)})
	h.add(chaos.Event{Kind: chaos.EvAcquireFailed, T: at(1700), Began: at(200), Proc: 2, Op: 1, Resource: "res-0", Outcome: "locked", Detail: "try"})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VLiveness)
	if !strings.Contains(r.Violations[0].Detail, "try-acquire answer (main phase, quiet): 1 of 1 samples over 1250 ms, max 1500 ms") {
		t.Fatalf("detail %s", r.Violations[0].Detail)
	}
	// The report keeps each sample over a target, with when it began and
	// ended, to lay beside what else happened then.
	i := slices.IndexFunc(r.Liveness, func(f *chaos.Figure) bool { return f.Name == chaos.FigTry && f.Over == 1 })
	if i < 0 {
		t.Fatal("no try figure with its sample over the target")
	}
	if o := r.Liveness[i].OverSamples; len(o) != 1 || o[0] != (chaos.OverSample{From: at(200), To: at(1700), MS: 1500, What: o[0].What}) {
		t.Fatalf("samples over the target: %+v", o)
	}

	h = (&history{}).held(1, 1, "sem-0", chaos.ModeSemaphore, 2, 10, 0, 2500, 1).held(2, 1, "sem-0", chaos.ModeSemaphore, 2, 11, 5, 100, 6)
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(50), Proc: 3, Op: 1, Resource: "sem-0", Mode: chaos.ModeSemaphore, Limit: 2})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(2000), Proc: 3, Op: 1, Resource: "sem-0", Mode: chaos.ModeSemaphore, Limit: 2, Token: 12})
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(2100), Proc: 3, Op: 1, Resource: "sem-0"})
	r = chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VLiveness, chaos.VLiveness)
	for i, want := range []string{"release → next holder (main phase, quiet): 1 of 1 samples over 1000 ms, max 1900 ms",
		"free slot unclaimed while a waiter waited (main phase, quiet): 1 of 3 samples over 1000 ms, max 1899 ms"} {
		if !strings.Contains(r.Violations[i].Detail, want) {
			t.Fatalf("violation %d: %s, want %q", i, r.Violations[i].Detail, want)
		}
	}
	// The same wait during a fault of the ensemble is measured, not failed.
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(90), Fault: string(chaos.FaultLeaderKill), FaultID: 1})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(1500), FaultID: 1})
	wantViolations(t, chaos.Check(h.evs, params))
}

// The load phase lasts until the wind-down: its sessions run on after
// the campaign records load-end, while the nemesis finishes and the
// snapshots stop, and a hand-off of that time is the load's, not the main
// phase's (the long run of 27 Nov: 84 of its 89 samples over a liveness
// target came from that tail, reported as the main phase's).
func TestCheckLoadPhaseRunsToTheWindDown(t *testing.T) {
	phaseOf := func(events ...chaos.Event) string {
		h := &history{}
		h.add(chaos.Event{Kind: chaos.EvPhase, T: at(0), Detail: "main"})
		for _, e := range events {
			h.add(e)
		}
		h.held(1, 1, "res-0", chaos.ModeExclusive, 0, 10, 100, 3000)
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(2000), Proc: 2, Op: 1, Resource: "res-0", Deadline: at(20000)})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(4500), Proc: 2, Op: 1, Resource: "res-0", Token: 11})
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(4600), Proc: 2, Op: 1, Resource: "res-0"})
		h.add(chaos.Event{Kind: chaos.EvPhase, T: at(6000), Detail: "wind-down"})
		r := chaos.Check(h.inTimeOrder().evs, params)
		wantViolations(t, r, chaos.VLiveness, chaos.VLiveness) // the hand-off and the free slot, 1.5 s each
		for _, f := range r.Liveness {
			if f.Name == chaos.FigHandOff && f.N == 1 {
				return f.Phase
			}
		}
		t.Fatalf("no hand-off figure: %+v", r.Liveness)
		return ""
	}
	if got := phaseOf(chaos.Event{Kind: chaos.EvPhase, T: at(50), Detail: "load"}, chaos.Event{Kind: chaos.EvPhase, T: at(2500), Detail: "load-end"}); got != "load" {
		t.Errorf("a hand-off after load-end, before the wind-down: phase %q, want load", got)
	}
	if got := phaseOf(); got != "main" {
		t.Errorf("a hand-off in a campaign without a load phase: phase %q, want main", got)
	}
}

// A killed leader's successor must lead within zklock.LeaderGapBound of
// the session timeout and tickTime on an ensemble (4.75 s for the
// campaign's 3 s and 500 ms): a gap just inside passes, just outside fails.
func TestCheckLeaderlessGap(t *testing.T) {
	run := func(nextAt int) *chaos.Report {
		h := (&history{}).held(1, 1, "el-0", chaos.ModeElection, 0, 10, 0, 0, 1)
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(10), Proc: 2, Op: 1, Resource: "el-0", Mode: chaos.ModeElection, Deadline: at(20000)})
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(100), Fault: string(chaos.FaultKill), FaultID: 1, Proc: 1})
		h.add(chaos.Event{Kind: chaos.EvDied, T: at(100), Proc: 1, Outcome: "killed"})
		h.add(chaos.Event{Kind: chaos.EvHeal, T: at(300), FaultID: 1})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(nextAt), Proc: 2, Op: 1, Resource: "el-0", Mode: chaos.ModeElection, Token: 20})
		return chaos.Check(h.evs, params)
	}
	r := run(3400)
	wantViolations(t, r)
	var f *chaos.Figure
	for _, x := range r.Liveness {
		if x.Name == chaos.FigLeaderless {
			f = x
		}
	}
	if f == nil || f.N != 1 || f.MaxMS != 3300 || f.Window != "quiet" {
		t.Fatalf("leaderless figure %+v", f)
	}
	bound := int(zklock.LeaderGapBound(params.SessionTimeout, 500*time.Millisecond, true).Milliseconds())
	wantViolations(t, run(100+bound-50))
	wantViolations(t, run(100+bound+50), chaos.VLiveness)
}

// Each free slot of a semaphore is timed on its own. Three holders leave
// one after another while five waiters wait, and each waiter takes a slot
// 600 ms after one came free: some slot stays free for 1.5 s, but none
// goes unclaimed past the bound (the long run of 28 November read that as
// a slot free for 2 s on sem-1). A slot nobody takes is still caught.
func TestCheckFreeSlotTimesEachSlot(t *testing.T) {
	waiter := func(h *history, proc int, op int64, start, acq, rel int) {
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(start), Proc: proc, Op: op, Resource: "sem-0", Mode: chaos.ModeSemaphore, Limit: 3, Deadline: at(start + 9000)})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(acq), Began: at(start), Proc: proc, Op: op, Resource: "sem-0", Mode: chaos.ModeSemaphore, Limit: 3,
			Token: int64(20 + proc), Deadline: at(start + 9000), Nodes: []string{nodeOf("sem-0", int64(20+proc))}})
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(rel), Proc: proc, Op: op, Resource: "sem-0", Mode: chaos.ModeSemaphore, Token: int64(20 + proc)})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(rel + 1), Proc: proc, Op: op, Resource: "sem-0", Mode: chaos.ModeSemaphore, Token: int64(20 + proc), Outcome: "ok"})
	}
	freeSlot := func(r *chaos.Report) *chaos.Figure {
		for _, f := range r.Liveness {
			if f.Name == chaos.FigFreeSlot && f.N > 0 {
				return f
			}
		}
		t.Fatal("no free-slot figure")
		return nil
	}

	h := (&history{}).held(1, 1, "sem-0", chaos.ModeSemaphore, 3, 11, 1, 499).
		held(2, 1, "sem-0", chaos.ModeSemaphore, 3, 12, 1, 699).
		held(3, 1, "sem-0", chaos.ModeSemaphore, 3, 13, 1, 899)
	for i, w := range [][3]int{{100, 1100, 1200}, {100, 1300, 1400}, {100, 1500, 1600}, {100, 1800, 1900}, {100, 2000, 2100}} {
		waiter(h, 4+i, 1, w[0], w[1], w[2])
	}
	r := chaos.Check(h.inTimeOrder().evs, params)
	wantViolations(t, r)
	if f := freeSlot(r); f.MaxMS < 599 || f.MaxMS > 601 {
		t.Fatalf("free slot figure %+v: want each slot claimed 600 ms after it came free", f)
	}

	h = (&history{}).held(1, 1, "sem-0", chaos.ModeSemaphore, 3, 11, 1, 3000).
		held(2, 1, "sem-0", chaos.ModeSemaphore, 3, 12, 1, 3000).
		held(3, 1, "sem-0", chaos.ModeSemaphore, 3, 13, 1, 499)
	waiter(h, 4, 1, 100, 2600, 2700)
	r = chaos.Check(h.inTimeOrder().evs, params)
	wantViolations(t, r, chaos.VLiveness, chaos.VLiveness) // the hand-off and the free slot
	if f := freeSlot(r); f.MaxMS < 2099 || f.MaxMS > 2101 {
		t.Fatalf("free slot figure %+v: want the slot free from 500 to 2600 ms", f)
	}
}

// A hand-off starts at the Release call. The lane reports its release
// first and waits for the hub, holding the lock meanwhile: in the long
// runs of 27 November the hub answered up to seconds later, and the
// hand-off was measured from the report.
func TestCheckHandOffStartsAtTheReleaseCall(t *testing.T) {
	run := func(called int64) *chaos.Report {
		h := (&history{}).held(1, 1, "res-0", chaos.ModeExclusive, 0, 10, 1, 0)
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(100), Proc: 1, Op: 1, Resource: "res-0", Token: 10})
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(50), Proc: 2, Op: 1, Resource: "res-0", Deadline: at(9000)})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(1601), Called: called, Proc: 1, Op: 1, Resource: "res-0", Token: 10, Outcome: "ok"})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(1700), Began: at(50), Proc: 2, Op: 1, Resource: "res-0", Token: 11, Deadline: at(9000),
			Nodes: []string{nodeOf("res-0", 11)}})
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	r := run(at(1500))
	wantViolations(t, r)
	i := slices.IndexFunc(r.Liveness, func(f *chaos.Figure) bool { return f.Name == chaos.FigHandOff && f.N > 0 })
	if i < 0 || r.Liveness[i].MaxMS < 199 || r.Liveness[i].MaxMS > 201 {
		t.Fatalf("hand-off figure %d in %+v: want 200 ms, from the Release call", i, r.Liveness)
	}
	wantViolations(t, run(0), chaos.VLiveness) // no call time: from the report, 1.6 s
}

// A worker is served again when ZooKeeper answers it: a grant, or a try
// told the resource is locked. Its next grant may wait on holders: in the
// long run of 28 November, slot 4's tries were answered 21 ms after
// isolate-leader#477 healed, and its first grant came 3,786 ms later, on an
// election queued behind a leader. The figure measured that queue.
func TestCheckHealEndsAtTheFirstAnswer(t *testing.T) {
	run := func(tryAnswer bool) *chaos.Report {
		h := &history{}
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(100), Fault: string(chaos.FaultIsolateLeader), FaultID: 1, Target: "zk3(leader)", Nodes: []string{"zk3"}})
		h.add(chaos.Event{Kind: chaos.EvHeal, T: at(1000), FaultID: 1})
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(900), Proc: 1, Slot: 1, Op: 1, Resource: "el-0", Mode: chaos.ModeElection, Deadline: at(9900)})
		if tryAnswer {
			h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(1010), Proc: 1, Slot: 1, Op: 2, Resource: "res-0", Detail: "try", Deadline: at(10010)})
			h.add(chaos.Event{Kind: chaos.EvAcquireFailed, T: at(1021), Began: at(1010), Proc: 1, Slot: 1, Op: 2, Resource: "res-0", Outcome: "locked", Detail: "try"})
		}
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(4786), Began: at(900), Proc: 1, Slot: 1, Op: 1, Resource: "el-0", Mode: chaos.ModeElection,
			Token: 10, Deadline: at(9900), Nodes: []string{nodeOf("el-0", 10)}})
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(4800), Proc: 1, Slot: 1, Op: 1, Resource: "el-0", Mode: chaos.ModeElection, Token: 10})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(4801), Proc: 1, Slot: 1, Op: 1, Resource: "el-0", Mode: chaos.ModeElection, Token: 10, Outcome: "ok"})
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	heal := func(r *chaos.Report) *chaos.Figure {
		i := slices.IndexFunc(r.Liveness, func(f *chaos.Figure) bool { return f.Name == chaos.FigHeal && f.N > 0 })
		if i < 0 {
			t.Fatalf("no heal figure in %+v", r.Liveness)
		}
		return r.Liveness[i]
	}
	r := run(true)
	wantViolations(t, r)
	if f := heal(r); f.MaxMS < 20 || f.MaxMS > 22 {
		t.Fatalf("heal figure %+v: want 21 ms, to the try's answer", f)
	}
	r = run(false)
	wantViolations(t, r, chaos.VLiveness)
	if f := heal(r); f.MaxMS < 3785 || f.MaxMS > 3787 {
		t.Fatalf("heal figure %+v: want 3,786 ms, to the grant", f)
	}
}

// An isolated follower cuts off the workers whose sessions are on it (and
// the stuck, whose links to the others are cut too); the heal figure times
// those. A worker on another member was served throughout: its first
// answer after the heal times the queues it waits in (isolate-follower#156
// of 28 November: slot 3, on the leader, answered 3,527 ms after the heal).
func TestCheckHealTimesTheWorkersTheFollowerCutOff(t *testing.T) {
	run := func(stuck string, followerAnswer int) *chaos.Report {
		h := &history{}
		// proc 1 on zk1, proc 2 on zk3, before the cut
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(40), Proc: 1, Slot: 1, Op: 1, Resource: "res-0", Detail: "try", Deadline: at(9040), Server: 1})
		h.add(chaos.Event{Kind: chaos.EvAcquireFailed, T: at(45), Began: at(40), Proc: 1, Slot: 1, Op: 1, Resource: "res-0", Outcome: "locked", Detail: "try", Server: 1})
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(50), Proc: 2, Slot: 2, Op: 1, Resource: "el-0", Mode: chaos.ModeElection, Deadline: at(9050), Server: 3})
		detail := "mode=reset for=0.9s leader=zk3"
		if stuck != "" {
			detail += " stuck=" + stuck
		}
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(100), Fault: string(chaos.FaultIsolateFollower), FaultID: 1, Target: "zk1(follower)", Detail: detail, Nodes: []string{"zk1"}})
		h.add(chaos.Event{Kind: chaos.EvHeal, T: at(1000), FaultID: 1})
		// proc 1, served again: granted (res-1 is free) on another member
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(1010), Proc: 1, Slot: 1, Op: 2, Resource: "res-1", Deadline: at(10010), Server: 2})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(1000 + followerAnswer), Began: at(1010), Proc: 1, Slot: 1, Op: 2, Resource: "res-1",
			Token: 20, Deadline: at(10010), Nodes: []string{nodeOf("res-1", 20)}, Server: 2})
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(1000 + followerAnswer + 10), Proc: 1, Slot: 1, Op: 2, Resource: "res-1", Token: 20, Server: 2})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(1000 + followerAnswer + 11), Proc: 1, Slot: 1, Op: 2, Resource: "res-1", Token: 20, Outcome: "ok", Server: 2})
		// proc 2, on the leader, granted the election it queued for
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(4600), Began: at(50), Proc: 2, Slot: 2, Op: 1, Resource: "el-0", Mode: chaos.ModeElection,
			Token: 10, Deadline: at(9050), Nodes: []string{nodeOf("el-0", 10)}, Server: 3})
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(4700), Proc: 2, Slot: 2, Op: 1, Resource: "el-0", Mode: chaos.ModeElection, Token: 10, Server: 3})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(4701), Proc: 2, Slot: 2, Op: 1, Resource: "el-0", Mode: chaos.ModeElection, Token: 10, Outcome: "ok", Server: 3})
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	heal := func(r *chaos.Report) float64 {
		i := slices.IndexFunc(r.Liveness, func(f *chaos.Figure) bool { return f.Name == chaos.FigHeal && f.N > 0 })
		if i < 0 {
			t.Fatalf("no heal figure in %+v", r.Liveness)
		}
		return r.Liveness[i].MaxMS
	}
	r := run("", 40)
	wantViolations(t, r)
	if ms := heal(r); ms < 39 || ms > 41 {
		t.Fatalf("heal %v ms: want 40, the cut-off worker's answer (the worker on the leader was not cut off)", ms)
	}
	r = run("2", 40) // the nemesis cut proc 2's links to the others too
	wantViolations(t, r, chaos.VLiveness)
	if ms := heal(r); ms < 3599 || ms > 3601 {
		t.Fatalf("heal %v ms: want 3,600, the stuck worker's grant", ms)
	}
	r = run("", 3200) // the follower's own worker answered late
	wantViolations(t, r, chaos.VLiveness)
	if ms := heal(r); ms < 3199 || ms > 3201 {
		t.Fatalf("heal %v ms: want 3,200", ms)
	}
}

// slowHandOff is a history of one quiet hand-off of 1,300 ms on res-0:
// proc 1 releases at 11,000, proc 2 (waiting since 10,500) holds at
// 12,300.
func slowHandOff() *history {
	h := (&history{}).held(1, 1, "res-0", chaos.ModeExclusive, 0, 10, 10000, 0)
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(10500), Proc: 2, Op: 1, Resource: "res-0", Deadline: at(19500)})
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(11000), Proc: 1, Op: 1, Resource: "res-0", Token: 10})
	h.add(chaos.Event{Kind: chaos.EvReleased, T: at(11001), Called: at(11000), Proc: 1, Op: 1, Resource: "res-0", Token: 10, Outcome: "ok"})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(12300), Began: at(10500), Proc: 2, Op: 1, Resource: "res-0", Token: 11, Deadline: at(19500),
		Nodes: []string{nodeOf("res-0", 11)}})
	return h
}

// handOffWindow returns the window of r's hand-off figure, the one with
// samples.
func handOffWindow(t *testing.T, r *chaos.Report) string {
	t.Helper()
	i := slices.IndexFunc(r.Liveness, func(f *chaos.Figure) bool { return f.Name == chaos.FigHandOff && f.N > 0 })
	if i < 0 {
		t.Fatalf("no hand-off figure in %+v", r.Liveness)
	}
	return r.Liveness[i].Window
}

// A member's JVM stop (a garbage collection) holds its clients' requests,
// and a leader's every write; the backlog it leaves drains from the
// ensemble's spare capacity. It is felt as a fault is, by everyone, from
// its start to a session timeout after its end: a hand-off it overlaps is
// not quiet.
func TestCheckServerStopIsFeltAsAFault(t *testing.T) {
	run := func(stops ...[2]int) *chaos.Report {
		h := slowHandOff()
		for _, s := range stops { // recorded at the end, as the campaign does
			h.add(chaos.Event{Kind: chaos.EvServerStop, T: at(s[0]), End: at(s[1]), Server: 2, Detail: "GenCollectForAllocation"})
		}
		return chaos.Check(h.evs, params)
	}
	window := func(r *chaos.Report) string { return handOffWindow(t, r) }
	r := run()
	wantViolations(t, r, chaos.VLiveness, chaos.VLiveness) // the hand-off, and the slot it left free
	if w := window(r); w != "quiet" {
		t.Fatalf("no stop: the 1,300 ms hand-off is %s", w)
	}
	for _, c := range []struct {
		stop [2]int
		felt bool
	}{
		{[2]int{11200, 11700}, true},  // inside the hand-off
		{[2]int{7000, 8100}, true},    // felt until 11,100
		{[2]int{7000, 7900}, false},   // felt until 10,900: over before the release
		{[2]int{12400, 12600}, false}, // after the grant
	} {
		r := run(c.stop)
		if r.ServerStops.N != 1 || r.ServerStops.MaxMS != float64(c.stop[1]-c.stop[0]) {
			t.Fatalf("stop %v: server stops %+v", c.stop, r.ServerStops)
		}
		want, wantV := "quiet", []string{chaos.VLiveness, chaos.VLiveness}
		if c.felt {
			want, wantV = "faults", nil
		}
		if w := window(r); w != want {
			t.Errorf("stop %v: the hand-off is %s, want %s", c.stop, w, want)
		}
		wantViolations(t, r, wantV...)
	}
}

// ZooKeeper's slow requests are laid beside each sample over its target:
// the slowest any member reported that could have run during the sample
// (a sample from T to End whose longest request took L ran within
// [T-L, End]). A member serving none of the sample's processes excuses
// nothing (here no process names its member): the verdict stands.
func TestCheckOverSamplesNameZooKeepersSlowest(t *testing.T) {
	run := func(slow ...chaos.Event) *chaos.Report {
		h := slowHandOff()
		for _, e := range slow {
			h.add(e)
		}
		return chaos.Check(h.evs, params)
	}
	slow := func(server, from, to int, ms int64) chaos.Event {
		return chaos.Event{Kind: chaos.EvServerSlow, T: at(from), End: at(to), Server: server, Latency: ms, Outstanding: 7}
	}
	handOff := func(r *chaos.Report) chaos.OverSample {
		i := slices.IndexFunc(r.Liveness, func(f *chaos.Figure) bool { return f.Name == chaos.FigHandOff && f.N > 0 })
		if i < 0 || len(r.Liveness[i].OverSamples) != 1 {
			t.Fatalf("no hand-off over its target in %+v", r.Liveness)
		}
		return r.Liveness[i].OverSamples[0]
	}
	for _, c := range []struct {
		slow []chaos.Event
		want string // the start of OverSample.ZK
	}{
		{nil, ""},
		{[]chaos.Event{slow(1, 9000, 9250, 300)}, ""},                                                         // over before the release
		{[]chaos.Event{slow(1, 12500, 12750, 150)}, ""},                                                       // began after the grant
		{[]chaos.Event{slow(1, 12400, 12650, 150)}, "zk1 150 ms"},                                             // began by 12,250
		{[]chaos.Event{slow(3, 10800, 11050, 120)}, "zk3 120 ms"},                                             // ended after the release
		{[]chaos.Event{slow(3, 11500, 11750, 120), slow(2, 11750, 12000, 840)}, "zk2 840 ms (7 outstanding)"}, // the slowest
	} {
		r := run(c.slow...)
		wantViolations(t, r, chaos.VLiveness, chaos.VLiveness) // the verdict stands
		if got := handOff(r).ZK; !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("slow %+v: ZK %q, want %q…", c.slow, got, c.want)
		}
		if r.ServerSlow.N != len(c.slow) {
			t.Errorf("slow %+v: %d slow samples reported", c.slow, r.ServerSlow.N)
		}
	}
	var b strings.Builder
	r := run(slow(2, 11750, 12000, 840))
	r.WriteTable(&b)
	for _, want := range []string{"ZooKeeper's slow requests", "ZooKeeper: zk2 840 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, b.String())
		}
	}
}

// A member that lists a node the ensemble does not have (a deposed
// leader's write it kept) shows it to its clients as a node ahead that
// never goes: a waiter there waits until its acquire gives up, and the
// queue behind its node with it. The long run of 28 November (ZooKeeper
// store) had rw-0's hand-offs wait 3.1 s so, behind proc 71's writer on
// zk1. Such a sample is ZooKeeper's ("diverged", no target) only with the
// evidence: a disputed node in that queue while a waiter on a member that
// listed it waited. On another member, or another queue, it is quiet.
func TestCheckHandOffBehindADivergedMemberIsZooKeepers(t *testing.T) {
	run := func(waiterOn int, queue string) *chaos.Report {
		h := slowHandOff()
		// proc 2 (the next holder) on zk2; proc 3 waits on res-0 from
		// 10,000, its node ahead of proc 2's, until its acquire times out
		for i := range h.evs {
			if h.evs[i].Proc == 2 {
				h.evs[i].Server = 2
			}
		}
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(10000), Proc: 3, Op: 1, Resource: "res-0", Deadline: at(12290), Server: waiterOn})
		h.add(chaos.Event{Kind: chaos.EvAcquireFailed, T: at(12290), Began: at(10000), Proc: 3, Op: 1, Resource: "res-0", Outcome: "timeout",
			Err: "zklock: acquire \"res-0\": context deadline exceeded", Server: waiterOn})
		kept := "/root/" + queue + "/_c_kept-lock-0000000001"
		for ms := 9000; ms <= 13000; ms += 1000 {
			owners := map[string]int64{}
			server := 2
			if ms%2000 == 1000 { // zk1 at 9,000, 11,000 and 13,000
				owners[kept], server = 0x300, 1
			}
			h.queuesOn(ms, server, owners)
		}
		h.reports(9000, 13000, 0x300, kept) // its owner knows it: no phantom of zklock's
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	window := func(r *chaos.Report) string { return handOffWindow(t, r) }
	r := run(1, "res-0")
	wantViolations(t, r, chaos.VDivergence)
	if w := window(r); w != "diverged" {
		t.Fatalf("a waiter on the member that kept a node of res-0: the hand-off is %s, want diverged", w)
	}
	var b bytes.Buffer
	r.WriteTable(&b)
	if !strings.Contains(b.String(), "| release → next holder | main | diverged | 1 | 1300 |") {
		t.Fatalf("table:\n%s", b.String())
	}
	for _, c := range []struct {
		on    int
		queue string
	}{
		{3, "res-0"}, // the waiter on a member that never listed it
		{1, "res-1"}, // the kept node in another queue
	} {
		r := run(c.on, c.queue)
		wantViolations(t, r, chaos.VDivergence, chaos.VLiveness, chaos.VLiveness)
		if w := window(r); w != "quiet" {
			t.Errorf("waiter on zk%d, kept node in %s: the hand-off is %s, want quiet", c.on, c.queue, w)
		}
	}
}

// A member that holds a request stallMin (200 ms) or more is, to its
// clients, stopped that long: a hand-off or a free slot during which a
// member serving one of its processes (the releaser, a waiter) did so is
// ZooKeeper's ("zk-slow", no target). The long runs of 28 November failed
// on load-phase hand-offs of 1 to 2.5 s, each on a member answering in 203
// to 716 ms with hundreds of requests outstanding, no process stopped.
// Slower than that on a member no process of the sample used, or less
// than stallMin, or outside the sample, excuses nothing.
func TestCheckHandOffOnASlowMemberIsZooKeepers(t *testing.T) {
	run := func(slow ...chaos.Event) *chaos.Report {
		h := slowHandOff() // released at 11,000, the next holder in at 12,300
		for i := range h.evs {
			switch h.evs[i].Proc {
			case 1:
				h.evs[i].Server = 3 // the releaser on zk3
			case 2:
				h.evs[i].Server = 2 // the waiter on zk2
			}
		}
		for _, e := range slow {
			h.add(e)
		}
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	slow := func(server, from, to int, ms int64) chaos.Event {
		return chaos.Event{Kind: chaos.EvServerSlow, T: at(from), End: at(to), Server: server, Latency: ms, Outstanding: 300}
	}
	for _, c := range []struct {
		what string
		slow chaos.Event
		want string
	}{
		{"the waiter's member, 250 ms", slow(2, 11500, 11750, 250), "zk-slow"},
		{"the waiter's member, exactly stallMin", slow(2, 11500, 11750, 200), "zk-slow"},
		// the free slot it left is the waiter's alone (its delete was answered)
		{"the releaser's member, 300 ms", slow(3, 11000, 11250, 300), "zk-slow"},
		{"the waiter's member, 150 ms", slow(2, 11500, 11750, 150), "quiet"},
		{"a member no one of the sample used, 900 ms", slow(1, 11500, 11750, 900), "quiet"},
		{"the waiter's member, after the grant", slow(2, 13000, 13250, 250), "quiet"},
		{"the waiter's member, over before the release", slow(2, 10500, 10750, 250), "quiet"},
	} {
		r := run(c.slow)
		if w := handOffWindow(t, r); w != c.want {
			t.Errorf("%s: the hand-off is %s, want %s", c.what, w, c.want)
		}
		switch {
		case c.want == "quiet":
			wantViolations(t, r, chaos.VLiveness, chaos.VLiveness) // the hand-off, and the slot it left free
		case c.slow.Server == 3:
			wantViolations(t, r, chaos.VLiveness) // the free slot
		default:
			wantViolations(t, r)
		}
	}
	var b strings.Builder
	run(slow(2, 11500, 11750, 250)).WriteTable(&b)
	if !strings.Contains(b.String(), "| release → next holder | main | zk-slow | 1 | 1300 |") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// A lease whose process was stopped during its acquire call, and handed
// out only once it ran again, after a writer came in meanwhile, is a
// stopped holder's (fencing's job), not a double grant: its grant may have
// been decided before the stop (the CI rehearsal of 29 November, seed
// 1795922635249849546, a Downgrade stopped 10 ms in). The same events with
// no stop are one, and so is a stop that ended more than HangGrace (2 s
// here) before the writer came in.
func TestCheckStoppedWhileAcquiring(t *testing.T) {
	run := func(stopFrom, stopTo int) *chaos.Report {
		h := (&history{}).held(2, 1, "rw-0", chaos.ModeWrite, 0, 12, 3000, 4000, 3001)
		if stopTo > 0 {
			h.add(chaos.Event{Kind: chaos.EvFault, T: at(stopFrom), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 1})
			h.add(chaos.Event{Kind: chaos.EvHeal, T: at(stopTo), FaultID: 1})
		}
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(50), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeRead, Deadline: at(9000)})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(3101), Began: at(50), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeRead,
			Token: 11, Deadline: at(9000), Nodes: []string{nodeOf("rw-0", 11)}})
		h.add(chaos.Event{Kind: chaos.EvLost, T: at(3110), Proc: 1, Op: 1, Resource: "rw-0", Err: "lost: session_unverified"})
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(3120), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeRead, Token: 11})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(3121), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeRead, Token: 11, Outcome: "lost"})
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	r := run(52, 3100)
	wantViolations(t, r)
	if r.PausedOverlaps != 1 {
		t.Fatalf("paused overlaps %d, want 1", r.PausedOverlaps)
	}
	// (Not stopped, the reader also waited 3 s on a free lock.)
	wantViolations(t, run(0, 0), chaos.VDoubleGrant, chaos.VLiveness)
	wantViolations(t, run(52, 900), chaos.VDoubleGrant)
}
