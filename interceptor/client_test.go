package interceptor_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/zklock"
)

// dialRetrying connects a gRPC client with the retrying client
// interceptors to addr.
func dialRetrying(t testing.TB, addr string, opts ...interceptor.ClientOption) bankpb.BankClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(interceptor.UnaryClientInterceptor(opts...)),
		grpc.WithChainStreamInterceptor(interceptor.StreamClientInterceptor(opts...)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return bankpb.NewBankClient(cc)
}

// retries counts the client's retries, and releases a lease at the first.
type retries struct {
	n     atomic.Int32
	once  sync.Once
	lease *zklock.Lease
}

func (r *retries) onRetry(_ context.Context, _ string, _ int, _ time.Duration, _ error) {
	r.n.Add(1)
	r.once.Do(func() {
		if r.lease != nil {
			go func() {
				time.Sleep(50 * time.Millisecond)
				_ = r.lease.Release(context.Background())
			}()
		}
	})
}

// A busy unary call is retried after the server's RetryInfo delay until
// the lock is free; the handler runs once.
func TestIntegration_ClientRetriesBusyCall(t *testing.T) {
	var ran atomic.Int32
	var carried atomic.Value
	b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
		ran.Add(1)
		md, _ := metadata.FromIncomingContext(ctx)
		carried.Store(md.Get("x-carried"))
		return &bankpb.TransferResponse{}, nil
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
		interceptor.Resource("accounts/{transfer.from}"), interceptor.Try(), interceptor.RetryDelay(20*time.Millisecond)))
	rt := &retries{lease: r.hold(t, "accounts/a")}
	// Each attempt carries what WithAttemptContext adds (a fencing token,
	// say), retries included.
	client := dialRetrying(t, r.servers[0].addr, interceptor.WithOnRetry(rt.onRetry),
		interceptor.WithAttemptContext(func(ctx context.Context) context.Context {
			return metadata.AppendToOutgoingContext(ctx, "x-carried", "42")
		}))
	if _, err := client.Transfer(callCtx(t), transferReq("a", "b")); err != nil {
		t.Fatalf("Transfer: %v", err)
	}
	if got, _ := carried.Load().([]string); len(got) != 1 || got[0] != "42" {
		t.Errorf("the retried call carried %q; want the attempt context's metadata once", got)
	}
	if rt.n.Load() < 1 || ran.Load() != 1 {
		t.Fatalf("%d retries, handler ran %d times; want at least 1 retry and 1 run", rt.n.Load(), ran.Load())
	}
}

// A ResourceExhausted status sent by the handler itself (its own rate
// limit, say) is not retried: the handler ran, and may have had effects.
func TestIntegration_ClientDoesNotRetryHandlerStatus(t *testing.T) {
	var ran atomic.Int32
	b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
		ran.Add(1)
		st, _ := status.New(codes.ResourceExhausted, "quota").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Millisecond)})
		return nil, st.Err()
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName, interceptor.Resource("accounts/{transfer.from}")))
	var rt retries
	client := dialRetrying(t, r.servers[0].addr, interceptor.WithOnRetry(rt.onRetry))
	_, err := client.Transfer(callCtx(t), transferReq("a", "b"))
	if status.Code(err) != codes.ResourceExhausted || interceptor.NotAcquired(err) {
		t.Fatalf("Transfer = %v; want the handler's ResourceExhausted, not marked as not acquired", err)
	}
	if ran.Load() != 1 || rt.n.Load() != 0 {
		t.Fatalf("handler ran %d times, %d retries; want 1 and 0", ran.Load(), rt.n.Load())
	}
}

// A retry that could not start before the call's deadline is not made:
// the busy status comes back at once.
func TestIntegration_ClientRetryWithinDeadline(t *testing.T) {
	r := newRig(t, 1, &bank{}, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
		interceptor.Resource("accounts/{transfer.from}"), interceptor.Try(), interceptor.RetryDelay(time.Hour)))
	r.hold(t, "accounts/a")
	var rt retries
	client := dialRetrying(t, r.servers[0].addr, interceptor.WithOnRetry(rt.onRetry), interceptor.WithMaxRetryDelay(2*time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := client.Transfer(ctx, transferReq("a", "b"))
	if status.Code(err) != codes.ResourceExhausted || !interceptor.NotAcquired(err) || rt.n.Load() != 0 {
		t.Fatalf("Transfer = %v after %d retries; want the server's busy status and no retry", err, rt.n.Load())
	}
	if ctx.Err() != nil {
		t.Fatal("the call waited for its deadline")
	}
	// WithMaxRetries(0) turns retries off.
	r2 := newRig(t, 1, &bank{}, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
		interceptor.Resource("accounts/{transfer.from}"), interceptor.Try(), interceptor.RetryDelay(time.Millisecond)))
	r2.hold(t, "accounts/a")
	client = dialRetrying(t, r2.servers[0].addr, interceptor.WithOnRetry(rt.onRetry), interceptor.WithMaxRetries(0))
	if _, err := client.Transfer(callCtx(t), transferReq("a", "b")); status.Code(err) != codes.ResourceExhausted || rt.n.Load() != 0 {
		t.Fatalf("WithMaxRetries(0): %v after %d retries", err, rt.n.Load())
	}
}

