package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// The locked route never overdraws the account: exactly balance/amount
// withdrawals are paid, the rest refused, and the balance adds up. (The
// unlocked route's overdraft depends on timing; it is only reported.)
func TestIntegration_Demo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := config{replicas: 2, requests: 30, balance: 100, amount: 10, delay: 5 * time.Millisecond}
	results, err := run(ctx, zktest.Shared().Addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	report(&out, cfg, results)
	t.Log("\n" + out.String())
	locked := results[1]
	if !locked.consistent() || locked.paid != 10 || locked.refused != 20 || locked.balance != 0 {
		t.Fatalf("locked route: %+v", locked)
	}
	if !strings.Contains(out.String(), "with the lock:    no overdraft") {
		t.Fatalf("report:\n%s", out.String())
	}
	if unlocked := results[0]; unlocked.failed != 0 || unlocked.paid+unlocked.refused != cfg.requests {
		t.Fatalf("unlocked route: %+v", unlocked)
	}
}
