package chaos_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

const (
	phantomPath = "/zklock-chaos-0000002a/res-0/_c_5f0b-lock-0000000007"
	otherPath   = "/zklock-chaos-0000002a/res-1/_c_77aa-lock-0000000003"
	session1    = int64(0x100)
	session2    = int64(0x101)
)

// queues adds a queue snapshot begun at ms whose listing took 5 ms.
func (h *history) queues(ms int, owners map[string]int64) *history {
	return h.add(chaos.Event{Kind: chaos.EvQueues, T: at(ms), End: at(ms + 5), Owners: owners})
}

// local adds a worker's report of its client's lock nodes.
func (h *history) local(ms, proc int, session int64, nodes ...string) *history {
	return h.add(chaos.Event{Kind: chaos.EvLocal, T: at(ms), Proc: proc, Session: session, Nodes: nodes})
}

// snapshots adds a snapshot every second in [from, to] ms listing
// phantomPath, owned by session1, and otherPath, owned by session2.
func (h *history) snapshots(from, to int) *history {
	for ms := from; ms <= to; ms += 1000 {
		h.queues(ms, map[string]int64{phantomPath: session1, otherPath: session2})
	}
	return h
}

// reports adds a report of proc 1 every second in [from, to] ms, listing
// nodes.
func (h *history) reports(from, to int, session int64, nodes ...string) *history {
	for ms := from; ms <= to; ms += 1000 {
		h.local(ms, 1, session, nodes...)
	}
	return h
}

// A lease, so that the history counts as a campaign that granted some.
func phantomHistory() *history {
	return (&history{}).lease(3, 1, "b", 10, 0, 20)
}

// A node in the queue for ten seconds, owned by a session whose client's
// reports never list it, is a phantom: reported once, with the worker's
// events in its slice.
func TestCheckPhantomNode(t *testing.T) {
	h := phantomHistory().snapshots(0, 11000).reports(100, 10100, session1)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VPhantom)
	v := r.Violations[0]
	for _, want := range []string{phantomPath, "session 0x100", "proc 1", "10.0 s", "11 reports", "grace 9s"} {
		if !strings.Contains(v.Detail, want) {
			t.Errorf("detail lacks %q: %s", want, v.Detail)
		}
	}
	locals := 0
	for _, e := range v.Slice {
		if e.Kind == chaos.EvLocal && e.Proc == 1 {
			locals++
		}
	}
	if locals != 11 {
		t.Errorf("slice has %d local reports of proc 1, want 11", locals)
	}
	pc := r.Phantom
	if pc.QueueSnapshots != 12 || pc.LocalReports != 11 || pc.PairsCompared != 1 || pc.Phantoms != 1 ||
		pc.MaxUnknownMS != 10000 || pc.GraceMS != 9000 {
		t.Fatalf("phantom check: %+v", pc)
	}
}

// The same node listed in its client's reports is no phantom.
func TestCheckPhantomKnownNode(t *testing.T) {
	h := phantomHistory().snapshots(0, 11000).reports(100, 10100, session1, otherPath, phantomPath)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if pc := r.Phantom; pc.PairsCompared != 1 || pc.Phantoms != 0 || pc.MaxUnknownMS != 0 {
		t.Fatalf("phantom check: %+v", pc)
	}
}

// A node unknown for less than the grace (its create in flight, then its
// delete after the release) is no phantom; the same gap at the grace is.
func TestCheckPhantomGrace(t *testing.T) {
	h := phantomHistory().snapshots(0, 12000)
	h.local(100, 1, session1).local(600, 1, session1) // create in flight
	h.reports(1100, 9100, session1, phantomPath)
	h.local(9600, 1, session1).local(10100, 1, session1) // released, delete in flight
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if pc := r.Phantom; pc.MaxUnknownMS != 500 || pc.PairsCompared != 1 {
		t.Fatalf("phantom check: %+v", pc)
	}

	for _, c := range []struct {
		lastMS int // the last report leaving the node out, the first at 100
		want   []string
	}{{9099, nil}, {9100, []string{chaos.VPhantom}}} {
		h := phantomHistory().snapshots(0, 12000).reports(100, 8100, session1)
		h.local(c.lastMS, 1, session1).local(c.lastMS+500, 1, session1, phantomPath)
		wantViolations(t, chaos.Check(h.evs, params), c.want...)
	}
	// PhantomGrace overrides the default of three session timeouts.
	h = phantomHistory().snapshots(0, 10000).reports(100, 5100, session1)
	p := params
	p.PhantomGrace = 5e9
	wantViolations(t, chaos.Check(h.evs, p), chaos.VPhantom)
}