// A busy server stream (resource from its first message) is opened again,
// its request sent again, and it then receives its events.
func TestIntegration_ClientRetriesBusyStream(t *testing.T) {
	var ran atomic.Int32
	b := &bank{watch: func(req *bankpb.WatchRequest, s grpc.ServerStreamingServer[bankpb.WatchEvent]) error {
		ran.Add(1)
		return s.Send(&bankpb.WatchEvent{AccountId: req.GetAccountId()})
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(bankpb.Bank_Watch_FullMethodName,
		interceptor.Resource("watch/{account_id}"), interceptor.FromFirstMessage(), interceptor.Try(),
		interceptor.RetryDelay(20*time.Millisecond)))
	rt := &retries{lease: r.hold(t, "watch/a")}
	client := dialRetrying(t, r.servers[0].addr, interceptor.WithOnRetry(rt.onRetry))
	stream, err := client.Watch(callCtx(t), &bankpb.WatchRequest{AccountId: "a"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := stream.Recv()
	if err != nil || ev.GetAccountId() != "a" {
		t.Fatalf("Recv = %v, %v", ev, err)
	}
	if rt.n.Load() < 1 || ran.Load() != 1 {
		t.Fatalf("%d retries, handler ran %d times", rt.n.Load(), ran.Load())
	}
}

// A locked handler that passes on the busy status of a call it made (to a
// locked method of this server, here) has run: the status reaches the
// client without the not-acquired mark, and the call is not retried. So
// for a stream, whose handler passes it on before sending anything.
func TestIntegration_ClientDoesNotRetryPassedOnRefusal(t *testing.T) {
	var ran atomic.Int32
	var inner bankpb.BankClient
	b := &bank{
		transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
			ran.Add(1)
			_, err := inner.GetBalance(ctx, &bankpb.GetBalanceRequest{AccountId: "busy"})
			return nil, err // passed on as it is, as Go code does
		},
		watch: func(req *bankpb.WatchRequest, s grpc.ServerStreamingServer[bankpb.WatchEvent]) error {
			ran.Add(1)
			_, err := inner.GetBalance(s.Context(), &bankpb.GetBalanceRequest{AccountId: "busy"})
			return err
		},
	}
	r := newRig(t, 1, b,
		interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName, interceptor.Resource("accounts/{transfer.from}"), interceptor.Try()),
		interceptor.WithMethod(bankpb.Bank_Watch_FullMethodName, interceptor.Resource("watch/{account_id}"),
			interceptor.FromFirstMessage(), interceptor.Try()),
		interceptor.WithMethod(bankpb.Bank_GetBalance_FullMethodName, interceptor.Resource("balance/{account_id}"),
			interceptor.Try(), interceptor.RetryDelay(time.Millisecond)))
	inner = r.servers[0].client
	r.hold(t, "balance/busy")
	// The inner call's own status is a refusal, marked, naming its method.
	if _, err := inner.GetBalance(callCtx(t), &bankpb.GetBalanceRequest{AccountId: "busy"}); !interceptor.NotAcquired(err) {
		t.Fatalf("GetBalance = %v; want a busy status marked NotAcquired", err)
	}
	var rt retries
	client := dialRetrying(t, r.servers[0].addr, interceptor.WithOnRetry(rt.onRetry))
	_, err := client.Transfer(callCtx(t), transferReq("a", "b"))
	if status.Code(err) != codes.ResourceExhausted || interceptor.NotAcquired(err) {
		t.Fatalf("Transfer = %v; want the passed-on ResourceExhausted, not marked as not acquired", err)
	}
	if ran.Load() != 1 || rt.n.Load() != 0 {
		t.Fatalf("Transfer: handler ran %d times, %d retries; want 1 and 0", ran.Load(), rt.n.Load())
	}
	stream, err := client.Watch(callCtx(t), &bankpb.WatchRequest{AccountId: "a"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	if status.Code(err) != codes.ResourceExhausted || interceptor.NotAcquired(err) {
		t.Fatalf("Watch = %v; want the passed-on ResourceExhausted, not marked as not acquired", err)
	}
	if ran.Load() != 2 || rt.n.Load() != 0 {
		t.Fatalf("Watch: handlers ran %d times in all, %d retries; want 2 and 0", ran.Load(), rt.n.Load())
	}
}

// A handler that no interceptor locks may pass on a refusal of a call it
// made: the status keeps its mark (that call's handler did not run), which
// names the refused method, and the client, which called another, does not
// retry.
func TestIntegration_ClientRetriesOnlyItsMethodsRefusal(t *testing.T) {
	var ran atomic.Int32
	var inner bankpb.BankClient
	b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
		ran.Add(1)
		_, err := inner.GetBalance(ctx, &bankpb.GetBalanceRequest{AccountId: "busy"})
		return nil, err
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(bankpb.Bank_GetBalance_FullMethodName,
		interceptor.Resource("balance/{account_id}"), interceptor.Try(), interceptor.RetryDelay(time.Millisecond)))
	inner = r.servers[0].client
	r.hold(t, "balance/busy")
	var rt retries
	client := dialRetrying(t, r.servers[0].addr, interceptor.WithOnRetry(rt.onRetry))
	_, err := client.Transfer(callCtx(t), transferReq("a", "b"))
	if status.Code(err) != codes.ResourceExhausted || !interceptor.NotAcquired(err) {
		t.Fatalf("Transfer = %v; want GetBalance's busy status, marked", err)
	}
	if ran.Load() != 1 || rt.n.Load() != 0 {
		t.Fatalf("handler ran %d times, %d retries; want 1 and 0", ran.Load(), rt.n.Load())
	}
	// The client does retry the refused method itself.
	rt.lease = nil
	if _, err := dialRetrying(t, r.servers[0].addr, interceptor.WithOnRetry(rt.onRetry), interceptor.WithMaxRetries(2)).
		GetBalance(callCtx(t), &bankpb.GetBalanceRequest{AccountId: "busy"}); status.Code(err) != codes.ResourceExhausted || rt.n.Load() != 2 {
		t.Fatalf("GetBalance = %v after %d retries; want busy after 2 retries", err, rt.n.Load())
	}
}
