package chaos_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

// divergedHistory replays what failed CI on stop 26 (seed
// 1795678304096143343), on an election: proc 2's create (czxid
// 0x300000361) reached only the leader of epoch 3, zk2, which was then cut
// off; zk2 kept it across its sync with the leader of epoch 4 (ZooKeeper
// 3.8.0: its log truncated, a snapshot taken past that point loaded), and
// the new leader gave its sequence number, 30, to proc 4's node. On zk2
// both nodes existed: proc 4 led (its name sorts first), released, and
// proc 2, whose client had found its node by its GUID after the lost
// reply, led next with the older token; the fence refused its writes.
// seqB is the sequence number of proc 4's node.
func divergedHistory(seqB string) *history {
	const parent = "/zklock-chaos-d82e507f/el-0/"
	a := parent + "_c_e7b3854b-latch-0000000030"
	b := parent + "_c_3efceffa-latch-00000000" + seqB
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(-2000), Fault: "isolate-leader", FaultID: 22, Target: "zk2(leader)", Nodes: []string{"zk2"}})
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(0), Proc: 2, Op: 275, Resource: "el-0", Mode: chaos.ModeElection, Deadline: at(9000)})
	h.add(chaos.Event{Kind: chaos.EvAcquire, T: at(4700), Proc: 4, Op: 294, Resource: "el-0", Mode: chaos.ModeElection, Deadline: at(13700)})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(7600), Proc: 4, Op: 294, Resource: "el-0", Mode: chaos.ModeElection, Token: 0x400000004, Nodes: []string{b}, Deadline: at(13700)})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(7599), FaultID: 22})
	h.write(4, 294, "el-0", 0x400000004, 7602, true)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(8425), Proc: 4, Op: 294, Resource: "el-0", Mode: chaos.ModeElection})
	h.add(chaos.Event{Kind: chaos.EvReleased, T: at(8428), Proc: 4, Op: 294, Resource: "el-0", Mode: chaos.ModeElection, Outcome: "ok"})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(8429), Proc: 2, Op: 275, Resource: "el-0", Mode: chaos.ModeElection, Token: 0x300000361, Nodes: []string{a}, Deadline: at(9000)})
	h.add(chaos.Event{Kind: chaos.EvWrite, T: at(8430), Sent: at(8430), Proc: 2, Op: 275, Resource: "el-0", Token: 0x300000361, Max: 0x400000004})
	h.add(chaos.Event{Kind: chaos.EvDied, T: at(8700), Proc: 2, Outcome: "killed"})
	return h
}

// A lease on a node whose sequence number was given twice stood on what one
// member kept uncommitted: its double grant and its fenced writes are
// ZooKeeper's verdicts, listed, and the run passes on zklock's. The same
// history with distinct sequence numbers shows nothing of ZooKeeper's, and
// the same verdicts fail the run: the excuse needs the evidence.
func TestCheckLeaseOnDivergedNode(t *testing.T) {
	r := chaos.Check(divergedHistory("30").evs, params)
	wantViolations(t, r, chaos.VDivergence, chaos.VDivergedLease, chaos.VDivergedLease)
	for i, want := range []string{
		"sequence number 0000000030 of /zklock-chaos-d82e507f/el-0 was given to 2 nodes",
		"rejected-in-good-standing: proc 2 op 275 (token 0x300000361) was neither paused nor told of loss, yet the store had seen token 0x400000004",
		"double-grant: proc 2 op 275 (token 0x300000361, died) still held when proc 4 op 294",
	} {
		if d := r.Violations[i].Detail; !strings.Contains(d, want) {
			t.Errorf("verdict %d lacks %q: %s", i, want, d)
		}
	}
	if !strings.Contains(r.Violations[0].Detail, "kept uncommitted by a member: /zklock-chaos-d82e507f/el-0/_c_e7b3854b-latch-0000000030 (token 0x300000361)") {
		t.Errorf("the kept node is not named: %s", r.Violations[0].Detail)
	}
	if r.SequencesTwice != 1 || r.DivergedLeases != 2 || r.ZooKeeperVerdicts != 3 || r.DoubleGrants != 0 || r.RejectedGoodStand != 0 {
		t.Fatalf("counts: twice %d, diverged leases %d, ZooKeeper's %d, double %d, good standing %d",
			r.SequencesTwice, r.DivergedLeases, r.ZooKeeperVerdicts, r.DoubleGrants, r.RejectedGoodStand)
	}
	var b bytes.Buffer
	r.WriteTable(&b)
	r.WriteViolations(&b)
	for _, want := range []string{"PASS (and 3 verdicts on ZooKeeper: its members diverged)",
		"| ZooKeeper divergence: lock znodes a synced listing left out / sequence numbers given twice | 0 / 1 |",
		"ZOOKEEPER 3/3 diverged-lease on el-0"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}

	r = chaos.Check(divergedHistory("31").evs, params)
	wantViolations(t, r, chaos.VGoodStanding, chaos.VDoubleGrant)
}

// A queue is a container: ZooKeeper deletes it once empty, and the next
// lock makes it again, numbering from 0. Two nodes given one number that
// never lived at one time are no evidence of divergence, and excuse
// nothing: here a double grant on the second one still fails the run.
// (A long run on 54dbe4c counted 45 such numbers as divergence.)
func TestCheckSequenceReusedInAQueueMadeAgain(t *testing.T) {
	const parent = "/zklock-chaos-1/all-c/"
	a := parent + "_c_aaaa-lock-0000000000"
	b := parent + "_c_bbbb-lock-0000000000"
	c := parent + "_c_cccc-lock-0000000001"
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "all-c", Token: 0x10000011d, Nodes: []string{a}})
	h.write(1, 1, "all-c", 0x10000011d, 1, true)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(100), Proc: 1, Op: 1, Resource: "all-c"})
	h.add(chaos.Event{Kind: chaos.EvReleased, T: at(101), Proc: 1, Op: 1, Resource: "all-c", Outcome: "ok"})
	// ... the queue, empty, is deleted, and made again ...
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(90000), Proc: 2, Op: 1, Resource: "all-c", Token: 0x500000010, Nodes: []string{b}})
	h.write(2, 1, "all-c", 0x500000010, 90001, true)
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(90050), Proc: 3, Op: 1, Resource: "all-c", Token: 0x500000012, Nodes: []string{c}})
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(90100), Proc: 2, Op: 1, Resource: "all-c"})
	h.add(chaos.Event{Kind: chaos.EvReleased, T: at(90101), Proc: 2, Op: 1, Resource: "all-c", Outcome: "ok"})
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(90200), Proc: 3, Op: 1, Resource: "all-c"})
	h.add(chaos.Event{Kind: chaos.EvReleased, T: at(90201), Proc: 3, Op: 1, Resource: "all-c", Outcome: "ok"})
	r := chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VDoubleGrant)
	if r.SequencesTwice != 0 || r.SequencesReused != 1 || r.ZooKeeperVerdicts != 0 {
		t.Fatalf("twice %d, reused %d, ZooKeeper's %d", r.SequencesTwice, r.SequencesReused, r.ZooKeeperVerdicts)
	}
	var buf bytes.Buffer
	r.WriteTable(&buf)
	if want := "| 0 / 0 (and 1 given again in a queue made again: not evidence) |"; !strings.Contains(buf.String(), want) {
		t.Fatalf("table lacks %q", want)
	}
}
