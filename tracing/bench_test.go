package tracing_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// benchObserver is an Observer on a real SDK set up as in production
// (always sample, batch span processor, aggregating meter), exporting
// nowhere.
func benchObserver(b *testing.B) *tracing.Observer {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return tracing.NewObserver(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(mp))
}

// BenchmarkAcquireRelease measures an uncontended acquire and release of
// one resource, through a Client without tracing (plain) and one with it
// (traced), on the same server in the same run. interleaved alternates the
// two clients op by op (and which goes first), which cancels out drifts of
// a noisy machine, and reports the median time of each, the overhead of
// the traced median over the plain one in percent, and the CPU time of
// each. cpu-ns/op is the process's CPU time per op, a figure that the
// machine's load disturbs far less than wall time.
func BenchmarkAcquireRelease(b *testing.B) {
	root := zktest.UniqueRoot(b)
	plain := connect(b, root)
	traced := connect(b, root, zklock.WithObserver(benchObserver(b)))
	const resource = "bench/1"
	ctx := context.Background()
	op := func(b *testing.B, c *zklock.Client) {
		l, err := c.Acquire(ctx, resource)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	op(b, plain) // create the queue node
	b.Run("plain", func(b *testing.B) {
		cpu := cpuTime()
		for b.Loop() {
			op(b, plain)
		}
		reportCPU(b, cpuTime()-cpu)
	})
	b.Run("traced", func(b *testing.B) {
		cpu := cpuTime()
		for b.Loop() {
			op(b, traced)
		}
		reportCPU(b, cpuTime()-cpu)
	})
	b.Run("interleaved", func(b *testing.B) {
		var p, t, pc, tc []time.Duration
		timed := func(c *zklock.Client, wall, cpu *[]time.Duration) {
			s, sc := time.Now(), cpuTime()
			op(b, c)
			*cpu = append(*cpu, cpuTime()-sc)
			*wall = append(*wall, time.Since(s))
		}
		for i := 0; b.Loop(); i++ {
			if i%2 == 0 { // alternate which goes first
				timed(plain, &p, &pc)
				timed(traced, &t, &tc)
			} else {
				timed(traced, &t, &tc)
				timed(plain, &p, &pc)
			}
		}
		// Medians: one fsync stall of the server moves a mean by more
		// than the instrumentation costs.
		mp, mt := median(p), median(t)
		b.ReportMetric(float64(mp.Nanoseconds()), "plain-p50-ns")
		b.ReportMetric(float64(mt.Nanoseconds()), "traced-p50-ns")
		b.ReportMetric(100*(float64(mt)/float64(mp)-1), "overhead-%")
		// CPU: the mean counts the work done off the caller's goroutine
		// (the span processor's, the garbage collector's) but a burst of
		// either lands on whichever op runs; the median leaves them out.
		sp, st := total(pc), total(tc)
		b.ReportMetric(float64(sp.Nanoseconds())/float64(len(pc)), "plain-cpu-ns/op")
		b.ReportMetric(float64(st.Nanoseconds())/float64(len(tc)), "traced-cpu-ns/op")
		b.ReportMetric(100*(float64(st)/float64(sp)-1), "cpu-overhead-%")
		cp, ct := median(pc), median(tc)
		b.ReportMetric(float64(cp.Nanoseconds()), "plain-cpu-p50-ns")
		b.ReportMetric(float64(ct.Nanoseconds()), "traced-cpu-p50-ns")
		b.ReportMetric(100*(float64(ct)/float64(cp)-1), "cpu-p50-overhead-%")
	})
}

func total(ds []time.Duration) time.Duration {
	var s time.Duration
	for _, d := range ds {
		s += d
	}
	return s
}

// cpuTime returns the CPU time (user and system) used by the process so
// far: all its threads, so it includes the ZooKeeper client's goroutines,
// the span processor's and the garbage collector's. Unlike wall time it
// hardly depends on what else the machine runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, d time.Duration) {
	b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkObserver measures the Observer alone: the events of one
// uncontended acquire and release (started, enqueued, acquired, released),
// with the real SDK.
func BenchmarkObserver(b *testing.B) {
	o := benchObserver(b)
	ctx := context.Background()
	e := zklock.Event{Resource: "accounts/42", Resources: []string{"accounts/42"}, Path: "/zklock/accounts%2F42/_c_0b1d-lock-0000000001", Token: 77, SessionID: 0x1234}
	var id uint64
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		id++
		e.ID, e.Time = id, time.Now()
		e.Kind = zklock.EventStarted
		o.Observe(ctx, e)
		e.Kind = zklock.EventEnqueued
		o.Observe(ctx, e)
		e.Kind, e.Wait = zklock.EventAcquired, time.Millisecond
		o.Observe(ctx, e)
		e.Kind, e.Held = zklock.EventReleased, time.Millisecond
		o.Observe(ctx, e)
	}
	reportCPU(b, cpuTime()-cpu)
}
