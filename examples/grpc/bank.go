package main

import (
	"context"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/zklock"
)

// ledger is the store the replicas share. Each balance read and write is
// atomic, but a transfer (read both, pause, write both) is not: two
// concurrent transfers on one account lose an update unless something
// (the lock) keeps them apart.
type ledger struct {
	delay time.Duration
	mu    sync.Mutex
	bal   map[string]int64
}

func newLedger(delay time.Duration) *ledger { return &ledger{delay: delay, bal: map[string]int64{}} }

func (l *ledger) open(acct string, balance int64) { l.set(acct, balance) }

func (l *ledger) get(acct string) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.bal[acct]
	return b, ok
}

func (l *ledger) set(acct string, b int64) {
	l.mu.Lock()
	l.bal[acct] = b
	l.mu.Unlock()
}

// bank implements bank.v1.Bank over the ledger.
type bank struct {
	bankpb.UnimplementedBankServer
	l *ledger
}

func (b *bank) Transfer(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
	t := req.GetTransfer()
	from, okf := b.l.get(t.GetFrom())
	to, okt := b.l.get(t.GetTo())
	switch {
	case !okf || !okt:
		return nil, status.Error(codes.NotFound, "no such account")
	case t.GetAmount() <= 0:
		return nil, status.Error(codes.InvalidArgument, "amount must be positive")
	case from < t.GetAmount():
		return nil, status.Error(codes.FailedPrecondition, "insufficient funds")
	}
	select { // the racy part: the world may change meanwhile
	case <-time.After(b.l.delay):
	case <-ctx.Done(): // the client went away, or the lease was lost
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if t.GetFrom() == t.GetTo() {
		return &bankpb.TransferResponse{FromBalance: from, ToBalance: to}, nil
	}
	b.l.set(t.GetFrom(), from-t.GetAmount())
	b.l.set(t.GetTo(), to+t.GetAmount())
	return &bankpb.TransferResponse{
		FromBalance:  from - t.GetAmount(),
		ToBalance:    to + t.GetAmount(),
		FencingToken: zklock.LeaseFromContext(ctx).Token(),
	}, nil
}

func (b *bank) GetBalance(ctx context.Context, req *bankpb.GetBalanceRequest) (*bankpb.GetBalanceResponse, error) {
	bal, ok := b.l.get(req.GetAccountId())
	if !ok {
		return nil, status.Error(codes.NotFound, "no such account")
	}
	return &bankpb.GetBalanceResponse{AccountId: req.GetAccountId(), Balance: bal}, nil
}

// lockOptions says which methods run under which locks.
func lockOptions() []interceptor.Option {
	return []interceptor.Option{
		interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
			interceptor.Resource("accounts/{transfer.from}", "accounts/{transfer.to}")),
		interceptor.WithMethod(bankpb.Bank_GetBalance_FullMethodName,
			interceptor.Resource("accounts/{account_id}"), interceptor.ReadLock()),
	}
}

// replica is one instance of the service: its own zklock Client, gRPC
// server on 127.0.0.1 and a client connection to it.
type replica struct {
	name   string
	locker *zklock.Client
	srv    *grpc.Server
	cc     *grpc.ClientConn
	client bankpb.BankClient
}

func startReplica(ctx context.Context, dsn string, l *ledger, name string) (*replica, error) {
	locker, err := zklock.Open(ctx, dsn, zklock.WithLabel(name))
	if err != nil {
		return nil, err
	}
	r := &replica{name: name, locker: locker}
	opts := lockOptions()
	r.srv = grpc.NewServer(
		grpc.ChainUnaryInterceptor(interceptor.UnaryServerInterceptor(locker, opts...)),
		grpc.ChainStreamInterceptor(interceptor.StreamServerInterceptor(locker, opts...)),
	)
	bankpb.RegisterBankServer(r.srv, &bank{l: l})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = locker.Close()
		return nil, err
	}
	go func() { _ = r.srv.Serve(ln) }()
	r.cc, err = grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		r.close()
		return nil, err
	}
	r.client = bankpb.NewBankClient(r.cc)
	return r, nil
}

func (r *replica) close() {
	if r.cc != nil {
		_ = r.cc.Close()
	}
	r.srv.GracefulStop()
	_ = r.locker.Close()
}
