package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/zklock"
)

// span is one handler run, as seen from inside the lock.
type span struct {
	start, end time.Time
	token      int64
}

type spans struct {
	mu  sync.Mutex
	all []span
}

func (s *spans) add(sp span) {
	s.mu.Lock()
	s.all = append(s.all, sp)
	s.mu.Unlock()
}

// maxOverlap returns the largest number of spans running at one instant.
func (s *spans) maxOverlap() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	type edge struct {
		at    time.Time
		delta int
	}
	var es []edge
	for _, sp := range s.all {
		es = append(es, edge{sp.start, +1}, edge{sp.end, -1})
	}
	slices.SortFunc(es, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta // an end before a start at the same instant
	})
	cur, best := 0, 0
	for _, e := range es {
		cur += e.delta
		best = max(best, cur)
	}
	return best
}

func TestIntegration_OneKeyNeverOverlaps(t *testing.T) {
	var inside atomic.Int32
	var overlaps atomic.Int32
	var sp spans
	b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
		start := time.Now()
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		time.Sleep(2 * time.Millisecond)
		inside.Add(-1)
		sp.add(span{start, time.Now(), zklock.LeaseFromContext(ctx).Token()})
		return &bankpb.TransferResponse{}, nil
	}}
	r := newRig(t, 2, b, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
		interceptor.Resource("accounts/{transfer.from}")))

	const calls = 50
	ctx := callCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Go(func() {
			// Different to accounts, one from account: one key.
			_, err := r.client(i).Transfer(ctx, transferReq("acct-1", fmt.Sprint("to-", i)))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Transfer: %v", err)
		}
	}
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d handler runs overlapped on one key", n)
	}
	if len(sp.all) != calls {
		t.Fatalf("%d handler runs; want %d", len(sp.all), calls)
	}
	if m := sp.maxOverlap(); m != 1 {
		t.Fatalf("max concurrent handler runs on one key = %d; want 1", m)
	}
	// Serialized runs see strictly increasing fencing tokens.
	slices.SortFunc(sp.all, func(a, b span) int { return a.start.Compare(b.start) })
	for i := 1; i < len(sp.all); i++ {
		if sp.all[i].token <= sp.all[i-1].token {
			t.Fatalf("fencing token went from %d to %d", sp.all[i-1].token, sp.all[i].token)
		}
	}
}

func TestIntegration_ManyKeysOverlap(t *testing.T) {
	var sp spans
	var inside atomic.Int32
	var overlapped atomic.Bool
	giveUp := time.Now().Add(long / 4)
	b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
		start := time.Now()
		// Until two calls have been inside at once, stay until another
		// one comes (or give up, so that a broken interceptor fails the
		// test instead of hanging it).
		if inside.Add(1) >= 2 {
			overlapped.Store(true)
		}
		for !overlapped.Load() && inside.Load() < 2 && time.Now().Before(giveUp) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(10 * time.Millisecond)
		inside.Add(-1)
		sp.add(span{start, time.Now(), 0})
		return &bankpb.TransferResponse{}, nil
	}}
	r := newRig(t, 2, b, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
		interceptor.Resource("accounts/{transfer.from}")))

	const calls = 50
	ctx := callCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	start := time.Now()
	for i := range calls {
		wg.Go(func() {
			_, err := r.client(i).Transfer(ctx, transferReq(fmt.Sprint("acct-", i), "x"))
			errs <- err
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Transfer: %v", err)
		}
	}
	m := sp.maxOverlap()
	t.Logf("50 keys: at most %d handler runs at once; %v for all 50 calls", m, elapsed)
	if m < 2 {
		t.Fatalf("calls for 50 distinct keys never overlapped")
	}
}

func TestIntegration_Trailer(t *testing.T) {
	r := newRig(t, 1, &bank{}, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName))
	var tr metadata.MD
	if _, err := r.client(0).Transfer(callCtx(t), transferReq("a", "b"), grpc.Trailer(&tr)); err != nil {
		t.Fatal(err)
	}
	if w, ok := interceptor.WaitFromTrailer(tr); !ok || w < 0 {
		t.Errorf("locked call: wait trailer = %v, %v (%v)", w, ok, tr)
	}
	tr = nil
	if _, err := r.client(0).GetBalance(callCtx(t), &bankpb.GetBalanceRequest{AccountId: "a"}, grpc.Trailer(&tr)); err != nil {
		t.Fatal(err)
	}
	if _, ok := interceptor.WaitFromTrailer(tr); ok {
		t.Errorf("a method that is not selected got a wait trailer: %v", tr)
	}
}