// After an expiry the worker reports under its new session: the old
// session's node, still listed (the server has not deleted it yet), is not
// compared with it.
func TestCheckPhantomOtherSession(t *testing.T) {
	h := phantomHistory().snapshots(0, 11000).reports(100, 10100, session2, otherPath)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if pc := r.Phantom; pc.PairsCompared != 1 || pc.LocalReports != 11 {
		t.Fatalf("phantom check: %+v", pc) // otherPath with session2 only
	}
	// The same reports under the node's own session find it.
	h = phantomHistory().snapshots(0, 11000).reports(100, 10100, session1, otherPath)
	wantViolations(t, chaos.Check(h.evs, params), chaos.VPhantom)
}

// Only runs of consecutive reports count: a node unknown while in flight,
// then known, then unknown for longer than the grace is one phantom, with
// the second run's length.
func TestCheckPhantomUnknownAgain(t *testing.T) {
	h := phantomHistory().snapshots(0, 20000)
	h.local(100, 1, session1).local(600, 1, session1)
	h.reports(1100, 5100, session1, phantomPath)
	h.reports(5600, 19600, session1)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VPhantom)
	if !strings.Contains(r.Violations[0].Detail, "14.0 s (15 reports") {
		t.Fatalf("detail: %s", r.Violations[0].Detail)
	}
	// Known in the middle of the long run: no run reaches the grace.
	h = phantomHistory().snapshots(0, 20000)
	h.local(100, 1, session1).local(600, 1, session1)
	h.reports(1100, 5100, session1, phantomPath)
	h.reports(5600, 11600, session1).local(12100, 1, session1, phantomPath).reports(12600, 19600, session1)
	wantViolations(t, chaos.Check(h.evs, params))
}

// Reports outside the node's observed span, the span itself beginning
// when the first listing that showed the node ended, are not compared.
func TestCheckPhantomOnlyInsideSpan(t *testing.T) {
	h := phantomHistory()
	h.add(chaos.Event{Kind: chaos.EvQueues, T: at(0), End: at(2900), Owners: map[string]int64{phantomPath: session1}})
	h.snapshots(3000, 12000).reports(100, 13100, session1)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r) // 3100 to 11100: 8 s (from 100, it would be 11 s)
	if pc := r.Phantom; pc.MaxUnknownMS != 8000 {
		t.Fatalf("phantom check: %+v", pc)
	}
	h.snapshots(13000, 14000)
	wantViolations(t, chaos.Check(h.evs, params), chaos.VPhantom) // 3100 to 13100
}

// Time nobody could observe does not count: a worker that sends no
// report for a while (stopped, or starved), or snapshots that could not
// be taken (no quorum: no delete can complete either).
func TestCheckPhantomBlindTime(t *testing.T) {
	// no report from 2100 to 8100 (a pause): 2 s + 4 s
	h := phantomHistory().snapshots(0, 13000).reports(100, 2100, session1).reports(8100, 12100, session1)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if pc := r.Phantom; pc.MaxUnknownMS != 6000 {
		t.Fatalf("phantom check: %+v", pc)
	}
	// no snapshot from 3005 to 9000: 12 s - 5.995 s
	h = phantomHistory().snapshots(0, 3000).snapshots(9000, 13000).reports(100, 12100, session1)
	r = chaos.Check(h.evs, params)
	wantViolations(t, r)
	if pc := r.Phantom; pc.MaxUnknownMS != 6005 {
		t.Fatalf("phantom check: %+v", pc)
	}
	// observed all along, the same 12 s are a phantom
	h = phantomHistory().snapshots(0, 13000).reports(100, 12100, session1)
	wantViolations(t, chaos.Check(h.evs, params), chaos.VPhantom)
}

// A campaign that granted leases but recorded no queue snapshot (or no
// local report) could not run the check, and fails. A history with
// neither kind of event predates the check and is judged without it.
func TestCheckPhantomNoData(t *testing.T) {
	h := phantomHistory().reports(100, 9900, session1)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VPhantom)
	if d := r.Violations[0].Detail; d != "no queue snapshots: phantom check could not run" {
		t.Fatalf("detail: %s", d)
	}
	h = phantomHistory().snapshots(0, 10000)
	r = chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VPhantom)
	if d := r.Violations[0].Detail; d != "no local reports: phantom check could not run" {
		t.Fatalf("detail: %s", d)
	}
	if r.Phantom.Phantoms != 0 {
		t.Fatalf("phantoms %d", r.Phantom.Phantoms)
	}
	wantViolations(t, chaos.Check(phantomHistory().evs, params))
	// no lease granted: nothing to check
	wantViolations(t, chaos.Check((&history{}).reports(100, 9900, session1).evs, params))
}

