package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// snapshotQueues records an EvQueues about every period, from
// connections of its own straight to the ensemble (no proxy, so worker
// faults do not touch them), until the returned func is called; that func
// returns once its goroutines are done. A listing that fails (a leader
// kill, a server restart) is skipped whole: a snapshot is never partial.
//
// Each listing starts with a sync, so the server it reads from has applied
// everything committed before the listing began: a node listed still
// existed at T (it was not deleted before), and existed at some moment
// before End.
//
// The members are read in turn, each on a connection pinned to it (one
// goroutine each, so a member that hangs delays only its own listings):
// two members that disagree on a node after a sync have diverged, which
// the checker tells apart from a node zklock lost track of (VDivergence).
func snapshotQueues(addrs []string, root string, h *hub, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	every := period * time.Duration(len(addrs))
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sleepCtx(ctx, period*time.Duration(i)) // staggered: one listing per period in all
			conn, err := dialQuiet([]string{addr})
			if err != nil {
				h.record(Event{Kind: EvNote, Detail: fmt.Sprintf("queue snapshots of zk%d: cannot connect: %v", i+1, err)})
				return
			}
			defer conn.Close()
			taken, skipped := 0, 0
			for ctx.Err() == nil {
				start := time.Now()
				owners, err := syncedLockNodes(conn, root)
				end := time.Now()
				if err == nil {
					h.record(Event{Kind: EvQueues, T: start.UnixNano(), End: end.UnixNano(), Owners: owners, Server: i + 1})
					taken++
				} else {
					skipped++
				}
				sleepCtx(ctx, time.Until(start.Add(every)))
			}
			h.record(Event{Kind: EvNote, Detail: fmt.Sprintf("queue snapshots of zk%d: %d taken, %d skipped (listing failed)", i+1, taken, skipped)})
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// syncedLockNodes is lockNodes after a sync of the server it reads from.
func syncedLockNodes(conn *zk.Conn, root string) (map[string]int64, error) {
	if _, err := conn.Sync("/"); err != nil {
		return nil, err
	}
	return lockNodes(conn, root)
}
