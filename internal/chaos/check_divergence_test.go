package chaos_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/internal/chaos"
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
