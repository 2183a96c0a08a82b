package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Every test talks to one real ZooKeeper server started here, and to real
// gRPC servers and clients on 127.0.0.1. Tests isolate themselves by root
// (zktest.UniqueRoot).
func TestMain(m *testing.M) { zktest.Main(m) }

// zkServers is the ZooKeeper the examples use.
func zkServers() []string { return []string{zktest.Shared().Addr()} }

// long bounds every wait in the tests; the machine is shared and slow at
// times, so it is generous, and no test asserts an upper bound on time.
const long = 60 * time.Second

// bank is a configurable bankpb.BankServer.
type bank struct {
	bankpb.UnimplementedBankServer
	transfer   func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error)
	getBalance func(ctx context.Context, req *bankpb.GetBalanceRequest) (*bankpb.GetBalanceResponse, error)
	watch      func(req *bankpb.WatchRequest, s grpc.ServerStreamingServer[bankpb.WatchEvent]) error
	deposit    func(s grpc.ClientStreamingServer[bankpb.DepositRequest, bankpb.DepositResponse]) error
}

func (b *bank) Transfer(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
	if b.transfer == nil {
		return &bankpb.TransferResponse{}, nil
	}
	return b.transfer(ctx, req)
}

func (b *bank) GetBalance(ctx context.Context, req *bankpb.GetBalanceRequest) (*bankpb.GetBalanceResponse, error) {
	if b.getBalance == nil {
		return &bankpb.GetBalanceResponse{AccountId: req.GetAccountId()}, nil
	}
	return b.getBalance(ctx, req)
}

func (b *bank) Watch(req *bankpb.WatchRequest, s grpc.ServerStreamingServer[bankpb.WatchEvent]) error {
	if b.watch == nil {
		return s.Send(&bankpb.WatchEvent{AccountId: req.GetAccountId()})
	}
	return b.watch(req, s)
}

func (b *bank) Deposit(s grpc.ClientStreamingServer[bankpb.DepositRequest, bankpb.DepositResponse]) error {
	if b.deposit == nil {
		return s.SendAndClose(&bankpb.DepositResponse{})
	}
	return b.deposit(s)
}

// codeLog records, on the server side, the status of every call as the
// outermost interceptor sees it, and turns handler panics into Internal.
type codeLog struct {
	mu    sync.Mutex
	calls []loggedCall
}

type loggedCall struct {
	method string
	code   codes.Code
}

func (l *codeLog) add(method string, err error) {
	l.mu.Lock()
	l.calls = append(l.calls, loggedCall{method, status.Code(err)})
	l.mu.Unlock()
}

func (l *codeLog) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, status.Errorf(codes.Internal, "panic: %v", r)
		}
		l.add(info.FullMethod, err)
	}()
	return handler(ctx, req)
}

func (l *codeLog) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = status.Errorf(codes.Internal, "panic: %v", r)
		}
		l.add(info.FullMethod, err)
	}()
	return handler(srv, ss)
}

// waitCode waits until the server logged a call of method with code.
func (l *codeLog) waitCode(t *testing.T, method string, code codes.Code) {
	t.Helper()
	defer func() {
		if t.Failed() {
			l.mu.Lock()
			t.Logf("server-side log: %v", l.calls)
			l.mu.Unlock()
		}
	}()
	waitFor(t, fmt.Sprintf("server-side status %v for %s", code, method), func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, c := range l.calls {
			if c.method == method && c.code == code {
				return true
			}
		}
		return false
	})
}

// server is one gRPC server with the interceptors over its own zklock
// Client, and a gRPC client connected to it.
type server struct {
	locker *zklock.Client
	log    *codeLog
	srv    *grpc.Server
	addr   string
	cc     *grpc.ClientConn
	client bankpb.BankClient
}

// startServer serves b on 127.0.0.1 with the interceptors over locker.
func startServer(t testing.TB, locker *zklock.Client, b *bank, opts ...interceptor.Option) *server {
	t.Helper()
	s := &server{locker: locker, log: &codeLog{}}
	s.srv = grpc.NewServer(
		grpc.ChainUnaryInterceptor(s.log.unary, interceptor.UnaryServerInterceptor(locker, opts...)),
		grpc.ChainStreamInterceptor(s.log.stream, interceptor.StreamServerInterceptor(locker, opts...)),
	)
	bankpb.RegisterBankServer(s.srv, b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.srv.Serve(ln) }()
	s.addr = ln.Addr().String()
	s.cc, s.client = dial(t, s.addr)
	t.Cleanup(s.srv.Stop)
	return s
}

