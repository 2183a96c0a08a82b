package zklock_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zklockkit/zklockkit/zklock"
)

// modelScenario is a fixed sequence for the model-based runner: the step
// sequences of issue 18 that broke a contract, kept so that they run on
// every test run whatever the random sequences hit.
type modelScenario struct {
	name  string
	limit int
	steps []step
}

func acq(client, op int, res string, mode zklock.Mode) step {
	return step{kind: stAcquire, client: client, newOp: op, res: []string{res}, mode: mode}
}

func sem(client, op int, res string, limit int) step {
	return step{kind: stAcquire, client: client, newOp: op, res: []string{res}, mode: zklock.Semaphore, limit: limit}
}

func release(op int) step { return step{kind: stRelease, op: op} }

func deleteNode(op int, res string) step { return step{kind: stDelete, op: op, res: []string{res}} }

var modelScenarios = []modelScenario{{
	// Item 0: a waiter whose node an operator deleted queues again; its
	// lease must then be lost as soon as its new node is deleted.
	name: "item0-requeued-waiter-loses-its-lease",
	steps: []step{
		acq(0, 1, "a", zklock.Exclusive),
		acq(1, 2, "a", zklock.Exclusive),
		deleteNode(2, "a"),
		release(1),
		deleteNode(2, "a"),
		{kind: stTry, client: 2, newOp: 3, res: []string{"a"}, mode: zklock.Exclusive},
		release(3),
		release(2),
	},
}, {
	// Item 0: the same after the waiter's session expired.
	name: "item0-waiter-requeued-after-expiry-loses-its-lease",
	steps: []step{
		acq(0, 1, "a", zklock.Exclusive),
		acq(1, 2, "a", zklock.Write),
		{kind: stExpire, client: 1},
		release(1),
		deleteNode(2, "a"),
		{kind: stTry, client: 2, newOp: 3, res: []string{"a"}, mode: zklock.Write},
		release(3),
	},
}, {
	// Item 0b: a multi-resource acquire that loses the part it holds
	// while it waits for the next starts over.
	name: "item0b-lost-part-starts-over",
	steps: []step{
		acq(1, 1, "b", zklock.Exclusive),
		{kind: stAcquire, client: 0, newOp: 2, res: []string{"a", "b"}, mode: zklock.Exclusive},
		deleteNode(2, "a"),
		{kind: stTry, client: 2, newOp: 3, res: []string{"a"}, mode: zklock.Exclusive},
		release(1),
		release(2),
	},
}, {
	// Item 0b: AcquireAll under the context of a lease that holds some of
	// its resources re-enters those and acquires the rest.
	name: "item0b-acquireall-reenters-in-part",
	steps: []step{
		acq(0, 1, "a", zklock.Exclusive),
		{kind: stReenter, client: 0, op: 1, newOp: 2, res: []string{"a", "b"}, mode: zklock.Exclusive},
		{kind: stTry, client: 1, newOp: 3, res: []string{"b"}, mode: zklock.Exclusive},
		release(1),
		{kind: stTry, client: 1, newOp: 4, res: []string{"a"}, mode: zklock.Exclusive},
		release(2),
		{kind: stTry, client: 1, newOp: 5, res: []string{"a"}, mode: zklock.Exclusive},
		release(5),
	},
}, {
	// Item 1: a semaphore hands a slot on whichever holder leaves.
	name:  "item1-semaphore-second-holder-leaves",
	limit: 2,
	steps: []step{
		sem(0, 1, "s", 2),
		sem(1, 2, "s", 2),
		sem(2, 3, "s", 2),
		release(2),
		release(3),
		release(1),
	},
}, {
	name:  "item1-semaphore-out-of-order-limit-3",
	limit: 3,
	steps: []step{
		sem(0, 1, "s", 3),
		sem(1, 2, "s", 3),
		sem(2, 3, "s", 3),
		sem(0, 4, "s", 3),
		sem(1, 5, "s", 3),
		release(3),
		release(2),
		release(5),
		release(1),
		release(4),
	},
}, {
	// Downgrade of a re-entered lease is refused (item 0b, related).
	name: "item0b-downgrade-of-a-reentered-lease",
	steps: []step{
		acq(0, 1, "a", zklock.Write),
		{kind: stReenter, client: 0, op: 1, newOp: 2, res: []string{"a"}, mode: zklock.Write},
		{kind: stDowngrade, op: 1, newOp: 3},
		release(2),
		{kind: stDowngrade, op: 1, newOp: 4},
		release(4),
	},
}, {
	// Downgrade is refused with a writer queued behind the lease, and
	// otherwise lets the readers queued behind it in at once.
	name: "downgrade-past-readers-not-writers",
	steps: []step{
		acq(0, 1, "a", zklock.Write),
		acq(1, 2, "a", zklock.Read),
		acq(2, 3, "a", zklock.Write),
		{kind: stDowngrade, op: 1, newOp: 4},
		{kind: stCancel, op: 3},
		{kind: stDowngrade, op: 1, newOp: 5},
		release(2),
		release(5),
	},
}, {
	// MemoryLocker parity (item 0b, related): Limit(1) then Limit(2) on
	// the same live queue is refused, not a second holder.
	name:  "item0b-semaphore-limit-mismatch",
	limit: 1,
	steps: []step{
		sem(0, 1, "s", 1),
		{kind: stMismatch, client: 1, newOp: 2, res: []string{"s"}, mode: zklock.Semaphore, limit: 2},
		sem(2, 3, "s", 1),
		release(1),
		release(3),
	},
}, {
	// CURATOR-206: a holder whose session expired is told its lease is
	// lost, and its nodes are forgotten.
	name: "holder-session-expires",
	steps: []step{
		acq(0, 1, "a", zklock.Exclusive),
		acq(1, 2, "a", zklock.Exclusive),
		{kind: stExpire, client: 0},
		release(2),
		release(1),
	},
}, {
	// Issue 32 §3: a waiter that reads a diverged server's listing
	// (another node shown with its sequence number) decides nothing on
	// it, behind another client's holder and behind its own client's.
	name: "diverged-listing-grants-nothing",
	steps: []step{
		acq(0, 1, "a", zklock.Exclusive),
		{kind: stAcquire, client: 1, newOp: 2, res: []string{"a"}, mode: zklock.Exclusive, diverge: true},
		release(1),
		acq(2, 3, "b", zklock.Write),
		acq(0, 4, "b", zklock.Read),
		{kind: stAcquire, client: 2, newOp: 5, res: []string{"b"}, mode: zklock.Read, diverge: true},
		release(3),
		release(2),
		release(4),
		release(5),
	},
}, {
	// Item 2: Try with MaxWait is refused the same way everywhere.
	name: "item2-try-with-maxwait",
	steps: []step{
		acq(0, 1, "a", zklock.Exclusive),
		{kind: stTryMaxWait, client: 1, newOp: 2, res: []string{"a"}, mode: zklock.Exclusive},
		{kind: stTryMaxWait, client: 1, newOp: 3, res: []string{"b"}, mode: zklock.Read},
		release(1),
	},
}, {
	// A new user's probe (29 November): a semaphore acquire was granted
	// past a node of another mode (exclusive, write, read, another
	// recipe's), as long as fewer nodes than its limit were ahead.
	name:  "semaphore-behind-another-mode",
	limit: 2,
	steps: []step{
		acq(0, 1, "s", zklock.Exclusive),
		sem(1, 2, "s", 2),
		sem(2, 3, "s", 2),
		{kind: stTry, client: 1, newOp: 4, res: []string{"s"}, mode: zklock.Semaphore, limit: 2},
		release(1),
		acq(0, 5, "s", zklock.Read),
		release(2),
		{kind: stTry, client: 1, newOp: 6, res: []string{"s"}, mode: zklock.Semaphore, limit: 2},
		release(3),
		acq(2, 7, "s", zklock.Write),
		release(5),
		release(7),
	},
}}

// TestIntegration_ModelScenarios runs the sequences of issue 18 that
// broke a contract through the model-based runner, on a MemoryLocker and
// on ZooKeeper.
func TestIntegration_ModelScenarios(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, sc := range modelScenarios {
		t.Run(sc.name, func(t *testing.T) {
			setup := modelSetup{rw: []string{"a", "b", "c"}, sema: []string{"s", "t"}, limit: max(sc.limit, 1), clients: 3}
			t.Run("memory", func(t *testing.T) {
				newRunner(t, 0, newMemSystem(setup), setup, sc.steps, &modelStats{}).run()
			})
			t.Run("zookeeper", func(t *testing.T) {
				newRunner(t, 0, newZKSystem(t, setup), setup, sc.steps, &modelStats{}).run()
			})
		})
	}
}
