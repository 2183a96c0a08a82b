package chaos_test

import (
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

// atUS is at in microseconds.
func atUS(us int) int64 { return origin + int64(us)*int64(time.Microsecond) }

// inTransitRefusal is the shape of the five rejected-in-good-standing
// verdicts of the medium PostgreSQL campaign of seed 1795791198585344776
// (issue 32): proc 1 is granted token 10 at 0 and begins its write's
// transaction 0.7 ms later; the transaction waits in the database while
// proc 1 is told its lease is lost (session_unverified) at lost; proc 2
// acquires token 20 at acquired, begins its own write at called2 and
// commits; then proc 1's write is refused, answered at 151 ms. Times are
// in microseconds.
func inTransitRefusal(lost, acquired, called2 int) *history {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: atUS(-1000), Proc: 1, Op: 1, Resource: "a", Deadline: at(5000)})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: atUS(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.add(chaos.Event{Kind: chaos.EvLost, T: atUS(lost), Proc: 1, Op: 1, Resource: "a", Err: `zklock: lease on "a" lost: session_unverified`})
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: atUS(100_000), Proc: 2, Op: 1, Resource: "a", Deadline: at(5000)})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: atUS(acquired), Proc: 2, Op: 1, Resource: "a", Token: 20})
	h.add(chaos.Event{Kind: chaos.EvWrite, T: atUS(called2 + 2000), Called: atUS(called2), Sent: atUS(called2), Proc: 2, Op: 1, Resource: "a",
		Mode: chaos.ModeExclusive, Token: 20, Accepted: true, Outcome: chaos.WriteCommitted, WriteID: wid(2, 1)})
	h.add(chaos.Event{Kind: chaos.EvWrite, T: atUS(151_000), Called: atUS(700), Sent: atUS(700), Proc: 1, Op: 1, Resource: "a",
		Mode: chaos.ModeExclusive, Token: 10, Max: 20, Outcome: chaos.WriteStale, WriteID: wid(1, 1)})
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(200), Proc: 2, Op: 1, Resource: "a"})
	h.add(chaos.Event{Kind: chaos.EvReleased, T: at(201), Proc: 2, Op: 1, Resource: "a", Outcome: "ok"})
	h.add(chaos.Event{Kind: chaos.EvCommitted, T: at(9000), Proc: 2, Op: 1, Resource: "a", Mode: chaos.ModeExclusive, Token: 20,
		Sent: atUS(called2), WriteID: wid(2, 1), Order: 1})
	return h.readBack()
}

// The medium campaign's history: the write began 0.7 ms after the grant,
// the loss was told 127 ms later, the next holder came in 19 ms after
// that and wrote, and only then could the database refuse the first
// write. It was in transit across its loss: fencing's job, no violation.
// (Judged from the write's call, the rule before issue 32 failed it as
// rejected-in-good-standing.)
func TestCheckWriteRefusedAfterTheNextHoldersWrite(t *testing.T) {
	r := chaos.Check(inTransitRefusal(127_700, 146_700, 147_000).evs, dbParams)
	wantViolations(t, r)
	if r.Stale.Rejected != 1 || r.Stale.RejectedAfterLoss != 1 || r.Stale.RejectedInTransit != 1 {
		t.Fatalf("stale %+v", r.Stale)
	}
	if m := r.LossMargins["none"]; m == nil || m.N != 1 || m.MinMS != 19 {
		t.Fatalf("margins %+v", r.LossMargins)
	}
}

// What the rule must still fail: a holder told of its loss only after the
// next holder's write had begun, so that the database may have refused it
// while it was in good standing (and the next holder was in before it was
// told, a late signal too); the same loss told between the next holder's
// acquire and its write, which is excused as in transit but still a late
// loss signal; and a refusal no accepted write explains before it was
// answered, which stays judged from the write's call.
func TestCheckWriteRefusedInGoodStandingStillFails(t *testing.T) {
	r := chaos.Check(inTransitRefusal(147_100, 146_700, 147_000).evs, dbParams)
	wantViolations(t, r, chaos.VGoodStanding, chaos.VLateLoss)

	r = chaos.Check(inTransitRefusal(146_900, 146_700, 147_000).evs, dbParams)
	wantViolations(t, r, chaos.VLateLoss)
	if r.Stale.RejectedInTransit != 1 {
		t.Fatalf("stale %+v", r.Stale)
	}

	// The next holder's write began after the refusal was answered: it
	// cannot have raised the fence, so nothing explains the refusal but a
	// holder fenced off in good standing (and a store that refused a token
	// nobody had passed).
	r = chaos.Check(inTransitRefusal(127_700, 146_700, 152_000).evs, dbParams)
	wantViolations(t, r, chaos.VGoodStanding, chaos.VStoreHistory)
}
