package zklock_test

import (
	"context"
	"runtime/trace"
	"slices"
	"syscall"
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
// recorded median over the plain one, in percent, over all cycles and as
// the median of the per-pair ratios of block medians (which cancels drift
// slower than a block), and the process's CPU time per cycle in each arm
// (ZooKeeper's not included). The sub-benchmarks split the cost:
// "both" is the FlightRecorder as used; "trace" runs the runtime flight
// recorder with a plain Client in the recorded arm; "history" a Client
// feeding the FlightRecorder with the runtime recorder stopped. Run it
// several times; docs/operations.md quotes the runs kept in
// testdata/flight-cost.txt (TestFlightCostDocFigures):
//
//	go test -run '^$' -bench 'BenchmarkFlightRecorder' -benchtime 2000x -count 8 ./zklock
func BenchmarkFlightRecorder(b *testing.B) {
	for _, mode := range []string{"both", "trace", "history"} {
		b.Run(mode, func(b *testing.B) { benchmarkFlightRecorder(b, mode != "history", mode != "trace") })
	}
}

func benchmarkFlightRecorder(b *testing.B, tracing, history bool) {
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
	recorded := plain
	if history {
		recorded = newClient(b, root, zklock.WithFlightRecorder(rec))
	}
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
	op(plain)                // create the queue node
	var p, r []time.Duration // each cycle's wall time, by arm
	var ratios []float64     // per pair of blocks: the recorded block's median over the plain one's
	var cpu [2]time.Duration // the process's CPU time, by arm (plain, recorded)
	run := func(on bool, n int) time.Duration {
		c, wall, arm := plain, &p, 0
		if on {
			if tracing {
				if err := fr.Start(); err != nil {
					b.Fatal(err)
				}
				defer fr.Stop()
			}
			c, wall, arm = recorded, &r, 1
			op(c) // the first cycle after a start pays the tracer's start-up
		}
		from := len(*wall)
		before := cpuTime()
		for range n {
			s := time.Now()
			op(c)
			*wall = append(*wall, time.Since(s))
		}
		cpu[arm] += cpuTime() - before
		return durMedian((*wall)[from:])
	}
	b.ResetTimer()
	for i := 0; i < b.N; i += 2 * block {
		n := min(block, (b.N-i+1)/2)
		first := (i/(2*block))%2 == 0
		m1 := run(first, n)
		m2 := run(!first, n)
		if first {
			m1, m2 = m2, m1
		}
		ratios = append(ratios, float64(m2)/float64(m1))
	}
	b.StopTimer()
	mp, mr := durMedian(p), durMedian(r)
	slices.Sort(ratios)
	b.ReportMetric(float64(mp.Nanoseconds()), "plain-p50-ns")
	b.ReportMetric(float64(mr.Nanoseconds()), "recorded-p50-ns")
	b.ReportMetric(100*(float64(mr)/float64(mp)-1), "overhead-%")
	b.ReportMetric(100*(ratios[len(ratios)/2]-1), "paired-overhead-%")
	b.ReportMetric(float64(cpu[0].Nanoseconds())/float64(len(p)), "plain-cpu-ns")
	b.ReportMetric(float64(cpu[1].Nanoseconds())/float64(len(r)), "recorded-cpu-ns")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func durMedian(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}
