package zklock_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A Client leaves no goroutine behind once closed, whatever its locks went
// through: held, released, cancelled while waiting, lost, held at Close.
func TestIntegration_NoGoroutineLeak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	root := zktest.UniqueRoot(t)
	ctx := context.Background()
	c, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot(root))
	if err != nil {
		t.Fatal(err)
	}
	other, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot(root))
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	lctx := l.Context(ctx)
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	if _, err := other.Acquire(wctx, "a"); err == nil {
		t.Fatal("acquired a held lock")
	}
	cancel()
	l.Release(ctx)
	<-lctx.Done()
	lost, _ := c.Acquire(ctx, "b")
	other.Conn().Delete(lost.Path(), -1)
	<-lost.Done()
	if _, err := c.Campaign(ctx, "e", nil); err != nil {
		t.Fatal(err)
	}
	obs, _ := other.Observe(ctx, "e")
	<-obs
	if _, err := c.Acquire(ctx, "held-at-close"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	other.Close()
}
