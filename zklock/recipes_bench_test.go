package zklock_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// BenchmarkReadHeavy compares, in the same run against the same server, 16
// contenders (each its own session) doing 90% reads and 10% writes with the
// read/write lock, against the same workload with the exclusive lock for
// everything. Each critical section does 1ms of work. Rounds alternate the
// two so machine drift hits both; the reported figures are medians.
//
//	go test -run XXX -bench ReadHeavy -benchtime 1x ./zklock
func BenchmarkReadHeavy(b *testing.B) {
	const contenders, round = 16, 2 * time.Second
	root := zktest.UniqueRoot(b)
	clients := make([]*zklock.Client, contenders)
	for i := range clients {
		clients[i] = newClient(b, root)
	}
	run := func(rw bool) float64 {
		ctx := context.Background()
		var ops atomic.Int64
		stop := time.Now().Add(round)
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rnd := rand.New(rand.NewPCG(uint64(i), 7))
				for time.Now().Before(stop) {
					mode := zklock.Exclusive
					if rw {
						mode = zklock.Write
						if rnd.IntN(10) != 0 {
							mode = zklock.Read
						}
					}
					l, err := c.Acquire(ctx, "doc", mode)
					if err != nil {
						b.Error(err)
						return
					}
					time.Sleep(time.Millisecond)
					l.Release(ctx)
					ops.Add(1)
				}
			}()
		}
		wg.Wait()
		return float64(ops.Load()) / round.Seconds()
	}
	var excl, rw, ratio []float64
	for i := 0; i < b.N; i++ {
		for r := 0; r < 3; r++ {
			e, w := run(false), run(true)
			excl, rw, ratio = append(excl, e), append(rw, w), append(ratio, w/e)
		}
	}
	b.ReportMetric(median(excl), "exclusive-ops/s")
	b.ReportMetric(median(rw), "readwrite-ops/s")
	b.ReportMetric(median(ratio), "ratio")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkLeaderFailover measures how long after ZooKeeper deletes the
// leader's node (its session closed) the next candidate is elected, against
// one round trip to the server, over rounds; medians reported. The next
// candidate had only the leader ahead of it, so it needs no request at all.
//
//	go test -run XXX -bench LeaderFailover -benchtime 1x ./zklock
func BenchmarkLeaderFailover(b *testing.B) {
	root := zktest.UniqueRoot(b)
	ctx := context.Background()
	watcher := newClient(b, root)
	var gaps, rtts []float64
	for i := 0; i < b.N*20; i++ {
		a := newClient(b, root)
		next := newClient(b, root)
		lead, err := a.Campaign(ctx, "leader", []byte("a"))
		if err != nil {
			b.Fatal(err)
		}
		elected := make(chan time.Time, 1)
		go func() {
			l, err := next.Campaign(ctx, "leader", []byte("b"))
			if err != nil {
				b.Error(err)
				return
			}
			elected <- time.Now()
			l.Release(ctx)
		}()
		for len(next.Locks()) == 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(5 * time.Millisecond) // its watch is set
		_, _, ch, err := watcher.Conn().ExistsW(lead.Path())
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, _, err := watcher.Conn().Exists(root); err != nil {
			b.Fatal(err)
		}
		rtts = append(rtts, float64(time.Since(start).Microseconds())/1000)
		a.Close() // the session ends: ZooKeeper deletes the leader's node
		ev := <-ch
		deletedAt := time.Now()
		if ev.Type != zk.EventNodeDeleted {
			b.Fatalf("event %v", ev)
		}
		gaps = append(gaps, float64(max(0, (<-elected).Sub(deletedAt).Microseconds()))/1000)
		next.Close()
	}
	b.ReportMetric(median(gaps), "ms-after-delete")
	b.ReportMetric(median(rtts), "ms-rtt")
	b.ReportMetric(0, "ns/op")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
