package interceptor_test

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/zklock"
)

var watch = bankpb.Bank_Watch_FullMethodName

func TestIntegration_StreamLeaseEndsWhenServerReturns(t *testing.T) {
	next := make(chan struct{})
	b := &bank{watch: func(req *bankpb.WatchRequest, s grpc.ServerStreamingServer[bankpb.WatchEvent]) error {
		if zklock.LeaseFromContext(s.Context()) == nil {
			return errors.New("handler runs without the lease in its context")
		}
		if err := s.Send(&bankpb.WatchEvent{AccountId: req.GetAccountId(), Balance: 1}); err != nil {
			return err
		}
		<-next
		return s.Send(&bankpb.WatchEvent{AccountId: req.GetAccountId(), Balance: 2})
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(watch,
		interceptor.Resource("watch/{account_id}"), interceptor.FromFirstMessage()))
	var tr metadata.MD
	stream, err := r.client(0).Watch(callCtx(t), &bankpb.WatchRequest{AccountId: "a"}, grpc.Trailer(&tr))
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := stream.Recv(); err != nil || ev.GetBalance() != 1 {
		t.Fatalf("first event = %v, %v", ev, err)
	}
	if r.free(t, "watch/a") {
		t.Fatal("the stream runs without its lock")
	}
	if !r.free(t, "watch/b") {
		t.Fatal("another account's stream lock is taken")
	}
	close(next)
	if ev, err := stream.Recv(); err != nil || ev.GetBalance() != 2 {
		t.Fatalf("second event = %v, %v", ev, err)
	}
	if _, err := stream.Recv(); err != io.EOF {
		t.Fatalf("end of stream = %v; want io.EOF", err)
	}
	// The lease is released before the server sends the stream's status.
	if !r.free(t, "watch/a") {
		t.Fatal("the lock outlived the stream")
	}
	if _, ok := interceptor.WaitFromTrailer(tr); !ok {
		t.Errorf("no wait trailer on the stream: %v", tr)
	}
}

func TestIntegration_StreamLeaseEndsWhenClientCancels(t *testing.T) {
	var cause atomic.Value
	returned := make(chan struct{})
	b := &bank{watch: func(req *bankpb.WatchRequest, s grpc.ServerStreamingServer[bankpb.WatchEvent]) error {
		defer close(returned)
		if err := s.Send(&bankpb.WatchEvent{AccountId: req.GetAccountId()}); err != nil {
			return err
		}
		<-s.Context().Done()
		cause.Store(context.Cause(s.Context()))
		return status.FromContextError(s.Context().Err()).Err()
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(watch,
		interceptor.Resource("watch/{account_id}"), interceptor.FromFirstMessage()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := r.client(0).Watch(ctx, &bankpb.WatchRequest{AccountId: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	if r.free(t, "watch/a") {
		t.Fatal("the stream runs without its lock")
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(long):
		t.Fatal("the handler did not see the client's cancellation")
	}
	if c, _ := cause.Load().(error); !errors.Is(c, context.Canceled) {
		t.Errorf("handler context cause = %v; want context.Canceled", c)
	}
	waitFor(t, "the stream's lock to be released", func() bool { return r.free(t, "watch/a") })
	r.servers[0].log.waitCode(t, watch, codes.Canceled)
}

func TestIntegration_StreamFromMetadata(t *testing.T) {
	held := make(chan string, 1)
	b := &bank{watch: func(req *bankpb.WatchRequest, s grpc.ServerStreamingServer[bankpb.WatchEvent]) error {
		held <- zklock.LeaseFromContext(s.Context()).Resource()
		return nil
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(watch, interceptor.Resource("tenants/{metadata:x-tenant}/watch")))
	ctx := metadata.AppendToOutgoingContext(callCtx(t), "x-tenant", "t1")
	stream, err := r.client(0).Watch(ctx, &bankpb.WatchRequest{AccountId: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != io.EOF {
		t.Fatalf("Recv = %v; want io.EOF", err)
	}
	if got := <-held; got != "tenants/t1/watch" {
		t.Errorf("stream resource = %q", got)
	}

	// No metadata: the client's fault.
	stream, err = r.client(0).Watch(callCtx(t), &bankpb.WatchRequest{AccountId: "a"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	wantCode(t, err, codes.InvalidArgument)
}

func TestIntegration_StreamStatusCodes(t *testing.T) {
	t.Run("Aborted", func(t *testing.T) {
		paths := make(chan string, 1)
		b := &bank{watch: func(req *bankpb.WatchRequest, s grpc.ServerStreamingServer[bankpb.WatchEvent]) error {
			paths <- zklock.LeaseFromContext(s.Context()).Path()
			<-s.Context().Done()
			return nil
		}}
		r := newRig(t, 1, b, interceptor.WithMethod(watch))
		stream, err := r.client(0).Watch(callCtx(t), &bankpb.WatchRequest{AccountId: "a"})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.admin.Conn().Delete(<-paths, -1); err != nil {
			t.Fatal(err)
		}
		_, err = stream.Recv()
		wantCode(t, err, codes.Aborted)
	})

	t.Run("ResourceExhausted", func(t *testing.T) {
		r := newRig(t, 1, &bank{}, interceptor.WithMethod(watch,
			interceptor.Resource("watch/{account_id}"), interceptor.FromFirstMessage(), interceptor.Try()))
		r.hold(t, "watch/a")
		var tr metadata.MD
		stream, err := r.client(0).Watch(callCtx(t), &bankpb.WatchRequest{AccountId: "a"}, grpc.Trailer(&tr))
		if err != nil {
			t.Fatal(err)
		}
		_, err = stream.Recv()
		st := wantCode(t, err, codes.ResourceExhausted)
		wantRetryDelay(t, st, interceptor.DefaultRetryDelay)
		if _, ok := interceptor.WaitFromTrailer(stream.Trailer()); !ok {
			t.Errorf("no wait trailer on a refused stream: %v", stream.Trailer())
		}
	})

	t.Run("InvalidArgument", func(t *testing.T) {
		r := newRig(t, 1, &bank{}, interceptor.WithMethod(watch,
			interceptor.Resource("watch/{account_id}"), interceptor.FromFirstMessage()))
		for _, id := range []string{"", "nul\x00", string(make10K())} {
			stream, err := r.client(0).Watch(callCtx(t), &bankpb.WatchRequest{AccountId: id})
			if err != nil {
				t.Fatal(err)
			}
			_, err = stream.Recv()
			wantCode(t, err, codes.InvalidArgument)
		}
		// A client that closes its side without sending the first message:
		// gRPC's own cardinality check answers (Internal) and the
		// interceptor relays it without taking any lock.
		cs, err := r.servers[0].cc.NewStream(callCtx(t), &bankpb.Bank_ServiceDesc.Streams[0], watch)
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.CloseSend(); err != nil {
			t.Fatal(err)
		}
		err = cs.RecvMsg(&bankpb.WatchEvent{})
		wantCode(t, err, codes.Internal)
	})

	t.Run("Internal", func(t *testing.T) {
		// A field template on a stream without FromFirstMessage, for a
		// matcher's method (WithMethod's is refused at construction).
		r := newRig(t, 1, &bank{}, interceptor.WithMatcher(interceptor.MatchFunc(func(m string) bool { return m == watch }),
			interceptor.Resource("watch/{account_id}")))
		stream, err := r.client(0).Watch(callCtx(t), &bankpb.WatchRequest{AccountId: "a"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = stream.Recv()
		wantCode(t, err, codes.Internal)
	})
}

func TestIntegration_ClientStreamFirstMessage(t *testing.T) {
	deposit := bankpb.Bank_Deposit_FullMethodName
	b := &bank{deposit: func(s grpc.ClientStreamingServer[bankpb.DepositRequest, bankpb.DepositResponse]) error {
		lease := zklock.LeaseFromContext(s.Context())
		if lease == nil || lease.Resource() != "accounts/a" {
			return status.Errorf(codes.FailedPrecondition, "handler runs under %v", lease)
		}
		var resp bankpb.DepositResponse
		for {
			req, err := s.Recv()
			if err == io.EOF {
				return s.SendAndClose(&resp)
			}
			if err != nil {
				return err
			}
			resp.Deposits++
			resp.Balance += req.GetAmount()
		}
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(deposit,
		interceptor.Resource("accounts/{account_id}"), interceptor.FromFirstMessage()))

	stream, err := r.client(0).Deposit(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, amount := range []int64{1, 10, 100} {
		if err := stream.Send(&bankpb.DepositRequest{AccountId: "a", Amount: amount}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		t.Fatal(err)
	}
	// The first message, read by the interceptor, reaches the handler too.
	if resp.GetDeposits() != 3 || resp.GetBalance() != 111 {
		t.Errorf("handler saw %d deposits, sum %d; want 3, 111", resp.GetDeposits(), resp.GetBalance())
	}

	// Closing without a first message: nothing names the resource.
	stream, err = r.client(0).Deposit(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.CloseAndRecv()
	wantCode(t, err, codes.InvalidArgument)
	if !interceptor.NotAcquired(err) {
		t.Errorf("%v: a refusal before the handler, not marked NotAcquired", err)
	}
}
