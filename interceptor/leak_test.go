package interceptor_test

import (
	"context"
	"io"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
)

// TestIntegration_NoGoroutineLeak runs unary and stream calls, locked,
// refused and cancelled, tears everything down and checks that no
// goroutine is left behind.
func TestIntegration_NoGoroutineLeak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Run("calls", func(t *testing.T) {
		b := &bank{watch: func(req *bankpb.WatchRequest, s grpc.ServerStreamingServer[bankpb.WatchEvent]) error {
			if err := s.Send(&bankpb.WatchEvent{}); err != nil {
				return err
			}
			<-s.Context().Done()
			return nil
		}}
		r := newRig(t, 2, b,
			interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName, interceptor.Resource("accounts/{transfer.from}"), interceptor.Try()),
			interceptor.WithMethod(bankpb.Bank_Watch_FullMethodName, interceptor.Resource("watch/{account_id}"), interceptor.FromFirstMessage()),
		)
		for i := range 4 {
			if _, err := r.client(i).Transfer(callCtx(t), transferReq("a", "b")); err != nil {
				t.Fatal(err)
			}
		}
		r.hold(t, "accounts/busy")
		_, err := r.client(0).Transfer(callCtx(t), transferReq("busy", "b"))
		wantCode(t, err, codes.ResourceExhausted)

		ctx, cancel := context.WithCancel(context.Background())
		stream, err := r.client(1).Watch(ctx, &bankpb.WatchRequest{AccountId: "a"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
		cancel()
		if _, err := stream.Recv(); err == nil || err == io.EOF {
			t.Fatalf("Recv after cancel = %v", err)
		}
		waitFor(t, "the stream's lock to be released", func() bool { return r.free(t, "watch/a") })
	})
}