func TestIntegration_DefaultLocksEveryMethodByName(t *testing.T) {
	held := make(chan struct{})
	proceed := make(chan struct{})
	b := &bank{getBalance: func(ctx context.Context, req *bankpb.GetBalanceRequest) (*bankpb.GetBalanceResponse, error) {
		close(held)
		<-proceed
		return &bankpb.GetBalanceResponse{}, nil
	}}
	r := newRig(t, 1, b) // no selection: every method, by full name
	errc := make(chan error, 1)
	go func() {
		_, err := r.client(0).GetBalance(callCtx(t), &bankpb.GetBalanceRequest{AccountId: "a"})
		errc <- err
	}()
	<-held
	if r.free(t, strings.TrimPrefix(bankpb.Bank_GetBalance_FullMethodName, "/")) {
		t.Error("GetBalance runs without the lock named after it")
	}
	if !r.free(t, strings.TrimPrefix(bankpb.Bank_Transfer_FullMethodName, "/")) {
		t.Error("Transfer's lock is taken by a GetBalance call")
	}
	close(proceed)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !r.free(t, strings.TrimPrefix(bankpb.Bank_GetBalance_FullMethodName, "/")) {
		t.Error("GetBalance's lock outlived the call")
	}
}

func TestIntegration_ReadWrite(t *testing.T) {
	var readers atomic.Int32
	both := make(chan struct{})
	proceed := make(chan struct{})
	b := &bank{getBalance: func(ctx context.Context, req *bankpb.GetBalanceRequest) (*bankpb.GetBalanceResponse, error) {
		if readers.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both: // both readers are inside at once
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		<-proceed
		return &bankpb.GetBalanceResponse{}, nil
	}}
	r := newRig(t, 2, b,
		interceptor.WithMethod(bankpb.Bank_GetBalance_FullMethodName, interceptor.Resource("accounts/{account_id}"), interceptor.ReadLock()),
		interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName, interceptor.Resource("accounts/{transfer.from}"), interceptor.WriteLock(), interceptor.Try()),
	)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range 2 {
		wg.Go(func() {
			_, err := r.client(i).GetBalance(callCtx(t), &bankpb.GetBalanceRequest{AccountId: "a"})
			errs <- err
		})
	}
	select {
	case <-both:
	case <-time.After(long):
		t.Fatal("two readers never held the read lock together")
	}
	_, err := r.client(0).Transfer(callCtx(t), transferReq("a", "b"))
	wantCode(t, err, codes.ResourceExhausted)
	close(proceed)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.client(1).Transfer(callCtx(t), transferReq("a", "b")); err != nil {
		t.Fatalf("writer after the readers left: %v", err)
	}
}

func TestIntegration_MultiResource(t *testing.T) {
	inside := make(chan struct{})
	proceed := make(chan struct{})
	b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
		if req.GetTransfer().GetFrom() == req.GetTransfer().GetTo() {
			return &bankpb.TransferResponse{}, nil
		}
		inside <- struct{}{}
		<-proceed
		return &bankpb.TransferResponse{}, nil
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
		interceptor.Resource("accounts/{transfer.from}", "accounts/{transfer.to}")))
	errc := make(chan error, 1)
	go func() {
		_, err := r.client(0).Transfer(callCtx(t), transferReq("a", "b"))
		errc <- err
	}()
	<-inside
	if r.free(t, "accounts/a") || r.free(t, "accounts/b") {
		t.Error("a transfer a→b does not hold both accounts")
	}
	if !r.free(t, "accounts/c") {
		t.Error("an unrelated account is locked")
	}
	close(proceed)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	// A self-transfer names one account twice: it is locked once.
	if _, err := r.client(0).Transfer(callCtx(t), transferReq("c", "c")); err != nil {
		t.Fatalf("self-transfer: %v", err)
	}
}

