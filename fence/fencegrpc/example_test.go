package fencegrpc_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/zklockkit/zklockkit/fence/fencegrpc"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// echoToken is a service that reports the token a call carries; a real
// one would guard its transaction with fencegrpc.Guard.
type echoToken struct {
	testpb.UnimplementedTestServiceServer
}

func (echoToken) EmptyCall(ctx context.Context, _ *testpb.Empty) (*testpb.Empty, error) {
	tok, err := fencegrpc.FromIncoming(ctx)
	fmt.Println("server: resource", tok.Resource(), "token > 0:", tok.Token() > 0, "err:", err)
	return &testpb.Empty{}, nil
}

func ExampleUnaryClientInterceptor() {
	ctx := context.Background()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := grpc.NewServer()
	testpb.RegisterTestServiceServer(srv, echoToken{})
	go srv.Serve(ln)
	defer srv.Stop()

	conn, err := grpc.NewClient(ln.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(fencegrpc.UnaryClientInterceptor()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	client := testpb.NewTestServiceClient(conn)

	c, _ := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot("/example/fencegrpc"))
	defer c.Close()
	lease, _ := c.Acquire(ctx, "jobs/nightly")
	defer lease.Release(ctx)

	client.EmptyCall(lease.Context(ctx), &testpb.Empty{}) // under the lock: carries its token
	client.EmptyCall(ctx, &testpb.Empty{})                // not: carries none
	// Output:
	// server: resource jobs/nightly token > 0: true err: <nil>
	// server: resource  token > 0: false err: fence: no fencing token: the call has no zklock-fence-token metadata
}
