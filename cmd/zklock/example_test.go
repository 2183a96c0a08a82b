package main

import (
	"os"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// WriteQueue prints a queue the way "zklock show" does; examples/basic uses
// it to show the queue mid-run. The holder reported a hold-time median of
// 300ms when it queued, so the waiters' turns come in about 300ms and
// 600ms; worker-1's acquire gives up in 500ms, before its turn.
func ExampleWriteQueue() {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	q := &zklock.Queue{
		Resource: "demo/nightly-report",
		Path:     "/zklock/demo%2Fnightly-report",
		Nodes: []zklock.QueueNode{
			{Name: "_c_3f1e0b7a-lock-0000000002", Position: 0, Holder: true, Token: 23, SessionID: 0x100008a1b2c0003,
				Owner: zklock.Owner{Host: "box-1", PID: 27461, Label: "worker-3", HoldMedian: 300 * time.Millisecond}, Created: now.Add(-388 * time.Millisecond)},
			{Name: "_c_9c2d44e1-lock-0000000003", Position: 1, Turns: 1, Token: 24, SessionID: 0x100008a1b2c0004,
				Owner: zklock.Owner{Host: "box-1", PID: 27462, Label: "worker-4"}, Created: now.Add(-387 * time.Millisecond)},
			{Name: "_c_51aa07c9-lock-0000000004", Position: 2, Turns: 2, Token: 25, SessionID: 0x100008a1b2c0005,
				Owner: zklock.Owner{Host: "box-2", PID: 913, Label: "worker-1", Deadline: now.Add(500 * time.Millisecond)}, Created: now.Add(-12 * time.Second)},
		},
	}
	_ = WriteQueue(os.Stdout, q, now)
	// Output:
	// resource  demo/nightly-report
	// queue     /zklock/demo%2Fnightly-report
	// state     1 holder, 2 waiting
	// hold p50  300ms (reported by 1 node); a waiter's wait ≈ its turns × this
	//
	// POS  STATE    MODE       HOST   PID    LABEL     TOKEN  AGE    WAIT≈  DEADLINE                SESSION            NODE
	// 0    holds    exclusive  box-1  27461  worker-3  23     388ms  -      -                       0x100008a1b2c0003  _c_3f1e0b7a-lock-0000000002
	// 1    waiting  exclusive  box-1  27462  worker-4  24     387ms  300ms  -                       0x100008a1b2c0004  _c_9c2d44e1-lock-0000000003
	// 2    waiting  exclusive  box-2  913    worker-1  25     12s    600ms  500ms (gives up first)  0x100008a1b2c0005  _c_51aa07c9-lock-0000000004
}

// An empty queue is not an error.
func ExampleWriteQueue_empty() {
	q := &zklock.Queue{Resource: "no/such", Path: "/zklock/no%2Fsuch"}
	_ = WriteQueue(os.Stdout, q, time.Now())
	// Output:
	// resource  no/such
	// queue     /zklock/no%2Fsuch
	// state     free: no holder, no waiters (nobody holds "no/such" now; 'zklock ls' lists resources in use)
}
