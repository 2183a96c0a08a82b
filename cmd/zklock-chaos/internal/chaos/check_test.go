package chaos_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

// history builds a synthetic history; times are milliseconds from an
// arbitrary origin.
type history struct {
	evs []chaos.Event
}

const origin = int64(1_700_000_000_000_000_000)

func at(ms int) int64 { return origin + int64(ms)*int64(time.Millisecond) }

func (h *history) add(e chaos.Event) *history {
	e.Seq = int64(len(h.evs) + 1)
	h.evs = append(h.evs, e)
	return h
}

// lease adds a whole critical section: acquired at acq, one accepted write
// at acq+1, released at rel.
func (h *history) lease(proc int, op int64, r string, token int64, acq, rel int) *history {
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(acq - 1), Proc: proc, Op: op, Resource: r, Deadline: at(acq + 5000)})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(acq), Proc: proc, Op: op, Resource: r, Token: token, Deadline: at(acq + 5000)})
	h.write(proc, op, r, token, acq+1, true)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(rel), Proc: proc, Op: op, Resource: r, Token: token})
	return h.add(chaos.Event{Kind: chaos.EvReleased, T: at(rel + 1), Proc: proc, Op: op, Resource: r, Token: token, Outcome: "ok"})
}

// save writes the history to path as a campaign's history.jsonl.
func (h *history) save(t *testing.T, path string) {
	t.Helper()
	var b bytes.Buffer
	for _, e := range h.evs {
		line, _ := json.Marshal(e)
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (h *history) write(proc int, op int64, r string, token int64, t int, accepted bool) *history {
	return h.add(chaos.Event{Kind: chaos.EvWrite, T: at(t), Sent: at(t), Proc: proc, Op: op, Resource: r, Token: token, Accepted: accepted})
}

var params = chaos.Params{SessionTimeout: 3 * time.Second, HangGrace: 2 * time.Second}

func kinds(r *chaos.Report) []string {
	var ks []string
	for _, v := range r.Violations {
		ks = append(ks, v.Kind)
	}
	return ks
}

func wantViolations(t *testing.T, r *chaos.Report, want ...string) {
	t.Helper()
	got := kinds(r)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		var b bytes.Buffer
		r.WriteViolations(&b)
		t.Fatalf("violations %v, want %v%s", got, want, b.String())
	}
	// ZooKeeper's own verdicts are listed but do not fail the run.
	zklocks := 0
	for _, k := range want {
		if k != chaos.VDivergence && k != chaos.VDivergedLease && k != chaos.VStoreDiverged {
			zklocks++
		}
	}
	if r.Pass != (zklocks == 0) {
		t.Fatalf("Pass = %t with violations %v", r.Pass, got)
	}
}

func TestCheckCleanHandOff(t *testing.T) {
	h := (&history{}).lease(1, 1, "a", 10, 0, 50).lease(2, 1, "a", 20, 60, 90).lease(1, 2, "b", 30, 10, 20)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.Acquisitions != 3 || r.AcquireAttempts != 3 || r.Writes.Accepted != 3 || r.Releases["ok"] != 3 {
		t.Fatalf("counts: %+v", r)
	}
}

// Two leases whose accepted writes interleave in the store overlapped:
// that is the violation fencing exists to prevent.
func TestCheckOverlappingAcceptedWrites(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(1), Proc: 2, Op: 1, Resource: "a", Token: 20})
	h.write(1, 1, "a", 10, 2, true).write(2, 1, "a", 20, 3, true).write(1, 1, "a", 10, 4, true)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(5), Proc: 1, Op: 1, Resource: "a"})
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(6), Proc: 2, Op: 1, Resource: "a"})
	r := chaos.Check(h.evs, params)
	// The store here is broken (it took token 10 after 20): the
	// interleaving, the stale write it let through, the hand-off and the
	// store's history (no fenced register answers so) all show.
	wantViolations(t, r, chaos.VOverlap, chaos.VStaleCommitted, chaos.VDoubleGrant, chaos.VStoreHistory)
	if r.OverlappingAcceptedWrites != 1 || r.Stale.Committed != 1 || r.DoubleGrants != 1 {
		t.Fatalf("counts: overlap %d, stale committed %d, double %d", r.OverlappingAcceptedWrites, r.Stale.Committed, r.DoubleGrants)
	}
	if len(r.Violations[0].Slice) == 0 {
		t.Fatal("no history slice")
	}
}

