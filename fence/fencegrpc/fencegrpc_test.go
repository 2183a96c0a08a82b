package fencegrpc_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	_ "modernc.org/sqlite"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/fence/fencegrpc"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// server guards a SQLite transaction with the token each call carries.
type server struct {
	testpb.UnimplementedTestServiceServer
	db    *sql.DB
	fence *fence.Fence
}

func (s *server) guard(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fencegrpc.Guard(ctx, s.fence, tx); err != nil {
		return err
	}
	return tx.Commit()
}

func code(err error) error {
	switch {
	case errors.Is(err, fence.ErrStaleToken):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, fence.ErrNoToken), errors.Is(err, fence.ErrInvalidToken):
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return err
}

func (s *server) EmptyCall(ctx context.Context, _ *testpb.Empty) (*testpb.Empty, error) {
	return &testpb.Empty{}, code(s.guard(ctx))
}

func (s *server) FullDuplexCall(stream testpb.TestService_FullDuplexCallServer) error {
	if err := s.guard(stream.Context()); err != nil {
		return code(err)
	}
	return stream.Send(&testpb.StreamingOutputCallResponse{})
}

// Across processes over gRPC: calls made under a real lease's context
// through the client interceptors carry its token as metadata, unary and
// streaming; the server guards with it. The older lease's token is
// refused; a call without a lease carries none; a token already in the
// outgoing metadata is kept.
func TestIntegration_CarriesToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "f.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := fence.Install(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	testpb.RegisterTestServiceServer(gs, &server{db: db, fence: f})
	go gs.Serve(ln)
	defer gs.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(fencegrpc.UnaryClientInterceptor()),
		grpc.WithChainStreamInterceptor(fencegrpc.StreamClientInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := testpb.NewTestServiceClient(conn)
	stream := func(ctx context.Context) error {
		s, err := client.FullDuplexCall(ctx)
		if err != nil {
			return err
		}
		_, err = s.Recv()
		return err
	}

	c, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot(zktest.UniqueRoot(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	older, err := c.Acquire(ctx, "jobs/1")
	if err != nil {
		t.Fatal(err)
	}
	must(t, older.Release(ctx))
	l, err := c.Acquire(ctx, "jobs/1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	lctx := l.Context(ctx)
	if _, err := client.EmptyCall(lctx, &testpb.Empty{}); err != nil {
		t.Fatalf("unary under the lease: %v", err)
	}
	if err := stream(lctx); err != nil {
		t.Fatalf("stream under the lease: %v", err)
	}
	var stored int64
	must(t, db.QueryRow("SELECT token FROM zklock_fence WHERE resource = 'jobs/1'").Scan(&stored))
	if stored != l.Token() {
		t.Fatalf("stored %d, want %d", stored, l.Token())
	}
	stale := metadata.AppendToOutgoingContext(lctx, fencegrpc.MetadataKey, fence.NewToken("jobs/1", older.Token()).String())
	if _, err := client.EmptyCall(stale, &testpb.Empty{}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("older token, unary: %v", err)
	}
	if err := stream(stale); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("older token, stream: %v", err)
	}
	if _, err := client.EmptyCall(ctx, &testpb.Empty{}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("no lease: %v", err)
	}
	if err := stream(ctx); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("no lease, stream: %v", err)
	}
}

// FromIncoming reads exactly one well-formed value.
func TestFromIncoming(t *testing.T) {
	in := func(vs ...string) context.Context {
		md := metadata.MD{}
		for _, v := range vs {
			md.Append(fencegrpc.MetadataKey, v)
		}
		return metadata.NewIncomingContext(context.Background(), md)
	}
	if tok, err := fencegrpc.FromIncoming(in("12 a%2Fb")); err != nil || tok != fence.NewToken("a/b", 12) {
		t.Fatalf("%v %v", tok, err)
	}
	for name, ctx := range map[string]context.Context{"none": context.Background(), "empty md": in()} {
		if _, err := fencegrpc.FromIncoming(ctx); !errors.Is(err, fence.ErrNoToken) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, ctx := range []context.Context{in("1 a", "2 a"), in("x"), in("0 a")} {
		if _, err := fencegrpc.FromIncoming(ctx); !errors.Is(err, fence.ErrInvalidToken) {
			t.Fatal(err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
