package bank

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// The interfaces *Bank satisfies, the wrapper satisfies, as a pointer and
// as a value.
var (
	_ Service = (*LockedBank)(nil)
	_ Service = LockedBank{}
	_ auditor = (*LockedBank)(nil)
	_ auditor = LockedBank{}
)

// connect opens a Client on the ZooKeeper given by the test that runs this
// package (ZKLOCK_SERVERS, ZKGEN_ROOT), with a root of the test's own.
func connect(t *testing.T) *zklock.Client {
	t.Helper()
	addr, root := os.Getenv("ZKLOCK_SERVERS"), os.Getenv("ZKGEN_ROOT")
	if addr == "" || root == "" {
		t.Fatal("ZKLOCK_SERVERS and ZKGEN_ROOT must be set: this package is tested by codegen's TestIntegration_GeneratedCode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{addr}, zklock.WithRoot(root+"/"+t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Two wrappers over two Clients (two ZooKeeper sessions) of one Bank call
// Withdraw on the same account at once: the calls never overlap.
func TestTwoClientsNeverOverlap(t *testing.T) {
	c1, c2 := connect(t), connect(t)
	b := New(map[string]int64{"acct": 1000})
	b.Pause = time.Millisecond
	const goroutines, calls = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, 2*goroutines*calls)
	for _, w := range []*LockedBank{NewLockedBank(b, c1), NewLockedBank(b, c2)} {
		for range goroutines {
			wg.Go(func() {
				for range calls {
					if err := w.Withdraw(ctx(t), "acct", 1); err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Withdraw: %v", err)
	}
	if n := b.Overlaps.Load(); n != 0 {
		t.Errorf("%d calls overlapped", n)
	}
	if got, _ := b.Balance(ctx(t), "acct"); got != 1000-2*goroutines*calls {
		t.Errorf("balance = %d, want %d", got, 1000-2*goroutines*calls)
	}
}

// The overlap count works: two unlocked calls made to meet inside Withdraw
// are counted.
func TestOverlapsAreCounted(t *testing.T) {
	b := New(map[string]int64{"acct": 10})
	var arrived sync.WaitGroup
	arrived.Add(2)
	b.Hook = func(context.Context) {
		arrived.Done()
		arrived.Wait() // both calls are inside Withdraw now
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { _ = b.Withdraw(ctx(t), "acct", 1) })
	}
	wg.Wait()
	if n := b.Overlaps.Load(); n != 1 {
		t.Errorf("Overlaps = %d, want 1", n)
	}
}

// Transfers lock both accounts: concurrent transfers in both directions,
// and withdrawals, never overlap and never deadlock.
func TestTransfersBothWays(t *testing.T) {
	c1, c2 := connect(t), connect(t)
	b := New(map[string]int64{"a": 1000, "b": 1000})
	b.Pause = time.Millisecond
	w1, w2 := NewLockedBank(b, c1), NewLockedBank(b, c2)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 10 {
		wg.Go(func() { errs <- w1.Transfer(ctx(t), Transfer{From: "a", To: "b", Amount: int64(i)}) })
		wg.Go(func() { errs <- w2.Transfer(ctx(t), Transfer{From: "b", To: "a", Amount: int64(i)}) })
		wg.Go(func() { errs <- w2.Withdraw(ctx(t), "a", 1) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("call: %v", err)
		}
	}
	if n := b.Overlaps.Load(); n != 0 {
		t.Errorf("%d calls overlapped", n)
	}
	ga, _ := b.Balance(ctx(t), "a")
	gb, _ := b.Balance(ctx(t), "b")
	if ga != 990 || gb != 1000 {
		t.Errorf("balances a=%d b=%d, want 990 and 1000", ga, gb)
	}
}

// A transfer from an account to itself names one resource twice: it is
// locked once, as by every zklockkit front end, and the method runs.
func TestSameResourceTwice(t *testing.T) {
	b := New(map[string]int64{"s": 5})
	w := NewLockedBank(b, connect(t))
	if err := w.Transfer(ctx(t), Transfer{From: "s", To: "s", Amount: 1}); err != nil {
		t.Errorf("Transfer s→s = %v", err)
	}
	if b.Calls.Load() == 0 {
		t.Error("the method did not run")
	}
	if got, _ := b.Balance(ctx(t), "s"); got != 5 {
		t.Errorf("balance of s = %d, want 5", got)
	}
}

// Close holds accounts/x and calls Balance and Withdraw on accounts/x
// through the wrapper with its lease's context: they re-enter instead of
// deadlocking, and another session cannot take the lock meanwhile.
func TestNestedCallReenters(t *testing.T) {
	c, other := connect(t), connect(t)
	b := New(map[string]int64{"x": 42})
	w := NewLockedBank(b, c)
	b.Self = w
	var busy error
	b.Hook = func(ctx context.Context) {
		if zklock.LeaseFromContext(ctx) == nil {
			busy = errors.New("no lease in the nested call's context")
			return
		}
		_, busy = other.TryAcquire(context.Background(), "accounts/x")
	}
	got, err := w.Close(ctx(t), "x")
	if err != nil || got != 42 {
		t.Fatalf("Close = %d, %v; want 42, nil", got, err)
	}
	if !errors.Is(busy, zklock.ErrLocked) {
		t.Errorf("another session's TryAcquire during the nested call = %v, want ErrLocked", busy)
	}
	if bal, _ := b.Balance(ctx(t), "x"); bal != 0 {
		t.Errorf("balance after Close = %d, want 0", bal)
	}
	// Everything was released: the lock is free.
	l, err := other.TryAcquire(ctx(t), "accounts/x")
	if err != nil {
		t.Fatalf("TryAcquire after Close: %v", err)
	}
	l.Release(ctx(t))
}

// Audit (mode=write try) fails at once while anyone holds the account,
// without calling the method; Balance (mode=read) shares a read lock.
func TestTryAndModes(t *testing.T) {
	c, other := connect(t), connect(t)
	b := New(map[string]int64{"y": 7})
	w := NewLockedBank(b, c)

	read, err := other.Acquire(ctx(t), "accounts/y", zklock.Read)
	if err != nil {
		t.Fatal(err)
	}
	if bal, err := w.Balance(ctx(t), "y"); err != nil || bal != 7 {
		t.Errorf("Balance under another reader = %d, %v; want 7, nil", bal, err)
	}
	calls := b.Calls.Load()
	if _, err := w.Audit(ctx(t), "y"); !errors.Is(err, zklock.ErrLocked) {
		t.Errorf("Audit while read-locked = %v, want ErrLocked", err)
	}
	if b.Calls.Load() != calls {
		t.Error("Audit's method ran although the lock was not acquired")
	}
	if err := read.Release(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if rep, err := w.Audit(ctx(t), "y"); err != nil || rep != "y audited" {
		t.Errorf("Audit = %q, %v", rep, err)
	}
	if b.audited() != 1 {
		t.Errorf("audited() through the wrapper = %d, want 1", w.audited())
	}
}

// A method that succeeds after its lease was lost reports the loss.
func TestLostLeaseIsReported(t *testing.T) {
	c, other := connect(t), connect(t)
	b := New(map[string]int64{"z": 10})
	w := NewLockedBank(b, c)
	b.Hook = func(ctx context.Context) {
		l := zklock.LeaseFromContext(ctx)
		if err := other.Conn().Delete(l.Path(), -1); err != nil {
			t.Errorf("deleting the lease's node: %v", err)
		}
		select {
		case <-ctx.Done(): // the method's context ends with the lease
		case <-time.After(time.Minute):
			t.Error("the method's context did not end when its lease was lost")
		}
	}
	err := w.Withdraw(ctx(t), "z", 1) // b.Pause is 0: Withdraw ignores ctx and succeeds
	if !errors.Is(err, zklock.ErrLeaseLost) {
		t.Errorf("Withdraw after losing its lease = %v, want ErrLeaseLost", err)
	}
}

// An acquire that fails returns its error and skips the method.
func TestAcquireFailureSkipsMethod(t *testing.T) {
	b := New(nil)
	w := NewLockedBank(b, connect(t))
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Withdraw(cctx, "q", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Withdraw with a cancelled context = %v, want context.Canceled", err)
	}
	if b.Calls.Load() != 0 {
		t.Error("the method ran")
	}
}

// Unmarked methods are promoted unlocked.
func TestPromoted(t *testing.T) {
	b := New(nil)
	w := NewLockedBank(b, connect(t))
	if err := w.Deposit("d", 5); err != nil {
		t.Fatal(err)
	}
	if bal, err := w.Balance(ctx(t), "d"); bal != 5 || err != nil {
		t.Errorf("Balance = %d, %v", bal, err)
	}
}
