package zklock_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// Anyone reading a queue can tell how long its waiters will wait and
// which will give up first: a client that held the resource before
// reports its hold-time median in its node, and a waiter with a deadline
// writes it in its own.
func ExampleQueueNode_EstimatedWait() {
	ctx := context.Background()
	holder, err := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/estimate"))
	if err != nil {
		log.Fatal(err)
	}
	defer holder.Close()
	l, err := holder.Acquire(ctx, "reports/daily")
	if err != nil {
		log.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // the job takes 1.5s
	l.Release(ctx)
	l, err = holder.Acquire(ctx, "reports/daily") // its node reports a median of 1.5s
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)

	waiter, err := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/estimate"))
	if err != nil {
		log.Fatal(err)
	}
	defer waiter.Close()
	go waiter.Acquire(ctx, "reports/daily", zklock.MaxWait(1400*time.Millisecond)) // gives up before its turn
	var q *zklock.Queue
	for q == nil || len(q.Waiters()) == 0 {
		time.Sleep(10 * time.Millisecond)
		if q, err = holder.Inspect(ctx, "reports/daily"); err != nil {
			log.Fatal(err)
		}
	}
	hold, now := q.HoldMedian(), time.Now()
	for _, n := range q.Waiters() {
		wait, _ := n.EstimatedWait(hold)
		fmt.Println("turns:", n.Turns, "estimated wait ≥ 1.5s:", wait >= 1500*time.Millisecond,
			"deadline written:", !n.Owner.Deadline.IsZero(), "gives up first:", n.GivesUpFirst(now, hold))
	}
	// Output:
	// turns: 1 estimated wait ≥ 1.5s: true deadline written: true gives up first: true
}
