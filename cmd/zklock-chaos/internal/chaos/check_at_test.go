package chaos_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

// A violation says when the history shows it (At): a double grant when
// the second holder acquired; a liveness target from the first sample
// over it, not the worst one, which the slice shows.
func TestCheckViolationAt(t *testing.T) {
	h := (&history{}).held(1, 1, "res-0", chaos.ModeExclusive, 0, 10, 0, 100).held(2, 1, "res-0", chaos.ModeExclusive, 0, 11, 50, 150)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VDoubleGrant)
	if got := r.Violations[0].At; got != at(50) {
		t.Errorf("double grant At = %+d ms, want the second acquire's, at +50 ms", (got-origin)/1e6)
	}

	h = (&history{}).held(1, 1, "res-0", chaos.ModeExclusive, 0, 10, 0, 100)
	for op, span := range [][2]int{{200, 1700}, {2000, 5000}, {6000, 6100}} {
		h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(span[0]), Proc: 2, Op: int64(op + 1), Resource: "res-0", Detail: "try", Deadline: at(9000)})
		h.add(chaos.Event{Kind: chaos.EvAcquireFailed, T: at(span[1]), Began: at(span[0]), Proc: 2, Op: int64(op + 1), Resource: "res-0", Outcome: "locked", Detail: "try"})
	}
	r = chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VLiveness)
	if got := r.Violations[0].At; got != at(1700) {
		t.Errorf("liveness At = %+d ms, want the first try over the target's answer, at +1700 ms (the worst answered at +5000)", (got-origin)/1e6)
	}
}
