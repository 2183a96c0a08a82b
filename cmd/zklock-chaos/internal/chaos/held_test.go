package chaos_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

// lostAfter adds a lease of proc on r granted at acq and lost for reason
// held ms later, with nobody after it.
func (h *history) lostAfter(proc int, r string, token int64, acq, held int, reason string) *history {
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(acq - 1), Proc: proc, Op: 1, Resource: r, Deadline: at(acq + 5000)})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(acq), Proc: proc, Op: 1, Resource: r, Token: token})
	return h.add(chaos.Event{Kind: chaos.EvLost, T: at(acq + held), Proc: proc, Op: 1, Resource: r, Err: `zklock: lease on "` + r + `" lost: ` + reason})
}

// Held before loss is measured from the grant to the loss signal, by
// reason and over all; released and killed leases are not in it, and a
// loss within 300 ms of the grant is counted, by phase.
func TestReportHeldBeforeLoss(t *testing.T) {
	h := &history{}
	h.lostAfter(1, "a", 10, 0, 250, "session_unverified")  // main phase, early
	h.lostAfter(2, "b", 11, 0, 2000, "session_unverified") // main phase
	h.lostAfter(3, "c", 12, 0, 100, "node_deleted")        // main phase, early
	h.lease(4, 1, "d", 13, 10, 20)                         // released: not a loss
	h.add(chaos.Event{Kind: chaos.EvPhase, T: at(5000), Detail: "load"})
	h.lostAfter(5, "e", 14, 5100, 3, "session_unverified")   // load phase, early
	h.lostAfter(6, "f", 15, 5100, 900, "session_unverified") // load phase
	h.lostAfter(7, "g", 16, 5100, 301, "session_expired")    // load phase, just over
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(5200), Proc: 8, Op: 1, Resource: "h", Token: 17})
	h.add(chaos.Event{Kind: chaos.EvDied, T: at(5300), Proc: 8, Detail: "killed"}) // killed: no signal
	h.add(chaos.Event{Kind: chaos.EvPhase, T: at(8000), Detail: "wind-down"})
	r := chaos.Check(h.evs, params)

	su := r.HeldBeforeLoss["session_unverified"]
	if su == nil || su.N != 4 || su.MinMS != 3 || su.P50MS != 900 || su.MaxMS != 2000 || su.Short != 2 || su.ShortLoad != 1 {
		t.Fatalf("session_unverified: %+v", su)
	}
	all := r.HeldBeforeLoss["all"]
	if all == nil || all.N != 6 || all.MinMS != 3 || all.P10MS != 3 || all.P90MS != 2000 || all.Short != 3 || all.ShortLoad != 1 {
		t.Fatalf("all: %+v", all)
	}
	if se := r.HeldBeforeLoss["session_expired"]; se == nil || se.N != 1 || se.Short != 0 {
		t.Fatalf("session_expired: %+v", se)
	}

	var b bytes.Buffer
	r.WriteTable(&b)
	for _, want := range []string{
		"| held before loss (grant → loss signal), by reason | n | min ms | p10 ms | p50 ms | p90 ms | max ms | lost ≤ 300 ms after the grant (of them in the load phase) |",
		"| node_deleted | 1 | 100.0 | 100 | 100 | 100 | 100 | 1 (0) |",
		"| session_unverified | 4 | 3.0 | 3 | 900 | 2000 | 2000 | 2 (1) |",
		"| all | 6 | 3.0 | 3 | 301 | 2000 | 2000 | 3 (1) |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, b.String())
		}
	}
	// "all" comes last
	if strings.Index(b.String(), "| all |") < strings.Index(b.String(), "| session_unverified |") {
		t.Fatalf("all is not last:\n%s", b.String())
	}

	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"session_unverified":{"n":4,"min_ms":3,"p10_ms":3,"p50_ms":900,"p90_ms":2000,"max_ms":2000,"within_300ms":2,"within_300ms_load":1}`) {
		t.Fatalf("report.json lacks held_before_loss: %s", js)
	}
}

// docs/chaos.md quotes HeldShort.
func TestDocsQuoteHeldShort(t *testing.T) {
	doc, err := os.ReadFile("../../../../docs/chaos.md")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("lost within %d ms of the grant (`HeldShort`)", chaos.HeldShort.Milliseconds())
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
		t.Fatalf("docs/chaos.md does not say %q", want)
	}
}
