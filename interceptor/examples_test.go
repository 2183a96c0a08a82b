package interceptor_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/zklock"
)

// exampleBank answers transfers with the fencing token of the lock they ran
// under.
type exampleBank struct{ bankpb.UnimplementedBankServer }

func (exampleBank) Transfer(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
	return &bankpb.TransferResponse{FencingToken: zklock.LeaseFromContext(ctx).Token()}, nil
}

// A Transfer locks both accounts it touches; Try refuses it at once with
// ResourceExhausted when one of them is busy.
func Example() {
	ctx := context.Background()
	locker, err := zklock.Connect(ctx, zkServers(), zklock.WithRoot("/examples/interceptor"))
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()

	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(
		interceptor.UnaryServerInterceptor(locker,
			interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
				interceptor.Resource("accounts/{transfer.from}", "accounts/{transfer.to}"),
				interceptor.Try()),
		)))
	bankpb.RegisterBankServer(srv, exampleBank{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()

	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	client := bankpb.NewBankClient(cc)
	req := &bankpb.TransferRequest{AccountId: "a", Transfer: &bankpb.Transfer{From: "a", To: "b", Amount: 5}}

	var trailer metadata.MD
	resp, err := client.Transfer(ctx, req, grpc.Trailer(&trailer))
	_, hasWait := interceptor.WaitFromTrailer(trailer)
	fmt.Println("transfer:", status.Code(err), "fenced:", resp.GetFencingToken() > 0, "wait trailer:", hasWait)

	// Someone else holds account b.
	lease, err := locker.Acquire(ctx, "accounts/b")
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Transfer(ctx, req)
	fmt.Println("while b is held:", status.Code(err))
	lease.Release(ctx)

	// Output:
	// transfer: OK fenced: true wait trailer: true
	// while b is held: ResourceExhausted
}

func ExampleWaitFromTrailer() {
	// What a client receives with grpc.Trailer(&trailer) after a locked call.
	trailer := metadata.Pairs(interceptor.WaitTrailerKey, "12.5")
	wait, ok := interceptor.WaitFromTrailer(trailer)
	fmt.Println(wait, ok)
	// Output: 12.5ms true
}

func ExampleWithMatcher() {
	locker, err := zklock.Connect(context.Background(), zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()

	// Lock every method of bank.v1.Bank under its own name, refusing calls
	// that would wait more than a second; Transfer locks its account.
	opts := []interceptor.Option{
		interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
			interceptor.Resource("accounts/{transfer.from}")),
		interceptor.WithMatcher(interceptor.MatchService("bank.v1.Bank"),
			interceptor.MaxWait(time.Second)),
	}
	_ = grpc.NewServer(
		grpc.ChainUnaryInterceptor(interceptor.UnaryServerInterceptor(locker, opts...)),
		grpc.ChainStreamInterceptor(interceptor.StreamServerInterceptor(locker, opts...)),
	)
	fmt.Println(interceptor.MatchService("bank.v1.Bank").Match(bankpb.Bank_GetBalance_FullMethodName))
	// Output: true
}