func TestCheckDoubleGrant(t *testing.T) {
	h := (&history{}).lease(1, 1, "a", 10, 0, 50).lease(2, 1, "a", 20, 40, 90)
	wantViolations(t, chaos.Check(h.evs, params), chaos.VDoubleGrant)
}

// A holder cut off by the network must hear of its loss before the next
// holder acquires; if not, the run fails even though fencing would have
// refused its writes.
func TestCheckLateLossSignal(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(100), Fault: string(chaos.FaultBlackhole), FaultID: 1, Proc: 1})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.write(1, 1, "a", 10, 1, true)
	h.lease(2, 1, "a", 20, 3000, 3100)
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(3050), Proc: 1, Op: 1, Resource: "a", Err: `zklock: lease on "a" lost: session_unverified`})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(4000), FaultID: 1})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VLateLoss)
	if m := r.LossMargins["blackhole"]; m == nil || m.N != 1 || m.MinMS != -50 || m.Before != 0 {
		t.Fatalf("margins: %+v", r.LossMargins)
	}
	if r.NetworkLoss.N != 1 || r.Losses["session_unverified"] != 1 {
		t.Fatalf("network %+v losses %v", r.NetworkLoss, r.Losses)
	}
}

// The same late signal from a paused holder is fencing's job: no
// violation, provided its late write was refused.
func TestCheckPausedHolderFenced(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.write(1, 1, "a", 10, 1, true)
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(10), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 1})
	h.lease(2, 1, "a", 20, 3500, 3600)
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(5000), FaultID: 1})
	h.write(1, 1, "a", 10, 5001, false)
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(5002), Proc: 1, Op: 1, Resource: "a", Err: `zklock: lease on "a" lost: session_unverified`})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.PausedOverlaps != 1 || r.Stale.Rejected != 1 || r.Stale.RejectedPaused != 1 {
		t.Fatalf("paused overlaps %d, stale %+v", r.PausedOverlaps, r.Stale)
	}
	if m := r.LossMargins["pause"]; m == nil || m.MinMS != -1502 {
		t.Fatalf("margins: %+v", r.LossMargins)
	}
	r.Campaign, r.Targets.Acquisitions, r.Targets.FaultsPerKind = "synthetic", 2, 1
	var b bytes.Buffer
	r.WriteTable(&b)
	for _, want := range []string{"| stale writes rejected by fencing | 1 (1 paused, 0 after loss, 0 after an operator's delete) |", "| pause | 1 | 0 | 1 | -1502 |", "PASS"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// A write refused while its writer had no reason to doubt its lease means
// someone else held the lock at the same time.
func TestCheckRejectedInGoodStanding(t *testing.T) {
	h := (&history{}).lease(1, 1, "a", 10, 0, 100)
	h.write(1, 1, "a", 10, 50, false)
	// (and the store refused a token no other had passed: not a fenced
	// register's answer)
	wantViolations(t, chaos.Check(h.evs, params), chaos.VGoodStanding, chaos.VStoreHistory)
}

// A write sent after the loss signal (the worker's check-then-act race) is
// stale but no violation.
func TestCheckWriteAfterLoss(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(2000), Proc: 1, Op: 1, Resource: "a", Err: "lost: node_deleted"})
	h.lease(2, 1, "a", 20, 2100, 2200)
	h.write(1, 1, "a", 10, 2150, false)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.Stale.RejectedAfterLoss != 1 || r.LossMargins["none"].MinMS != 100 {
		t.Fatalf("stale %+v margins %+v", r.Stale, r.LossMargins["none"])
	}
}

func TestCheckKilledHolder(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.add(chaos.Event{Kind: chaos.EvDied, T: at(10), Proc: 1, Outcome: "killed"})
	h.lease(2, 1, "a", 20, 3300, 3400)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.Losses["killed"] != 1 || r.KillTakeover.N != 1 || r.KillTakeover.MinMS != 3290 {
		t.Fatalf("losses %v kill %+v", r.Losses, r.KillTakeover)
	}
}

