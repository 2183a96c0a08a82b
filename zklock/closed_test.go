package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Every call on a closed Client says ErrClosed, its reads as its acquires:
// not ErrUnavailable, as if ZooKeeper were away (a new user's probe found
// Inspect, Resources, Leader, RequestRelease and Fenced saying that, and
// Observe returning a closed channel and no error).
func TestIntegration_ClosedClientSaysErrClosed(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	l, err := c.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	lead := func(context.Context) error { return nil }
	for name, call := range map[string]func() error{
		"Acquire":    func() error { _, err := c.Acquire(ctx, "r"); return err },
		"TryAcquire": func() error { _, err := c.TryAcquire(ctx, "r"); return err },
		"AcquireAll": func() error { _, err := c.AcquireAll(ctx, []string{"a", "b"}); return err },
		"Campaign":   func() error { _, err := c.Campaign(ctx, "e", nil); return err },
		"Lead":       func() error { return c.Lead(ctx, "e", nil, lead) },
		"Inspect":    func() error { _, err := c.Inspect(ctx, "r"); return err },
		"Resources":  func() error { _, err := c.Resources(ctx, ""); return err },
		"Leader":     func() error { _, err := c.Leader(ctx, "e"); return err },
		"Observe":    func() error { _, err := c.Observe(ctx, "e"); return err },
		"RequestRelease": func() error {
			_, err := c.RequestRelease(ctx, "r")
			return err
		},
		"Fenced": func() error { _, err := c.Fenced(ctx, l); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- call() }()
		select {
		case err := <-done:
			if !errors.Is(err, zklock.ErrClosed) {
				t.Errorf("%s on a closed Client = %v; want ErrClosed", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s on a closed Client: no answer in 5 s", name)
		}
	}
}
