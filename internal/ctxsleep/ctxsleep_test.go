package ctxsleep_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/ctxsleep"
)

func TestSleep(t *testing.T) {
	start := time.Now()
	if err := ctxsleep.Sleep(context.Background(), 20*time.Millisecond); err != nil || time.Since(start) < 20*time.Millisecond {
		t.Fatalf("Sleep(20ms) = %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	start = time.Now()
	if err := ctxsleep.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep(cancelled) = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a cancelled Sleep returned after %v", d)
	}
	if err := ctxsleep.Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep(ended ctx, 0) = %v", err)
	}
	if err := ctxsleep.Sleep(context.Background(), -time.Second); err != nil {
		t.Fatalf("Sleep(-1s) = %v", err)
	}
}
