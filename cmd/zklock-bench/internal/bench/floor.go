package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// HandOffFloor measures the least a contended hand-off can cost, with raw
// go-zookeeper calls: a committed delete, the notification it fires and
// one listing. Two sessions, placed as ping-pong's are: A creates an
// EPHEMERAL_SEQUENTIAL node in a queue where B has a node of its own; B
// sets a data watch on A's node (GetW); then A deletes its node, and B,
// notified, lists the queue. That is n times over, one hand-off at a
// time.
//
// listed's latencies run from A's call to Delete until B's listing
// returned; its Elapsed is their sum, and its CPU the process's CPU time
// during them. notified's latencies run from the same call until B
// received the notification (the floor of a hand-off that needs no
// listing).
func HandOffFloor(ctx context.Context, h *Harness, n int) (listed, notified Sample, err error) {
	h.stopTimer()
	defer h.startTimer()
	root := h.newRoot("floor")
	defer h.cleanup(root)
	queue := root + "/q"
	if err := mkdirs(h.admin, queue, false); err != nil {
		return Sample{}, Sample{}, err
	}
	var conns [2]*zk.Conn
	for i := range conns {
		c, err := dial(ctx, h.sessionServers(root), h.timeout)
		if err != nil {
			return Sample{}, Sample{}, err
		}
		defer c.Close()
		conns[i] = c
	}
	a, b := conns[0], conns[1]
	if _, err := b.Create(queue+"/lock-", nil, zk.FlagEphemeralSequential, openACL); err != nil {
		return Sample{}, Sample{}, err
	}
	type seen struct {
		notified, listed time.Time
		cpu              time.Duration
		err              error
	}
	listed.Latencies = make([]time.Duration, 0, n)
	notified.Latencies = make([]time.Duration, 0, n)
	if err := quiet(ctx); err != nil {
		return Sample{}, Sample{}, err
	}
	h.startTimer()
	for range n {
		p, err := a.Create(queue+"/lock-", nil, zk.FlagEphemeralSequential, openACL)
		if err != nil {
			return Sample{}, Sample{}, err
		}
		// On an ensemble B's server may not have A's node yet: a sync
		// brings it up to date with the leader.
		if _, err := b.Sync(p); err != nil {
			return Sample{}, Sample{}, err
		}
		_, _, ch, err := b.GetW(p)
		if err != nil {
			return Sample{}, Sample{}, err
		}
		done := make(chan seen, 1)
		go func() {
			var s seen
			select {
			case ev := <-ch:
				s.notified = time.Now()
				if ev.Type != zk.EventNodeDeleted {
					s.err = fmt.Errorf("bench: floor: watch on %s fired %v, want a deletion", p, ev.Type)
				} else {
					_, _, s.err = b.Children(queue)
				}
				s.listed, s.cpu = time.Now(), processCPU()
			case <-ctx.Done():
				s.err = ctx.Err()
			}
			done <- s
		}()
		cpu, start := processCPU(), time.Now()
		if err := a.Delete(p, -1); err != nil {
			// The watcher ends when the deferred Close invalidates its
			// watch.
			return Sample{}, Sample{}, err
		}
		s := <-done
		if s.err != nil {
			return Sample{}, Sample{}, s.err
		}
		d := s.listed.Sub(start)
		listed.Latencies = append(listed.Latencies, d)
		listed.Elapsed += d
		listed.CPU += s.cpu - cpu
		d = s.notified.Sub(start)
		notified.Latencies = append(notified.Latencies, d)
		notified.Elapsed += d
	}
	h.stopTimer()
	listed.Ops, notified.Ops = n, n
	return listed, notified, nil
}