// dial connects a gRPC client to addr.
func dial(t testing.TB, addr string) (*grpc.ClientConn, bankpb.BankClient) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc, bankpb.NewBankClient(cc)
}

// connect opens a zklock Client on the shared server under root.
func connect(t testing.TB, root string, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	c, err := zklock.Connect(ctx, zkServers(), append([]zklock.Option{zklock.WithRoot(root)}, opts...)...)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rig is n gRPC servers, each with its own zklock Client (as n processes
// would have), sharing one root, plus an admin Client for direct acquires
// and for walking the znode tree.
type rig struct {
	root    string
	admin   *zklock.Client
	servers []*server
}

func newRig(t *testing.T, n int, b *bank, opts ...interceptor.Option) *rig {
	t.Helper()
	r := &rig{root: zktest.UniqueRoot(t)}
	r.admin = connect(t, r.root)
	for range n {
		r.servers = append(r.servers, startServer(t, connect(t, r.root), b, opts...))
	}
	// Registered after the servers' cleanups, so it runs before them.
	t.Cleanup(func() { checkNoLockNodes(t, r.admin.Conn(), r.root) })
	return r
}

func (r *rig) client(i int) bankpb.BankClient { return r.servers[i%len(r.servers)].client }

// hold takes resource through the admin Client and releases it at cleanup.
func (r *rig) hold(t *testing.T, resource string, opts ...zklock.AcquireOption) *zklock.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	l, err := r.admin.Acquire(ctx, resource, opts...)
	if err != nil {
		t.Fatalf("hold %q: %v", resource, err)
	}
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	return l
}

// free reports whether resource can be taken at once by the admin Client.
func (r *rig) free(t *testing.T, resource string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	l, err := r.admin.TryAcquire(ctx, resource)
	switch {
	case err == nil:
		if err := l.Release(ctx); err != nil {
			t.Fatalf("release %q: %v", resource, err)
		}
		return true
	case errors.Is(err, zklock.ErrLocked):
		return false
	}
	t.Fatalf("try %q: %v", resource, err)
	return false
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(long)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type znode struct {
	path      string
	ephemeral bool
}

// walk lists every znode under path (path included).
func walk(t testing.TB, conn *zk.Conn, path string) []znode {
	t.Helper()
	_, st, err := conn.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s: %v", path, err)
	}
	nodes := []znode{{path, st.EphemeralOwner != 0}}
	kids, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nodes
	}
	if err != nil {
		t.Fatalf("children %s: %v", path, err)
	}
	for _, k := range kids {
		p := strings.TrimSuffix(path, "/") + "/" + k
		nodes = append(nodes, walk(t, conn, p)...)
	}
	return nodes
}

// lockNodes returns the ephemeral (lock) nodes under root.
func lockNodes(t testing.TB, conn *zk.Conn, root string) []string {
	var ps []string
	for _, n := range walk(t, conn, root) {
		if n.ephemeral {
			ps = append(ps, n.path)
		}
	}
	return ps
}

// checkNoLockNodes fails unless every lock node under root is gone (within
// a generous time: a cancelled waiter's node is removed in the background).
func checkNoLockNodes(t testing.TB, conn *zk.Conn, root string) {
	t.Helper()
	deadline := time.Now().Add(long)
	for {
		left := lockNodes(t, conn, root)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("lock nodes left under %s: %v", root, left)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func callCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), long)
	t.Cleanup(cancel)
	return ctx
}

func transferReq(from, to string) *bankpb.TransferRequest {
	return &bankpb.TransferRequest{AccountId: from, Transfer: &bankpb.Transfer{From: from, To: to, Amount: 1}}
}

func wantCode(t testing.TB, err error, want codes.Code) *status.Status {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != want {
		t.Fatalf("status = %v (%v); want %v", st.Code(), err, want)
	}
	if n := strings.Count(st.Message(), "zklock: "); n > 1 {
		t.Errorf("status message %q says \"zklock: \" %d times; want once", st.Message(), n)
	}
	return st
}
