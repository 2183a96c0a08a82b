package chaos_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/internal/chaos"
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
