package interceptor_test

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/internal/adaptertest"
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

// BenchmarkOverhead measures the unary server interceptor's overhead over
// a direct lock cycle, with its own ZooKeeper server (see
// adaptertest.Overhead for what it times and reports): a GetBalance call
// to a server whose interceptor locks the account, against the same call
// to a server without it and a direct Acquire and Release; and, for
// reference, "by-hand": the call to a server without the interceptor
// whose handler acquires and releases the lock itself
// ("locked-over-by-hand-p50-µs" is what the interceptor costs over
// writing the lock into the handler).
//
//	go test -run '^$' -bench Overhead -benchtime 2000x -count 5 ./interceptor/
func BenchmarkOverhead(b *testing.B) {
	locker := adaptertest.BenchServer(b)
	ctx := context.Background()
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
	call := func(c bankpb.BankClient) func(b *testing.B) {
		return func(b *testing.B) {
			if _, err := c.GetBalance(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	}
	adaptertest.Overhead(b, locker, "accounts/bench", call(locked), call(plain), adaptertest.Call{Name: "by-hand", Do: call(byHand)})
}

// BenchmarkInterceptorCPU measures the unary interceptor's own CPU cost,
// without network or ZooKeeper latency: the interceptor function is called
// directly, as gRPC calls it, over a Locker that re-enters a lease it
// holds. direct is the same acquire and release by hand.
//
//	go test -run '^$' -bench InterceptorCPU -benchmem ./interceptor/
func BenchmarkInterceptorCPU(b *testing.B) {
	locker := adaptertest.Reentrant(b, connect(b, zktest.UniqueRoot(b)), "accounts/bench")
	unary := interceptor.UnaryServerInterceptor(locker,
		interceptor.WithMethod(bankpb.Bank_GetBalance_FullMethodName, interceptor.Resource("accounts/{account_id}")))
	info := &grpc.UnaryServerInfo{FullMethod: bankpb.Bank_GetBalance_FullMethodName}
	req := &bankpb.GetBalanceRequest{AccountId: "bench"}
	handler := func(ctx context.Context, req any) (any, error) { return nil, nil }
	b.Run("direct", func(b *testing.B) { adaptertest.DirectCPU(b, locker, "accounts/bench") })
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
