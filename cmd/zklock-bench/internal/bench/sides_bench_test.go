package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/cmd/zklock-bench/internal/bench"
	"github.com/zklockkit/zklockkit/zktest"
)

// The benchmarks compare zklock with go-zookeeper's zk.Lock on the shared
// test server, each side in a sub-benchmark: "zklock" and
// "go-zookeeper-Lock". They reuse the scenarios of this package; the
// zklock-bench command runs the same scenarios interleaved over several
// rounds and prints the comparison table. Besides ns/op each reports its
// rate (ops/s) and the median and 99th percentile latency of the
// scenario's unit of work (p50-ms, p99-ms).

func benchHarness(b *testing.B) *bench.Harness {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := bench.NewHarness(ctx, []string{zktest.Shared().Addr()}, zktest.UniqueRoot(b), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := h.Close(); err != nil {
			b.Error(err)
		}
	})
	return h
}

func sideName(s bench.Side) string {
	if s.Name() == bench.NameZKLock {
		return "zklock"
	}
	return "go-zookeeper-Lock"
}

func reportSample(b *testing.B, s bench.Sample) {
	b.ReportMetric(s.Rate(), "ops/s")
	b.ReportMetric(float64(s.Percentile(50))/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(float64(s.Percentile(99))/float64(time.Millisecond), "p99-ms")
}

// benchCtx returns a cancellable context, like a request's: zklock takes a
// different path for contexts that can never end.
func benchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	return ctx
}

// eachSide runs run as a sub-benchmark per side; run does b.N operations
// and returns their sample.
func eachSide(b *testing.B, run func(ctx context.Context, h *bench.Harness, side bench.Side, n int) (bench.Sample, error)) {
	h := benchHarness(b)
	for _, side := range bench.Sides() {
		b.Run(sideName(side), func(b *testing.B) {
			s, err := run(benchCtx(b), h.WithTimer(b), side, b.N)
			if err != nil {
				b.Fatal(err)
			}
			reportSample(b, s)
		})
	}
}

// BenchmarkUncontended: one session, acquire+release of one lock; an
// operation is one cycle.
func BenchmarkUncontended(b *testing.B) {
	eachSide(b, bench.Uncontended)
}

// BenchmarkPingPong: two sessions take one lock in turn, every acquire
// waiting for the other's release; an operation is one hand-off and the
// latencies are hand-off latencies.
func BenchmarkPingPong(b *testing.B) {
	eachSide(b, bench.PingPong)
}

// BenchmarkContenders: 8 and 32 sessions loop acquire/release on one lock;
// an operation is one acquisition, latencies are acquire waits.
func BenchmarkContenders(b *testing.B) {
	for _, n := range []int{8, 32} {
		b.Run(map[int]string{8: "8", 32: "32"}[n], func(b *testing.B) {
			eachSide(b, func(ctx context.Context, h *bench.Harness, side bench.Side, ops int) (bench.Sample, error) {
				return bench.Contenders(ctx, h, side, n, max(ops, n))
			})
		})
	}
}

// BenchmarkQueue1000: a 1,000-deep queue drains; an operation is one whole
// drain, ops/s counts acquisitions.
func BenchmarkQueue1000(b *testing.B) {
	eachSide(b, repeat(func(ctx context.Context, h *bench.Harness, side bench.Side) (bench.Sample, error) {
		return bench.Queue(ctx, h, side, 1000)
	}))
}

// BenchmarkDistinct1000: 1,000 goroutines on one session each acquire and
// release their own lock at once; an operation is the whole batch, ops/s
// counts locks.
func BenchmarkDistinct1000(b *testing.B) {
	eachSide(b, repeat(func(ctx context.Context, h *bench.Harness, side bench.Side) (bench.Sample, error) {
		return bench.Distinct(ctx, h, side, 1000, 1)
	}))
}

// BenchmarkFresh1000: BenchmarkDistinct1000 on resources never locked
// before, so every acquire makes its queue znode.
func BenchmarkFresh1000(b *testing.B) {
	eachSide(b, repeat(func(ctx context.Context, h *bench.Harness, side bench.Side) (bench.Sample, error) {
		return bench.Fresh(ctx, h, side, 1000, 1)
	}))
}

// BenchmarkHoldAll1000: 1,000 goroutines on one session each acquire a
// lock of their own at once, then all release at once (HoldAll);
// "acquire" times the acquires, "release" the releases. An operation is
// one acquire or one release.
func BenchmarkHoldAll1000(b *testing.B) {
	for _, phase := range []struct {
		name string
		p    bench.Phase
	}{{"acquire", bench.PhaseAcquire}, {"release", bench.PhaseRelease}} {
		b.Run(phase.name, func(b *testing.B) {
			eachSide(b, repeat(func(ctx context.Context, h *bench.Harness, side bench.Side) (bench.Sample, error) {
				return bench.HoldAll(ctx, h, side, 1000, 1, phase.p)
			}))
		})
	}
}

// repeat turns a fixed-size run into one of n runs, merging their samples.
func repeat(run func(ctx context.Context, h *bench.Harness, side bench.Side) (bench.Sample, error)) func(context.Context, *bench.Harness, bench.Side, int) (bench.Sample, error) {
	return func(ctx context.Context, h *bench.Harness, side bench.Side, n int) (bench.Sample, error) {
		var all bench.Sample
		for range n {
			s, err := run(ctx, h, side)
			if err != nil {
				return all, err
			}
			all.Ops += s.Ops
			all.Elapsed += s.Elapsed
			all.Latencies = append(all.Latencies, s.Latencies...)
		}
		return all, nil
	}
}

// BenchmarkRawCreateDelete: the server's ceiling for a lock cycle, one
// Create(EPHEMERAL_SEQUENTIAL)+Delete pair per operation on one session,
// serially and from 32 goroutines.
func BenchmarkRawCreateDelete(b *testing.B) {
	h := benchHarness(b)
	for _, width := range []int{1, 32} {
		b.Run(map[int]string{1: "serial", 32: "32-way"}[width], func(b *testing.B) {
			s, err := bench.RawCreateDelete(benchCtx(b), h.WithTimer(b), b.N, width)
			if err != nil {
				b.Fatal(err)
			}
			reportSample(b, s)
		})
	}
}

// BenchmarkWaiters10k: 10,000 goroutines on one session each wait for a
// lock held by another session; reports the live heap (B/waiter) and the
// goroutine stacks (stack-B/waiter) they add. The target for zklock is at
// most what a waiting zk.Lock costs, heap and stack together.
func BenchmarkWaiters10k(b *testing.B) {
	h := benchHarness(b)
	for _, side := range bench.Sides() {
		b.Run(sideName(side), func(b *testing.B) {
			var heap, stack float64
			for range b.N {
				// The whole measurement is timed: with the timer stopped
				// the framework would take it for a cheap operation and
				// ask for ever more of them.
				m, err := bench.MeasureWaiters(benchCtx(b), h, side, 10000)
				if err != nil {
					b.Fatal(err)
				}
				heap += m.HeapPerWaiter
				stack += m.StackPerWaiter
			}
			b.ReportMetric(heap/float64(b.N), "B/waiter")
			b.ReportMetric(stack/float64(b.N), "stack-B/waiter")
		})
	}
}
