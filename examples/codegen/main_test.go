package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zklockkit/zklockkit/internal/zkenv"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// TestMain starts the shared ZooKeeper, unless this test binary was
// started by demo as a worker: then it is one.
func TestMain(m *testing.M) {
	if name := os.Getenv(envWorker); name != "" {
		if err := worker(context.Background(), name, os.Getenv(envDir), os.Getenv(envUnlocked) != "", os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	zktest.Main(m)
}

// servers returns a connection string for the shared server with a root
// of the test's own.
func servers(t *testing.T) string {
	return "zk://" + zktest.Shared().Addr() + zktest.UniqueRoot(t)
}

// noLeaks checks, once the test and its cleanups (closing the Clients)
// are done, that no goroutine it started is left.
func noLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // registered first, runs last
}

func connect(t *testing.T, dsn string) *zklock.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := zklock.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open(%q): %v", dsn, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The demo runs two worker processes against ZooKeeper and finds every
// balance right.
func TestIntegration_DemoTwoProcesses(t *testing.T) {
	noLeaks(t)
	t.Setenv(zkenv.EnvServers, servers(t))
	var out bytes.Buffer
	if err := demo(t.Context(), false, &out); err != nil {
		t.Fatalf("demo: %v\noutput:\n%s", err, out.String())
	}
	t.Logf("demo output:\n%s", out.String())
	for _, want := range []string{"worker A: ", "worker B: ", "no update lost"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}

// Two LockedAccounts over two Clients (two sessions) withdraw from the same
// account at once: with the lock no withdrawal is lost, although each one
// reads, pauses and writes the balance.
func TestIntegration_ConcurrentWithdrawalsAcrossClients(t *testing.T) {
	noLeaks(t)
	dsn := servers(t)
	dir := t.TempDir()
	setup := NewAccounts(dir)
	if err := setup.Create("acct", 100); err != nil {
		t.Fatal(err)
	}
	const perClient, goroutinesPerClient = 10, 3
	var wg sync.WaitGroup
	errs := make(chan error, 2*goroutinesPerClient*perClient)
	for range 2 {
		acc := NewAccounts(dir)
		acc.Pause = time.Millisecond
		svc := NewLockedAccounts(acc, connect(t, dsn))
		for range goroutinesPerClient {
			wg.Go(func() {
				for range perClient {
					if err := svc.Withdraw(t.Context(), "acct", 1); err != nil {
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
	got, err := setup.read("acct")
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(100 - 2*goroutinesPerClient*perClient); got != want {
		t.Errorf("balance = %d, want %d: %d withdrawals were lost", got, want, got-want)
	}
}

// A transfer between accounts locks both; a balance read shares the lock;
// an overdraft is refused and changes nothing.
func TestIntegration_TransferAndBalance(t *testing.T) {
	noLeaks(t)
	svc := NewLockedAccounts(NewAccounts(t.TempDir()), connect(t, servers(t)))
	ctx := t.Context()
	for id, bal := range map[string]int64{"a": 10, "b": 0} {
		if err := svc.Create(id, bal); err != nil { // promoted from *Accounts
			t.Fatal(err)
		}
	}
	if err := svc.Transfer(ctx, Transfer{From: "a", To: "b", Amount: 4}); err != nil {
		t.Fatalf("Transfer: %v", err)
	}
	if err := svc.Transfer(ctx, Transfer{From: "a", To: "b", Amount: 7}); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("overdraft Transfer = %v, want ErrInsufficientFunds", err)
	}
	for id, want := range map[string]int64{"a": 6, "b": 4} {
		got, err := svc.Balance(ctx, id)
		if err != nil || got != want {
			t.Errorf("Balance(%s) = %d, %v; want %d", id, got, err, want)
		}
	}
}

func TestNewLockedAccountsPanicsOnNil(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewLockedAccounts(acc, nil) did not panic")
		}
	}()
	NewLockedAccounts(NewAccounts(t.TempDir()), nil)
}
