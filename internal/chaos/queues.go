package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// snapshotQueues records an EvQueues about every period, from its own
// connection straight to the ensemble (no proxy, so worker faults do not
// touch it), until the returned func is called; that func returns once the
// goroutine is done. A listing that fails (a leader kill, a server
// restart) is skipped whole: a snapshot is never partial.
//
// Each listing starts with a sync, so the server it reads from has applied
// everything committed before the listing began: a node listed still
// existed at T (it was not deleted before), and existed at some moment
// before End.
func snapshotQueues(addrs []string, root string, h *hub, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, _, err := zk.Connect(addrs, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
		if err != nil {
			h.record(Event{Kind: EvNote, Detail: "queue snapshots: cannot connect: " + err.Error()})
			return
		}
		defer conn.Close()
		taken, skipped := 0, 0
		for ctx.Err() == nil {
			start := time.Now()
			owners, err := syncedLockNodes(conn, root)
			end := time.Now()
			if err == nil {
				h.record(Event{Kind: EvQueues, T: start.UnixNano(), End: end.UnixNano(), Owners: owners, Server: serverIndex(addrs, conn.Server())})
				taken++
			} else {
				skipped++
			}
			sleepCtx(ctx, time.Until(start.Add(period)))
		}
		h.record(Event{Kind: EvNote, Detail: fmt.Sprintf("queue snapshots: %d taken, %d skipped (listing failed)", taken, skipped)})
	}()
	return func() {
		cancel()
		<-done
	}
}

// syncedLockNodes is lockNodes after a sync of the server it reads from.
func syncedLockNodes(conn *zk.Conn, root string) (map[string]int64, error) {
	if _, err := conn.Sync("/"); err != nil {
		return nil, err
	}
	return lockNodes(conn, root)
}

// serverIndex returns the 1-based index of addr in addrs, 0 if absent.
func serverIndex(addrs []string, addr string) int {
	for i, a := range addrs {
		if a == addr {
			return i + 1
		}
	}
	return 0
}
