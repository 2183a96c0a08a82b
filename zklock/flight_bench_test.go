package zklock_test

import (
	"context"
	"runtime/trace"
	"slices"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// BenchmarkFlightRecorder measures what a FlightRecorder costs an
// uncontended acquire and release against a real ZooKeeper. Go's trace
// runs for the whole process, so the two arms cannot take turns op by
// op: they take turns by blocks of 20 cycles (and turns at going
// first), one with the runtime flight recorder running (the FlightRecorder's
// defaults) and a Client that feeds a FlightRecorder, the other with the
// recorder stopped and a plain Client, in the same process. It reports
// the median wall time of a cycle in each arm and the overhead of the
// recorded median over the plain one, in percent. Run it several times:
//
//	go test -run '^$' -bench BenchmarkFlightRecorder -benchtime 2000x -count 8 ./zklock
func BenchmarkFlightRecorder(b *testing.B) {
	const block = 20
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: zklock.DefaultFlightWindow, MaxBytes: zklock.DefaultFlightMaxBytes})
	if err := fr.Start(); err != nil {
		b.Fatal(err)
	}
	rec, err := zklock.NewFlightRecorder(b.TempDir(), zklock.FlightTrace(fr))
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	fr.Stop()
	root := zktest.UniqueRoot(b)
	plain := newClient(b, root)
	recorded := newClient(b, root, zklock.WithFlightRecorder(rec))
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
	var p, r []time.Duration
	run := func(on bool, n int) {
		c, wall := plain, &p
		if on {
			if err := fr.Start(); err != nil {
				b.Fatal(err)
			}
			defer fr.Stop()
			c, wall = recorded, &r
			op(c) // the first cycle after a start pays the tracer's start-up
		}
		for range n {
			s := time.Now()
			op(c)
			*wall = append(*wall, time.Since(s))
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i += 2 * block {
		n := min(block, (b.N-i+1)/2)
		first := (i/(2*block))%2 == 0
		run(first, n)
		run(!first, n)
	}
	b.StopTimer()
	mp, mr := durMedian(p), durMedian(r)
	b.ReportMetric(float64(mp.Nanoseconds()), "plain-p50-ns")
	b.ReportMetric(float64(mr.Nanoseconds()), "recorded-p50-ns")
	b.ReportMetric(100*(float64(mr)/float64(mp)-1), "overhead-%")
}

func durMedian(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}
