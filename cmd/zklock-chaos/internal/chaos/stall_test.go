package chaos_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

// stalledHolder is TestCheckPausedHolderFenced's history with no pause
// fault: holder 1 stops running from 10 ms to 5 s, is overtaken at 3.5 s,
// and its late write is refused.
func stalledHolder(stall bool) *history {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.write(1, 1, "a", 10, 1, true)
	h.lease(2, 1, "a", 20, 3500, 3600)
	if stall {
		h.add(chaos.Event{Kind: chaos.EvStall, T: at(10), End: at(5000), Proc: 1})
	}
	h.write(1, 1, "a", 10, 5001, false)
	return h.add(chaos.Event{Kind: chaos.EvLost, T: at(5002), Proc: 1, Op: 1, Resource: "a", Err: `zklock: lease on "a" lost: session_unverified`})
}

// A worker that stopped running (its stall watch says so) is judged as a
// paused one: its late loss signal and its refused write are fencing's
// job, and the stall is counted.
func TestCheckStalledHolderIsPaused(t *testing.T) {
	r := chaos.Check(stalledHolder(true).evs, params)
	wantViolations(t, r)
	if r.PausedOverlaps != 1 || r.Stale.RejectedPaused != 1 {
		t.Fatalf("paused overlaps %d, stale %+v", r.PausedOverlaps, r.Stale)
	}
	if r.Stalls.N != 1 || r.Stalls.MaxMS != 4990 {
		t.Fatalf("stalls %+v", r.Stalls)
	}
	r.Campaign, r.Targets.Acquisitions, r.Targets.FaultsPerKind = "synthetic", 2, 1
	var b bytes.Buffer
	r.WriteTable(&b)
	want := "| worker stalls: a process not running for ≥ 200 ms, judged as a pause | 1 (p50 4990 ms, longest 4990 ms) |"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("table lacks %q:\n%s", want, b.String())
	}
}

// Without the stall report, the same history fails.
func TestCheckUnstalledHolderIsNotExcused(t *testing.T) {
	wantViolations(t, chaos.Check(stalledHolder(false).evs, params), chaos.VGoodStanding, chaos.VLateLoss)
}

// semWaitHistory is TestCheckLivenessTargets's semaphore: a slot left free
// for 1.9 s while proc 3 waited, which fails the run in a quiet window.
func semWaitHistory() *history {
	h := (&history{}).held(1, 1, "sem-0", chaos.ModeSemaphore, 2, 10, 0, 2500, 1).held(2, 1, "sem-0", chaos.ModeSemaphore, 2, 11, 5, 100, 6)
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(50), Proc: 3, Op: 1, Resource: "sem-0", Mode: chaos.ModeSemaphore, Limit: 2})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(2000), Proc: 3, Op: 1, Resource: "sem-0", Mode: chaos.ModeSemaphore, Limit: 2, Token: 12})
	return h.add(chaos.Event{Kind: chaos.EvRelease, T: at(2100), Proc: 3, Op: 1, Resource: "sem-0"})
}

// A stop of the campaign process (Proc 0: every worker's proxies and the
// store) is felt by everyone, as a fault of the ensemble is: the wait is
// measured, not failed. A worker's own stall is felt only where it had a
// node.
func TestCheckCampaignStallIsFeltByEveryone(t *testing.T) {
	wantViolations(t, chaos.Check(semWaitHistory().evs, params), chaos.VLiveness, chaos.VLiveness)
	h := semWaitHistory()
	h.add(chaos.Event{Kind: chaos.EvStall, T: at(120), End: at(1600), Detail: "campaign"})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.CampaignStalls.N != 1 || r.Stalls.N != 0 {
		t.Fatalf("campaign stalls %+v, worker stalls %+v", r.CampaignStalls, r.Stalls)
	}
	h = semWaitHistory()
	h.add(chaos.Event{Kind: chaos.EvStall, T: at(120), End: at(1600), Proc: 9})
	wantViolations(t, chaos.Check(h.evs, params), chaos.VLiveness, chaos.VLiveness)
}

// A slot held by a node whose acquire gave up, while its process's link
// was slow and its delete with it: the process's own report of the node
// (EvLocal, which lists the nodes it is still deleting) ties the fault to
// the queue, so the wait is measured, not failed. Without the report the
// fault touched nothing of sem-0's.
func TestCheckLingeringNodeTiesAFaultToItsQueue(t *testing.T) {
	h := semWaitHistory()
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(60), Fault: string(chaos.FaultSlow), FaultID: 1, Proc: 9})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(1500), FaultID: 1})
	wantViolations(t, chaos.Check(h.evs, params), chaos.VLiveness, chaos.VLiveness)
	const node = "/zklock-chaos-1/sem-0/_c_9-lock-0000000003"
	h.add(chaos.Event{Kind: chaos.EvLocal, T: at(900), Proc: 9, Session: 99, Nodes: []string{node}})
	h.add(chaos.Event{Kind: chaos.EvQueues, T: at(950), End: at(951), Server: 1, Owners: map[string]int64{node: 99}})
	wantViolations(t, chaos.Check(h.evs, params))
}

// A write sent in good standing and delivered after its writer was told
// of its loss (held up on the way to the store) is fencing's to refuse,
// provided the loss came before the next holder; a loss told after the
// refusal is still a holder in good standing fenced off.
func TestCheckWriteInTransitAcrossLoss(t *testing.T) {
	run := func(lost int) *chaos.Report {
		h := &history{}
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(-1), Proc: 1, Op: 1, Resource: "a", Deadline: at(5000)})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
		h.add(chaos.Event{Kind: chaos.EvLost, T: at(lost), Proc: 1, Op: 1, Resource: "a", Err: `zklock: lease on "a" lost: session_unverified`})
		h.lease(2, 1, "a", 20, 1550, 1580)
		h.add(chaos.Event{Kind: chaos.EvWrite, T: at(1601), Sent: at(10), Called: at(1600), Proc: 1, Op: 1, Resource: "a", Token: 10, Max: 20})
		return chaos.Check(h.evs, params)
	}
	r := run(1500)
	wantViolations(t, r)
	if r.Stale.RejectedAfterLoss != 1 || r.Stale.RejectedInTransit != 1 {
		t.Fatalf("stale %+v", r.Stale)
	}
	wantViolations(t, run(1700), chaos.VGoodStanding, chaos.VLateLoss)
}

// The report shows how long workers' reports took to reach the hub (an
// acquire's start and the every-second EvLocal, stamped as sent): a hub
// that takes no events for seconds holds every lane up while it reports.
func TestCheckReportDelay(t *testing.T) {
	h := semWaitHistory()
	h.add(chaos.Event{Kind: chaos.EvLocal, T: at(100), Recv: at(102), Proc: 9})
	h.add(chaos.Event{Kind: chaos.EvLocal, T: at(200), Recv: at(9200), Proc: 9, Sched: int64(390 * time.Millisecond)})
	h.add(chaos.Event{Kind: chaos.EvLocal, T: at(300), Recv: at(301)}) // the campaign's own: not a worker's report
	r := chaos.Check(h.evs, params)
	if d := r.ReportDelay; d.N != 2 || d.MaxMS != 9000 {
		t.Fatalf("report delay %+v; want 2 samples, the longest 9000 ms", d)
	}
	if d := r.SchedWait; d.N != 1 || d.MaxMS != 390 {
		t.Fatalf("wait to run %+v; want the one sample, 390 ms", d)
	}
}
