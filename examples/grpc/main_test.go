package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// TestRun runs the example end to end against a real ZooKeeper: every
// transfer succeeds, every call reports its lock wait, and no update is
// lost.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cfg := config{replicas: 2, calls: 60, concurrency: 8, accounts: 3, delay: 2 * time.Millisecond}
	res, err := run(ctx, zktest.Shared().Addr(), cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if res.ok != cfg.calls {
		t.Errorf("%d of %d transfers succeeded: %v", res.ok, cfg.calls, res.statuses)
	}
	if !res.consistent() {
		t.Errorf("balances do not add up: got %v, want %v", res.actual, res.expected)
	}
	if got := strings.Count(out.String(), "waited"); got != cfg.calls {
		t.Errorf("%d lines with a wait time; want %d", got, cfg.calls)
	}
	if !strings.HasPrefix(res.secondWatch, "ResourceExhausted") || !res.watched {
		t.Errorf("watch: second watcher %q, final balance seen %v; want ResourceExhausted, true", res.secondWatch, res.watched)
	}
	if res.deposits != cfg.calls/4 {
		t.Errorf("%d Deposit streams succeeded; want %d", res.deposits, cfg.calls/4)
	}
	if len(res.waits) != cfg.calls {
		t.Errorf("%d wait times; want %d", len(res.waits), cfg.calls)
	}
}

// TestStreamsAreLocked: a Deposit stream holds its account's lock from its
// first message to its end (a Transfer on that account waits for it), and
// Watch admits one watcher per account across replicas, the next one once
// the first has gone.
func TestStreamsAreLocked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dsn := zktest.Shared().Addr()
	l := newLedger(0)
	acct := fmt.Sprintf("locked%d-a", time.Now().UnixNano())
	l.open(acct, 100)
	l.open(acct+"x", 100)
	var reps []*replica
	for _, name := range []string{"r1", "r2"} {
		r, err := startReplica(ctx, dsn, l, name)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
		reps = append(reps, r)
	}
	observer, err := zklock.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer observer.Close()
	holders := func(resource string) int {
		q, err := observer.Inspect(ctx, resource)
		if err != nil {
			t.Fatal(err)
		}
		return len(q.Holders())
	}

	stream, err := reps[0].client.Deposit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&bankpb.DepositRequest{AccountId: acct, Amount: 5}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); holders("accounts/"+acct) != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Deposit stream does not hold its account's lock")
		}
	}
	tctx, tcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = reps[1].client.Transfer(tctx, &bankpb.TransferRequest{AccountId: acct,
		Transfer: &bankpb.Transfer{From: acct, To: acct + "x", Amount: 1}})
	tcancel()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Transfer during the Deposit stream: %v; want it to wait (DeadlineExceeded)", err)
	}
	if err := stream.Send(&bankpb.DepositRequest{AccountId: acct, Amount: 7}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.CloseAndRecv()
	if err != nil || resp.GetBalance() != 112 || resp.GetDeposits() != 2 {
		t.Fatalf("Deposit: %v, %v; want balance 112 after 2 deposits", resp, err)
	}
	if _, err := reps[1].client.Transfer(ctx, &bankpb.TransferRequest{AccountId: acct,
		Transfer: &bankpb.Transfer{From: acct, To: acct + "x", Amount: 1}}); err != nil {
		t.Fatalf("Transfer after the Deposit stream: %v", err)
	}

	// A deposit stream names one account.
	mixed, err := reps[0].client.Deposit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = mixed.Send(&bankpb.DepositRequest{AccountId: acct, Amount: 1})
	_ = mixed.Send(&bankpb.DepositRequest{AccountId: acct + "x", Amount: 1})
	if _, err := mixed.CloseAndRecv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a stream with two accounts: %v; want InvalidArgument", err)
	}

	wctx, wcancel := context.WithCancel(ctx)
	w, err := startWatch(wctx, reps, acct)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.second, "ResourceExhausted") {
		t.Errorf("second watcher: %s; want ResourceExhausted", w.second)
	}
	l.set(acct, 500)
	if !w.until(500, 10*time.Second) {
		t.Error("the watcher did not stream the new balance")
	}
	wcancel()
	for deadline := time.Now().Add(30 * time.Second); holders("watch/"+acct) != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the watch lock outlived its stream")
		}
	}
	w2, err := startWatch(ctx, reps[1:], acct) // one replica: its second watcher is itself refused
	if err != nil {
		t.Fatalf("a watcher after the first has gone: %v", err)
	}
	if !strings.HasPrefix(w2.second, "ResourceExhausted") {
		t.Errorf("second watcher on the same replica: %s", w2.second)
	}
}
