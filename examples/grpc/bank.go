package main

import (
	"context"
	"io"
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
	delay   time.Duration
	mu      sync.Mutex
	bal     map[string]int64
	changed chan struct{} // closed (and replaced) by every write
}

func newLedger(delay time.Duration) *ledger {
	return &ledger{delay: delay, bal: map[string]int64{}, changed: make(chan struct{})}
}

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
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// watch returns acct's balance and a channel closed at the next write.
func (l *ledger) watch(acct string) (int64, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.bal[acct]
	return b, ok, l.changed
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

// Watch streams the account's balance: the current one, then every change,
// until the client goes away or the lease is lost (the stream's context is
// the lease's). It runs under "watch/{account_id}" with Try: one watcher
// per account across all replicas (say, the one that sends the account's
// notifications); a second one is refused at once.
func (b *bank) Watch(req *bankpb.WatchRequest, stream grpc.ServerStreamingServer[bankpb.WatchEvent]) error {
	ctx := stream.Context()
	last := int64(-1)
	for {
		bal, ok, changed := b.l.watch(req.GetAccountId())
		if !ok {
			return status.Error(codes.NotFound, "no such account")
		}
		if bal != last {
			if err := stream.Send(&bankpb.WatchEvent{AccountId: req.GetAccountId(), Balance: bal}); err != nil {
				return err
			}
			last = bal
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}

// Deposit adds a stream of amounts to one account. It runs under
// "accounts/{account_id}" of its first message, the lock Transfer takes:
// the whole stream is one critical section, so each read-add-write of the
// ledger cannot interleave with a transfer on that account. Every message
// must name the first one's account.
func (b *bank) Deposit(stream grpc.ClientStreamingServer[bankpb.DepositRequest, bankpb.DepositResponse]) error {
	ctx := stream.Context()
	var resp bankpb.DepositResponse
	acct := ""
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			if acct == "" {
				return status.Error(codes.InvalidArgument, "no deposit")
			}
			resp.Balance, _ = b.l.get(acct)
			return stream.SendAndClose(&resp)
		}
		if err != nil {
			return err
		}
		switch {
		case acct == "":
			acct = req.GetAccountId()
		case req.GetAccountId() != acct:
			return status.Errorf(codes.InvalidArgument, "a deposit stream is for one account: %q, not %q", acct, req.GetAccountId())
		}
		if req.GetAmount() <= 0 {
			return status.Error(codes.InvalidArgument, "amount must be positive")
		}
		bal, ok := b.l.get(acct)
		if !ok {
			return status.Error(codes.NotFound, "no such account")
		}
		select { // the racy part, as in Transfer
		case <-time.After(b.l.delay):
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
		b.l.set(acct, bal+req.GetAmount())
		resp.Deposits++
	}
}

// lockOptions says which methods run under which locks.
func lockOptions() []interceptor.Option {
	return []interceptor.Option{
		interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
			interceptor.Resource("accounts/{transfer.from}", "accounts/{transfer.to}")),
		interceptor.WithMethod(bankpb.Bank_GetBalance_FullMethodName,
			interceptor.Resource("accounts/{account_id}"), interceptor.ReadLock()),
		interceptor.WithMethod(bankpb.Bank_Watch_FullMethodName,
			interceptor.Resource("watch/{account_id}"), interceptor.FromFirstMessage(), interceptor.Try()),
		interceptor.WithMethod(bankpb.Bank_Deposit_FullMethodName,
			interceptor.Resource("accounts/{account_id}"), interceptor.FromFirstMessage()),
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