func TestCheckHungAcquire(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvHung, T: at(7000), Proc: 1, Op: 1, Resource: "a", Deadline: at(5000)})
	h.add(chaos.Event{Kind: chaos.EvAcquireFailed, T: at(9000), Proc: 1, Op: 1, Resource: "a", Deadline: at(5000), Outcome: "timeout"})
	// a paused worker is excused
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(4000), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 2})
	h.add(chaos.Event{Kind: chaos.EvHung, T: at(7000), Proc: 2, Op: 1, Resource: "a", Deadline: at(5000)})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(8000), FaultID: 1})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VHung)
	if r.HungAcquires != 1 {
		t.Fatalf("hung %d", r.HungAcquires)
	}
}

// An acquire that fails with an error no fault explains (go-zookeeper's
// own, say) fails the campaign; the errors a fault explains do not.
func TestCheckUnexpectedAcquireError(t *testing.T) {
	h := &history{}
	for i, outcome := range []string{"locked", "timeout", "timeout-unavailable", "canceled", "closed", "unavailable", "error"} {
		h.add(chaos.Event{Kind: chaos.EvAcquireFailed, T: at(100 * i), Proc: 1, Op: int64(i + 1), Resource: "a", Deadline: at(5000), Outcome: outcome, Err: "x"})
	}
	wantViolations(t, chaos.Check(h.evs, params), chaos.VUnexpectedError)
}

func TestCheckOrphansAndCrashes(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvOrphan, T: at(0), Target: "/x/a/_c_1-lock-0000000001", Detail: "owner is live worker proc 1"})
	h.add(chaos.Event{Kind: chaos.EvDied, T: at(1), Proc: 2, Outcome: "crash", Detail: "exited: exit status 2"})
	h.add(chaos.Event{Kind: chaos.EvNote, T: at(2), Proc: 3, Outcome: chaos.VNotQuiesced, Detail: "worker proc 3 did not quiesce"})
	h.add(chaos.Event{Kind: chaos.EvNote, T: at(3), Proc: 4, Op: 9, Resource: "all-a,all-b", Outcome: "leftover", Nodes: []string{"/x/all-a/n"}})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VOrphan, chaos.VCrash, chaos.VNotQuiesced, chaos.VLeftover)
	if r.Orphans != 1 || r.WorkerCrashes != 1 {
		t.Fatalf("orphans %d crashes %d", r.Orphans, r.WorkerCrashes)
	}
}

func TestReadHistoryRoundTrip(t *testing.T) {
	h := (&history{}).lease(1, 1, "a", 10, 0, 50)
	var b bytes.Buffer
	for _, e := range h.evs {
		line, _ := json.Marshal(e)
		b.Write(append(line, '\n'))
	}
	got, err := chaos.ReadHistory(&b)
	if err != nil || len(got) != len(h.evs) || !reflect.DeepEqual(got[1], h.evs[1]) {
		t.Fatalf("read %d events, %v", len(got), err)
	}
	if _, err := chaos.ReadHistory(strings.NewReader("{bad\n")); err == nil {
		t.Fatal("bad line accepted")
	}
}

func TestPreset(t *testing.T) {
	for _, name := range []string{"short", "long", "smoke"} {
		c, err := chaos.Preset(name)
		if err != nil || c.Name != name {
			t.Fatalf("%s: %+v %v", name, c, err)
		}
	}
	if _, err := chaos.Preset("huge"); err == nil {
		t.Fatal("unknown preset accepted")
	}
	if s, l := chaos.Short(), chaos.Long(); s.Acquisitions < 1000 || s.FaultsPerKind < 5 || l.Acquisitions < 20000 || l.FaultsPerKind < 50 {
		t.Fatalf("targets below the issue's: %+v %+v", s, l)
	}
}

