package zkdebug_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// BenchmarkHistory measures what a History costs an uncontended acquire
// and release against a real ZooKeeper: two Clients on one server, one
// plain and one observed by a History, take turns op by op (and turns at
// going first), which cancels out the drifts of a loaded machine. It
// reports the median wall time of each and the overhead of the observed
// median over the plain one, in percent. Run it several times:
//
//	go test -run '^$' -bench BenchmarkHistory -benchtime 2000x -count 7 ./zkdebug
func BenchmarkHistory(b *testing.B) {
	root := zktest.UniqueRoot(b)
	plain := connect(b, root)
	observed := connect(b, root, zklock.WithObserver(zkdebug.NewHistory()))
	ctx := context.Background()
	op := func(c *zklock.Client) {
		l, err := c.Acquire(ctx, "bench/1")
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	op(plain) // create the queue node
	var p, o []time.Duration
	timed := func(c *zklock.Client, wall *[]time.Duration) {
		s := time.Now()
		op(c)
		*wall = append(*wall, time.Since(s))
	}
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			timed(plain, &p)
			timed(observed, &o)
		} else {
			timed(observed, &o)
			timed(plain, &p)
		}
	}
	mp, mo := median(p), median(o)
	b.ReportMetric(float64(mp.Nanoseconds()), "plain-p50-ns")
	b.ReportMetric(float64(mo.Nanoseconds()), "history-p50-ns")
	b.ReportMetric(100*(float64(mo)/float64(mp)-1), "overhead-%")
}

// BenchmarkHistoryObserve measures the History alone: the events of one
// uncontended acquire and release, in a hot loop.
func BenchmarkHistoryObserve(b *testing.B) {
	h := zkdebug.NewHistory()
	ctx := context.Background()
	e := zklock.Event{Resource: "accounts/42", Resources: []string{"accounts/42"}}
	var id uint64
	b.ReportAllocs()
	for b.Loop() {
		id++
		e.ID, e.Time = id, time.Now()
		for _, k := range []zklock.EventKind{zklock.EventStarted, zklock.EventEnqueued, zklock.EventAcquired, zklock.EventReleased} {
			e.Kind, e.Wait = k, time.Millisecond
			h.Observe(ctx, e)
		}
	}
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}