// The table shows the check's figures, and says when it did not run.
func TestReportPhantomTable(t *testing.T) {
	h := phantomHistory().snapshots(0, 11000).reports(100, 10100, session1)
	r := chaos.Check(h.evs, params)
	r.DurationSec = 20
	var b bytes.Buffer
	r.WriteTable(&b)
	for _, want := range []string{
		"| lock znodes of live sessions unknown to their client ≥ grace (phantoms) | 1 (longest unknown 10000 ms, grace 9000 ms) | 0 |",
		"| phantom check coverage | 12 snapshots, 11 local reports, 1 node/session pairs compared | > 0 each |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, b.String())
		}
	}
	j, _ := json.Marshal(r)
	if !strings.Contains(string(j), `"phantom_check":{"queue_snapshots":12,"local_reports":11,"pairs_compared":1,"phantoms":1,`) {
		t.Fatalf("json: %s", j)
	}
	r = chaos.Check(phantomHistory().evs, params)
	r.DurationSec = 20
	b.Reset()
	r.WriteTable(&b)
	if !strings.Contains(b.String(), "| phantom check coverage | **CHECK DID NOT RUN**: 0 snapshots, 0 local reports") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// queuesOn adds a queue snapshot of member server begun at ms.
func (h *history) queuesOn(ms, server int, owners map[string]int64) *history {
	return h.add(chaos.Event{Kind: chaos.EvQueues, T: at(ms), End: at(ms + 5), Owners: owners, Server: server})
}

// The phantom of a long run, as the members show it in turn: zk1 lists a
// node that zk2 and zk3, synced in between, do not. That is the ensemble
// diverging (a sequential node never comes back once deleted), one
// server-divergence verdict, and not a phantom of zklock's.
func TestCheckDivergence(t *testing.T) {
	h := phantomHistory()
	for ms := 0; ms <= 12000; ms += 1000 {
		owners := map[string]int64{otherPath: session2}
		server := ms/1000%3 + 1
		if server == 1 {
			owners[phantomPath] = session1
		}
		h.queuesOn(ms, server, owners)
	}
	h.reports(100, 12100, session1)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VDivergence)
	v := r.Violations[0]
	for _, want := range []string{phantomPath, "session 0x100", "listed by zk1", "not by zk2", "ZooKeeper fault"} {
		if !strings.Contains(v.Detail, want) {
			t.Errorf("detail lacks %q: %s", want, v.Detail)
		}
	}
	if r.Phantom.Divergent != 1 || r.Phantom.Phantoms != 0 {
		t.Fatalf("phantom check: %+v", r.Phantom)
	}
}

// A node missing from a listing that overlaps its first or last sighting
// is no divergence: it may have been created during the one listing, or
// deleted during the other, and a node listed once, then never again, was
// deleted. Only a listing wholly between two that show it counts.
func TestCheckDivergenceOnlyBetweenSightings(t *testing.T) {
	node := map[string]int64{phantomPath: session1, otherPath: session2}
	none := map[string]int64{otherPath: session2}
	h := phantomHistory().
		queuesOn(0, 2, none).                                                                        // before it was made
		queuesOn(1000, 1, node).                                                                     // first sighting, ends at 1005
		add(chaos.Event{Kind: chaos.EvQueues, T: at(1003), End: at(1500), Owners: none, Server: 3}). // overlaps the first sighting
		add(chaos.Event{Kind: chaos.EvQueues, T: at(1900), End: at(2100), Owners: none, Server: 2}). // overlaps the last sighting
		queuesOn(2000, 1, node).                                                                     // last sighting
		queuesOn(3000, 2, none)                                                                      // after it was deleted
	h.local(1200, 1, session1, phantomPath).local(2100, 1, session1, phantomPath)
	r := chaos.Check(h.evs, params)
	wantViolations(t, r)
	if r.Phantom.Divergent != 0 {
		t.Fatalf("phantom check: %+v", r.Phantom)
	}
}
