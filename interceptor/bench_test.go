package interceptor_test

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// serveBench serves bk on 127.0.0.1 with the given server options and
// returns a client.
func serveBench(b *testing.B, bk *bank, opts ...grpc.ServerOption) bankpb.BankClient {
	srv := grpc.NewServer(opts...)
	bankpb.RegisterBankServer(srv, bk)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(srv.Stop)
	_, client := dial(b, ln.Addr().String())
	return client
}

// BenchmarkOverhead measures, in one run and interleaved so that drifts of
// ZooKeeper's latency hit all three alike:
//
//   - direct: Acquire + Release of one resource through zklock;
//   - plain: a unary GetBalance call to a server without the interceptor;
//   - locked: the same call to a server whose interceptor locks the same
//     resource around it;
//   - by hand: the same call to a server without the interceptor whose
//     handler acquires and releases the lock itself, for reference.
//
// It reports the median of each, and the interceptor's overhead beyond the
// lock's own cost: p50(locked) − p50(plain) − p50(direct), plus the median
// of the same difference taken per iteration, and p50(locked) − p50(by
// hand): what the interceptor costs over writing the lock into the handler.
//
// ZooKeeper's latency is most of each lock's cost and its jitter is what
// blurs the difference, so the benchmark runs its own server with
// zookeeper.forceSync=no (no fsync per write): the interceptor's overhead
// does not depend on the disk.
func BenchmarkOverhead(b *testing.B) {
	zs, err := zktest.StartServer(zktest.WithForceSync(false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = zs.Close() })
	ctx := context.Background()
	locker, err := zklock.Connect(ctx, []string{zs.Addr()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = locker.Close() })
	const resource = "accounts/bench"

	plain := serveBench(b, &bank{})
	byHand := serveBench(b, &bank{getBalance: func(ctx context.Context, req *bankpb.GetBalanceRequest) (*bankpb.GetBalanceResponse, error) {
		lease, err := locker.Acquire(ctx, "accounts/"+req.GetAccountId())
		if err != nil {
			return nil, err
		}
		defer lease.Release(context.WithoutCancel(ctx))
		return &bankpb.GetBalanceResponse{}, nil
	}})
	locked := serveBench(b, &bank{}, grpc.ChainUnaryInterceptor(interceptor.UnaryServerInterceptor(locker,
		interceptor.WithMethod(bankpb.Bank_GetBalance_FullMethodName, interceptor.Resource("accounts/{account_id}")))))
	req := &bankpb.GetBalanceRequest{AccountId: "bench"}

	// Warm up connections, the queue's znode and the interceptor's caches.
	for range 20 {
		if _, err := locked.GetBalance(ctx, req); err != nil {
			b.Fatal(err)
		}
		if _, err := plain.GetBalance(ctx, req); err != nil {
			b.Fatal(err)
		}
		if _, err := byHand.GetBalance(ctx, req); err != nil {
			b.Fatal(err)
		}
	}

	// The direct acquire uses a context that can end, as a handler's does
	// (zklock runs each ZooKeeper call on its own goroutine then, so that
	// the caller never waits past its context): the lock's own cost as a
	// server pays it.
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var direct, plainD, lockedD, handD, diff []time.Duration
	runs := [4]func(){
		func() {
			t := time.Now()
			lease, err := locker.Acquire(callCtx, resource)
			if err != nil {
				b.Fatal(err)
			}
			if err := lease.Release(callCtx); err != nil {
				b.Fatal(err)
			}
			direct = append(direct, time.Since(t))
		},
		func() {
			t := time.Now()
			if _, err := plain.GetBalance(ctx, req); err != nil {
				b.Fatal(err)
			}
			plainD = append(plainD, time.Since(t))
		},
		func() {
			t := time.Now()
			if _, err := locked.GetBalance(ctx, req); err != nil {
				b.Fatal(err)
			}
			lockedD = append(lockedD, time.Since(t))
		},
		func() {
			t := time.Now()
			if _, err := byHand.GetBalance(ctx, req); err != nil {
				b.Fatal(err)
			}
			handD = append(handD, time.Since(t))
		},
	}
	i := 0
	for b.Loop() {
		// Rotate the order, so that no kind always follows the same one.
		for k := range runs {
			runs[(i+k)%len(runs)]()
		}
		i++
		n := len(direct) - 1
		diff = append(diff, lockedD[n]-plainD[n]-direct[n])
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	pd, pp, pl := median(direct), median(plainD), median(lockedD)
	b.ReportMetric(us(pd), "p50-direct-µs")
	b.ReportMetric(us(pp), "p50-plain-µs")
	b.ReportMetric(us(pl), "p50-locked-µs")
	b.ReportMetric(us(pl-pp-pd), "overhead-µs")
	b.ReportMetric(us(median(diff)), "p50-overhead-per-iter-µs")
	b.ReportMetric(us(median(handD)), "p50-by-hand-µs")
	b.ReportMetric(us(pl-median(handD)), "over-by-hand-µs")
	b.ReportMetric(0, "ns/op") // the three calls' total says nothing on its own
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// reentrantLocker acquires through a lease it already holds, so that every
// acquire re-enters it (counted, no ZooKeeper round trip) and every
// release only counts down: it isolates the CPU cost of the code around
// the lock.
type reentrantLocker struct {
	*zklock.Client
	held context.Context // carries the outer lease
}

func (l reentrantLocker) Acquire(ctx context.Context, r string, opts ...zklock.AcquireOption) (*zklock.Lease, error) {
	return l.Client.Acquire(valuesFrom{ctx, l.held}, r, opts...)
}

// valuesFrom is ctx with the values of v looked up first.
type valuesFrom struct {
	context.Context
	v context.Context
}

func (c valuesFrom) Value(k any) any {
	if x := c.v.Value(k); x != nil {
		return x
	}
	return c.Context.Value(k)
}

// BenchmarkInterceptorCPU measures the unary interceptor's own CPU cost,
// without network or ZooKeeper latency: the interceptor function is called
// directly, as gRPC calls it, over a Locker that re-enters a lease it
// holds. direct is the same acquire and release by hand.
//
//	go test -run '^$' -bench InterceptorCPU -benchmem ./interceptor/
func BenchmarkInterceptorCPU(b *testing.B) {
	root := zktest.UniqueRoot(b)
	client := connect(b, root)
	outer, err := client.Acquire(context.Background(), "accounts/bench")
	if err != nil {
		b.Fatal(err)
	}
	defer outer.Release(context.Background())
	locker := reentrantLocker{client, outer.Context(context.Background())}
	unary := interceptor.UnaryServerInterceptor(locker,
		interceptor.WithMethod(bankpb.Bank_GetBalance_FullMethodName, interceptor.Resource("accounts/{account_id}")))
	info := &grpc.UnaryServerInfo{FullMethod: bankpb.Bank_GetBalance_FullMethodName}
	req := &bankpb.GetBalanceRequest{AccountId: "bench"}
	handler := func(ctx context.Context, req any) (any, error) { return nil, nil }
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			l, err := locker.Acquire(ctx, "accounts/bench")
			if err != nil {
				b.Fatal(err)
			}
			_, _ = handler(l.Context(ctx), req)
			rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := l.Release(rctx); err != nil {
				b.Fatal(err)
			}
			rcancel()
			cancel()
		}
	})
	b.Run("locked", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			if _, err := unary(ctx, req, info, handler); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
	})
}