func TestCheckHistoryFile(t *testing.T) {
	path := t.TempDir() + "/history.jsonl"
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvNote, T: at(0), Detail: `campaign {"Name":"short","Acquisitions":2,"FaultsPerKind":1,"SessionTimeout":3000000000,"Faults":["kill"]}`})
	h.lease(1, 1, "a", 10, 10, 20).lease(2, 1, "a", 20, 30, 40)
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(50), Fault: "kill", FaultID: 1, Proc: 1})
	h.save(t, path)
	r, err := chaos.CheckHistoryFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Pass || r.Campaign != "short" || r.SessionTimeoutMS != 3000 || r.Acquisitions != 2 || r.DurationSec != 0.05 {
		t.Fatalf("report: %+v", r)
	}
	// A campaign with lanes must show a lease passed between two lanes of
	// one process (same proc, same session); one without never passes.
	for _, tc := range []struct {
		lanes   string
		session int64
		pass    bool
	}{{`,"Lanes":2`, 0, false}, {`,"Lanes":2`, 7, true}} {
		h := &history{}
		h.add(chaos.Event{Kind: chaos.EvNote, T: at(0), Detail: `campaign {"Name":"short","Acquisitions":2,"FaultsPerKind":1,"SessionTimeout":3000000000,"Faults":["kill"]` + tc.lanes + `}`})
		h.lease(1, 1, "a", 10, 10, 20).lease(1, 2, "a", 20, 30, 40)
		for i := range h.evs {
			if h.evs[i].Kind == chaos.EvAcquired {
				h.evs[i].Session = tc.session
			}
		}
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(50), Fault: "kill", FaultID: 1, Proc: 1})
		h.save(t, path)
		r, err := chaos.CheckHistoryFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Pass != tc.pass || r.Lanes != 2 {
			t.Fatalf("lanes 2, session %d: pass %v (want %v), lanes %d, missed %v", tc.session, r.Pass, tc.pass, r.Lanes, r.Targets.Missed)
		}
	}
	if err := os.WriteFile(path, []byte(`{"seq":1,"kind":"start"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := chaos.CheckHistoryFile(path); err == nil {
		t.Fatal("a history without its campaign record was accepted")
	}
}

// A paused holder that, once continued, calls Release before its loss
// watcher has run is still a paused holder overtaken, not a double grant:
// Release answered with the loss.
func TestCheckPausedHolderReleasesAfterResume(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(10), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 1})
	h.lease(2, 1, "a", 20, 3500, 3600)
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(5000), FaultID: 1})
	h.write(1, 1, "a", 10, 5001, false)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(5002), Proc: 1, Op: 1, Resource: "a"})
	h.add(chaos.Event{Kind: chaos.EvReleased, T: at(5003), Proc: 1, Op: 1, Resource: "a", Outcome: "lost"})
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(5004), Proc: 1, Op: 1, Resource: "a", Err: "lost: session_unverified"})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.PausedOverlaps != 1 || r.Stale.RejectedPaused != 1 {
		t.Fatalf("paused overlaps %d, stale %+v", r.PausedOverlaps, r.Stale)
	}
	// Without the pause it is a late loss signal; with a plain release
	// before the next acquire it would be a double grant.
	h2 := &history{}
	h2.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h2.lease(2, 1, "a", 20, 3500, 3600)
	h2.add(chaos.Event{Kind: chaos.EvRelease, T: at(5002), Proc: 1, Op: 1, Resource: "a"})
	h2.add(chaos.Event{Kind: chaos.EvReleased, T: at(5003), Proc: 1, Op: 1, Resource: "a", Outcome: "lost"})
	h2.add(chaos.Event{Kind: chaos.EvLost, T: at(5004), Proc: 1, Op: 1, Resource: "a", Err: "lost: session_unverified"})
	wantViolations(t, chaos.Check(h2.evs, params), chaos.VLateLoss)
}

// A pause that ended well before the next holder came in excuses nothing.
func TestCheckOldPauseExcusesNothing(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(10), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 1})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(500), FaultID: 1})
	h.lease(2, 1, "a", 20, 5000, 5100)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(6000), Proc: 1, Op: 1, Resource: "a"})
	wantViolations(t, chaos.Check(h.evs, params), chaos.VDoubleGrant)
}

// A holder stopped in the middle of sending a write: its send time is
// before the pause, the store gets the bytes after it.
func TestCheckPausedMidSend(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(5), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 1})
	h.lease(2, 1, "a", 20, 3500, 3600)
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(5000), Proc: 1, Op: 1, Resource: "a", Err: "lost: session_unverified"})
	h.add(chaos.Event{Kind: chaos.EvWrite, T: at(5001), Sent: at(1), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(5001), FaultID: 1})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.Stale.RejectedPaused != 1 {
		t.Fatalf("stale %+v", r.Stale)
	}
}

// Losses to network faults are split by whether the holder's session then
// expired (its process shows a new session later) or lived on.
func TestCheckLossMarginsBySession(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(0), Fault: string(chaos.FaultBlackhole), FaultID: 1, Proc: 1})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(1), Proc: 1, Op: 1, Resource: "a", Token: 10, Session: 100})
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(2000), Proc: 1, Op: 1, Resource: "a", Err: "lost: session_unverified"})
	h.lease(2, 1, "a", 20, 2900, 3000)
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(4000), FaultID: 1})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(5000), Proc: 1, Op: 2, Resource: "b", Token: 30, Session: 101})
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(6000), Fault: string(chaos.FaultSlow), FaultID: 2, Proc: 1})
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(8000), Proc: 1, Op: 2, Resource: "b", Err: "lost: session_unverified"})
	h.lease(2, 2, "b", 40, 8100, 8200)
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(9000), FaultID: 2})
	h.add(chaos.Event{Kind: chaos.EvQuiesced, T: at(9500), Proc: 1, Session: 101})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.NetworkLoss.N != 2 || r.NetworkLossExpired.N != 1 || r.NetworkLossExpired.MinMS != 900 ||
		r.NetworkLossLive.N != 1 || r.NetworkLossLive.MinMS != 100 {
		t.Fatalf("network %+v expired %+v live %+v", r.NetworkLoss, r.NetworkLossExpired, r.NetworkLossLive)
	}
}

// A loss whose session then expired let the next holder in only through
// ZooKeeper's expiry, which zklock's loss margin comes before: a margin
// under it is a verdict (loss-margin-missed), once the history shows the
// expiry. A load session's fate is its Client's notes (sessionFates): its
// process runs two hundred of them. A margin of 400 ms (the long run of 28
// November, ZooKeeper store, had 473 ms on a load session whose fate the
// history did not show) fails with the note that the session was
// replaced; with the note that it was verified again, the client deleted
// the node itself (a margin > 0 is all that is owed); with neither, the
// loss is counted apart, unjudged; and a holder stopped as it should
// have been told is fencing's.
func TestCheckLossMarginJudgedWhenTheSessionExpired(t *testing.T) {
	run := func(note string, pausedFrom int) *chaos.Report {
		h := &history{}
		h.add(chaos.Event{Kind: chaos.EvFault, T: at(0), Fault: string(chaos.FaultLeaderKill), FaultID: 1, Target: "zk1(leader)", Nodes: []string{"zk1"}})
		if pausedFrom > 0 {
			h.add(chaos.Event{Kind: chaos.EvFault, T: at(pausedFrom), Fault: string(chaos.FaultPause), FaultID: 2, Proc: 1})
			h.add(chaos.Event{Kind: chaos.EvHeal, T: at(pausedFrom + 300), FaultID: 2})
		}
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(1), Proc: 1, Op: 1, Resource: "load-1", Detail: "load", Deadline: at(9000)})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(2), Proc: 1, Op: 1, Resource: "load-1", Detail: "load", Token: 10, Session: 200, Deadline: at(9000)})
		h.add(chaos.Event{Kind: chaos.EvLost, T: at(2000), Proc: 1, Op: 1, Resource: "load-1", Err: "lost: session_unverified"})
		h.add(chaos.Event{Kind: chaos.EvHeal, T: at(2100), FaultID: 1})
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(1000), Proc: 2, Op: 1, Resource: "load-1", Detail: "load", Deadline: at(9000)})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(2400), Proc: 2, Op: 1, Resource: "load-1", Detail: "load", Token: 20, Session: 300, Deadline: at(9000)})
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(2500), Proc: 2, Op: 1, Resource: "load-1", Detail: "load", Token: 20})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(2501), Proc: 2, Op: 1, Resource: "load-1", Detail: "load", Token: 20, Outcome: "ok"})
		// a load session of proc 1's that lives on says nothing of session 200
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(3000), Proc: 1, Op: 2, Resource: "load-2", Detail: "load", Token: 30, Session: 201, Deadline: at(9000)})
		if note != "" {
			h.add(chaos.Event{Kind: chaos.EvNote, T: at(3100), Proc: 1, Outcome: note, Session: 200})
		}
		return chaos.Check(h.inTimeOrder().evs, params)
	}
	r := run(chaos.OutcomeSessionReplaced, 0)
	wantViolations(t, r, chaos.VLossMargin)
	if d := r.Violations[0].Detail; !strings.Contains(d, "told of its loss (leader-kill) 400 ms before proc 2 op 1") || !strings.Contains(d, "the loss margin is 750 ms") {
		t.Errorf("detail: %s", d)
	}
	if e := r.NetworkLossExpired; e.N != 1 || e.MinToldMS != 400 {
		t.Fatalf("expired %+v", e)
	}
	r = run(chaos.OutcomeSessionVerified, 0)
	wantViolations(t, r)
	if e := r.NetworkLossLive; e.N != 1 || e.MinToldMS != 400 || r.NetworkLossExpired.N != 0 {
		t.Fatalf("alive %+v expired %+v", e, r.NetworkLossExpired)
	}
	r = run("", 0)
	wantViolations(t, r)
	if u := r.NetworkLossUnknown; u.N != 1 || r.NetworkLossExpired.N != 0 || r.NetworkLossLive.N != 0 {
		t.Fatalf("unknown %+v expired %+v alive %+v", u, r.NetworkLossExpired, r.NetworkLossLive)
	}
	var b bytes.Buffer
	r.WriteTable(&b)
	if want := "| … of those, the session's end not in the history: min margin (the stopped left out) | 400 ms (n=1, median 400) |"; !strings.Contains(b.String(), want) {
		t.Fatalf("table lacks %q:\n%s", want, b.String())
	}
	r = run(chaos.OutcomeSessionReplaced, 1500) // paused 1,500-1,800: it could not be told sooner
	wantViolations(t, r)
}

// A holder stopped when the next holder came in is told late, and that
// is fencing's: its margin is counted (MinMS, Paused) but the rows with a
// target give the least margin of the others (MinToldMS).
func TestCheckLossMarginTargetsLeaveTheStoppedOut(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(0), Fault: string(chaos.FaultBlackhole), FaultID: 1, Proc: 1})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(1), Proc: 1, Op: 1, Resource: "a", Token: 10, Session: 100})
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(2000), Proc: 1, Op: 1, Resource: "a", Err: "lost: session_unverified"})
	h.lease(2, 1, "a", 20, 2900, 3000)
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(4000), FaultID: 1})
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(5000), Fault: string(chaos.FaultBlackhole), FaultID: 2, Proc: 3})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(5001), Proc: 3, Op: 1, Resource: "b", Token: 30, Session: 300})
	h.add(chaos.Event{Kind: chaos.EvStall, T: at(6000), End: at(8500), Proc: 3})
	h.lease(2, 2, "b", 40, 8000, 8100)
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(8600), Proc: 3, Op: 1, Resource: "b", Err: "lost: session_unverified"})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(9000), FaultID: 2})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(9500), Proc: 1, Op: 2, Resource: "c", Token: 50, Session: 101})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(9600), Proc: 3, Op: 2, Resource: "d", Token: 60, Session: 301})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	e := r.NetworkLossExpired
	if e.N != 2 || e.Paused != 1 || e.MinMS != -600 || e.MinToldMS != 900 || r.NetworkLoss.Before != 1 {
		t.Fatalf("expired %+v network %+v", e, r.NetworkLoss)
	}
	var b bytes.Buffer
	r.WriteTable(&b)
	want := "| … of those, session expired: min margin (the stopped left out) | 900 ms (n=2, median 900); of them 1 stopped, min -600 ms |"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("table lacks %q:\n%s", want, b.String())
	}
}
