// Package bank is a zklockgen test case: an in-memory account service
// whose methods carry the common directive forms. Its test runs the
// generated wrapper against ZooKeeper.
package bank

//go:generate go tool zklockgen

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Service is satisfied by *Bank, and so by the wrapper.
type Service interface {
	Withdraw(ctx context.Context, id string, amount int64) error
	Transfer(ctx context.Context, t Transfer) error
	Balance(ctx context.Context, id string) (int64, error)
}

// auditor is satisfied through an unexported method.
type auditor interface{ audited() int }

var (
	_ Service = (*Bank)(nil)
	_ auditor = (*Bank)(nil)
)

// Transfer moves Amount from From to To.
type Transfer struct {
	From, To string
	Amount   int64
}

// Bank keeps balances in memory. It counts the calls that find another
// call on the same account running: with the locks, none.
type Bank struct {
	Pause    time.Duration         // slept inside Withdraw and Transfer
	Self     *LockedBank           // for nested calls through the wrapper
	Hook     func(context.Context) // called inside Withdraw, if set
	Overlaps atomic.Int64          // calls that met another on the same account
	Calls    atomic.Int64          // calls of the marked methods

	mu       sync.Mutex
	balances map[string]int64
	running  map[string]int // calls in progress, by account
	audits   int
}

// New returns a bank with the given balances.
func New(balances map[string]int64) *Bank {
	b := &Bank{balances: map[string]int64{}, running: map[string]int{}}
	for id, v := range balances {
		b.balances[id] = v
	}
	return b
}

// ErrInsufficientFunds is returned by an overdraft.
var ErrInsufficientFunds = errors.New("insufficient funds")

// Withdraw takes amount from account id.
//
//zklock:resource=accounts/{id}
func (b *Bank) Withdraw(ctx context.Context, id string, amount int64) error {
	defer b.enter(id)()
	if b.Hook != nil {
		b.Hook(ctx)
	}
	if err := b.pause(ctx); err != nil {
		return err
	}
	return b.add(id, -amount)
}

// Transfer locks both accounts, all or nothing.
//
//zklock:resource=accounts/{t.From} resource=accounts/{t.To} wait=5s
func (b *Bank) Transfer(ctx context.Context, t Transfer) error {
	defer b.enter(t.From)()
	defer b.enter(t.To)()
	if err := b.pause(ctx); err != nil {
		return err
	}
	if err := b.add(t.From, -t.Amount); err != nil {
		return err
	}
	return b.add(t.To, t.Amount)
}

// Balance shares the lock with other readers.
//
//zklock:resource=accounts/{id} mode=read
func (b *Bank) Balance(ctx context.Context, id string) (int64, error) {
	b.Calls.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.balances[id], nil
}

// Audit gives up at once if anyone holds the account.
//
//zklock:resource=accounts/{id} mode=write try
func (b *Bank) Audit(ctx context.Context, id string) (report string, err error) {
	b.Calls.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.audits++
	return id + " audited", nil
}

// Close empties account id through the wrapper (b.Self): a nested call on
// the same resource, which re-enters the lock held by Close.
//
//zklock:resource=accounts/{id}
//zklock:mode=exclusive
func (b *Bank) Close(ctx context.Context, id string) (int64, error) {
	bal, err := b.Self.Balance(ctx, id)
	if err != nil {
		return 0, err
	}
	if err := b.Self.Withdraw(ctx, id, bal); err != nil {
		return 0, err
	}
	return bal, nil
}

// Deposit is not marked: the wrapper promotes it unlocked.
func (b *Bank) Deposit(id string, amount int64) error { return b.add(id, amount) }

func (b *Bank) audited() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.audits
}

// enter counts a call on account id; the returned func ends it.
func (b *Bank) enter(id string) func() {
	b.Calls.Add(1)
	b.mu.Lock()
	b.running[id]++
	if b.running[id] > 1 {
		b.Overlaps.Add(1)
	}
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		b.running[id]--
		b.mu.Unlock()
	}
}

func (b *Bank) add(id string, amount int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.balances[id]+amount < 0 {
		return ErrInsufficientFunds
	}
	b.balances[id] += amount
	return nil
}

func (b *Bank) pause(ctx context.Context) error {
	if b.Pause <= 0 {
		return nil
	}
	t := time.NewTimer(b.Pause)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