func TestIntegration_ReleasedOnPanic(t *testing.T) {
	b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
		panic("handler bug")
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName, interceptor.Resource("accounts/{transfer.from}")))
	_, err := r.client(0).Transfer(callCtx(t), transferReq("a", "b"))
	wantCode(t, err, codes.Internal) // from the recovery interceptor outside ours
	if !r.free(t, "accounts/a") {
		t.Fatal("the lock is still held after the handler panicked")
	}
	if left := lockNodes(t, r.admin.Conn(), r.root); len(left) != 0 {
		t.Fatalf("lock nodes left after a panic: %v", left)
	}
}

func TestIntegration_Reentrant(t *testing.T) {
	var r *rig
	type result struct {
		samePath  bool
		nestedErr error
		otherErr  error
		stillHeld bool
	}
	res := make(chan result, 1)
	b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
		var out result
		locker := r.servers[0].locker
		outer := zklock.LeaseFromContext(ctx)
		// Same resource, same Locker, under the handler's context: re-enters.
		nested, err := locker.Acquire(ctx, "accounts/"+req.GetTransfer().GetFrom())
		out.nestedErr = err
		if err == nil {
			out.samePath = nested.Path() == outer.Path()
			_ = nested.Release(ctx)
			out.stillHeld = outer.Err() == nil
		}
		// Without the context, the same Locker is just another caller.
		_, out.otherErr = locker.TryAcquire(context.Background(), "accounts/"+req.GetTransfer().GetFrom())
		res <- out
		return &bankpb.TransferResponse{}, nil
	}}
	r = newRig(t, 1, b, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName, interceptor.Resource("accounts/{transfer.from}")))
	if _, err := r.client(0).Transfer(callCtx(t), transferReq("a", "b")); err != nil {
		t.Fatal(err)
	}
	out := <-res
	if out.nestedErr != nil || !out.samePath || !out.stillHeld {
		t.Errorf("nested acquire under the handler's context: err=%v samePath=%v outerStillHeld=%v", out.nestedErr, out.samePath, out.stillHeld)
	}
	if !errors.Is(out.otherErr, zklock.ErrLocked) {
		t.Errorf("acquire without the handler's context = %v; want ErrLocked", out.otherErr)
	}
}

func TestIntegration_Matcher(t *testing.T) {
	r := newRig(t, 1, &bank{},
		interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName, interceptor.Resource("exact")),
		interceptor.WithMatcher(interceptor.MatchService("bank.v1.Bank"), interceptor.Try()),
	)
	r.hold(t, strings.TrimPrefix(bankpb.Bank_GetBalance_FullMethodName, "/"))
	_, err := r.client(0).GetBalance(callCtx(t), &bankpb.GetBalanceRequest{AccountId: "a"})
	wantCode(t, err, codes.ResourceExhausted) // matched: Try, default resource
	r.hold(t, "exact")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = r.client(0).Transfer(ctx, transferReq("a", "b"))
	wantCode(t, err, codes.DeadlineExceeded) // WithMethod wins: no Try
}

func TestIntegration_ResourceFrom(t *testing.T) {
	fn := func(ctx context.Context, fullMethod string, req any) (string, error) {
		tr := req.(*bankpb.TransferRequest)
		if tr.GetTransfer().GetAmount() < 0 {
			return "", errors.New("negative amount")
		}
		return strings.TrimPrefix(fullMethod, "/") + "/" + tr.GetAccountId(), nil
	}
	seen := make(chan string, 1)
	b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
		seen <- zklock.LeaseFromContext(ctx).Resource()
		return &bankpb.TransferResponse{}, nil
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName, interceptor.ResourceFrom(fn)))
	if _, err := r.client(0).Transfer(callCtx(t), transferReq("a", "b")); err != nil {
		t.Fatal(err)
	}
	if got, want := <-seen, strings.TrimPrefix(bankpb.Bank_Transfer_FullMethodName, "/")+"/a"; got != want {
		t.Errorf("resource = %q; want %q", got, want)
	}
	req := transferReq("a", "b")
	req.Transfer.Amount = -1
	_, err := r.client(0).Transfer(callCtx(t), req)
	wantCode(t, err, codes.InvalidArgument)
}
