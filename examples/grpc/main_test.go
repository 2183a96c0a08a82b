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
	if len(res.waits) != cfg.calls {
		t.Errorf("%d wait times; want %d", len(res.waits), cfg.calls)
	}
}
