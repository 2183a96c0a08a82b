// Command basic is zklockkit's demo: several worker processes contend for
// one lock through ZooKeeper. Each prints when it enqueues (and at which
// position), when it acquires (after how long), and when it releases; the
// parent prints the queue as ZooKeeper holds it, mid-run.
//
//	ZKLOCK_SERVERS=127.0.0.1:2181 go run ./examples/basic -workers 5
//
// `make demo` starts a local ZooKeeper first when ZKLOCK_SERVERS is unset.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/zklockkit/zklockkit/internal/zkenv"
	"github.com/zklockkit/zklockkit/zklock"
)

const resource = "demo/nightly-report"

func main() {
	workers := flag.Int("workers", 5, "worker processes")
	rounds := flag.Int("rounds", 2, "times each worker takes the lock")
	hold := flag.Duration("hold", 300*time.Millisecond, "how long a worker holds the lock")
	worker := flag.Int("worker", 0, "internal: run as worker N")
	flag.Parse()
	log.SetFlags(0)
	if *worker > 0 {
		if err := runWorker(*worker, *rounds, *hold); err != nil {
			log.Fatalf("worker %d: %v", *worker, err)
		}
		return
	}
	if err := runParent(*workers, *rounds, *hold); err != nil {
		log.Fatal(err)
	}
}

func runParent(n, rounds int, hold time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fmt.Printf("zklock demo: %d worker processes, one lock %q, ZooKeeper at %s\n\n", n, resource, zkenv.Servers())
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 1; i <= n; i++ {
		cmd := exec.CommandContext(ctx, self, "-worker", strconv.Itoa(i), "-rounds", strconv.Itoa(rounds), "-hold", hold.String())
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs <- cmd.Wait() }()
	}
	// Mid-run, once one worker holds the lock and another waits, show the
	// queue the way an operator would see it.
	c, err := zklock.Open(ctx, zkenv.Servers())
	if err != nil {
		return err
	}
	defer c.Close()
	if q := busyQueue(ctx, c, 10*time.Second); q != nil {
		fmt.Printf("\n$ zklock show %s\n", resource)
		printQueue(q, time.Now())
		fmt.Println()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	fmt.Println("\nall workers done; every hold was exclusive and no lock node is left behind.")
	if q, err := c.Inspect(ctx, resource); err == nil && len(q.Nodes) != 0 {
		return fmt.Errorf("%d lock nodes left behind", len(q.Nodes))
	}
	return nil
}

// busyQueue polls the demo's queue until it has a holder and a waiter and
// returns it; after timeout (the workers were too slow to start, or are
// done) it returns the last queue read, or nil if none could be read.
func busyQueue(ctx context.Context, c *zklock.Client, timeout time.Duration) *zklock.Queue {
	var last *zklock.Queue
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		q, err := c.Inspect(ctx, resource)
		if err != nil {
			continue
		}
		last = q
		if len(q.Holders()) > 0 && len(q.Nodes) > 1 {
			return q
		}
	}
	return last
}

// printQueue prints q as "zklock show" does, holder first.
func printQueue(q *zklock.Queue, now time.Time) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POS\tSTATE\tHOST\tPID\tLABEL\tTOKEN\tAGE\tNODE")
	for _, n := range q.Nodes {
		state := "waiting"
		if n.Holder {
			state = "holds"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%d\t%s\t%s\n", n.Position, state, n.Owner.Host, n.Owner.PID,
			n.Owner.Label, n.Token, now.Sub(n.Created).Round(time.Millisecond), n.Name)
	}
	_ = tw.Flush()
}

func runWorker(id, rounds int, hold time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	name := fmt.Sprintf("worker-%d", id)
	say := func(format string, a ...any) {
		fmt.Printf("%s %-9s %s\n", time.Now().Format("15:04:05.000"), name, fmt.Sprintf(format, a...))
	}
	report := zklock.ObserverFunc(func(_ context.Context, e zklock.Event) {
		switch e.Kind {
		case zklock.EventEnqueued:
			say("enqueued at position %d", e.Position)
		case zklock.EventPosition:
			say("moved to position %d", e.Position)
		}
	})
	c, err := zklock.Open(ctx, zkenv.Servers(), zklock.WithLabel(name), zklock.WithObserver(report))
	if err != nil {
		return err
	}
	defer c.Close()
	for r := 0; r < rounds; r++ {
		lease, err := c.Acquire(ctx, resource)
		if err != nil {
			return err
		}
		say("ACQUIRED after %v (fencing token %d)", lease.Waited().Round(time.Millisecond), lease.Token())
		select {
		case <-time.After(hold):
		case <-lease.Done():
			return lease.Err()
		}
		if err := lease.Release(ctx); err != nil {
			return err
		}
		say("released")
		time.Sleep(time.Duration(id) * 10 * time.Millisecond)
	}
	return nil
}
