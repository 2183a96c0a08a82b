package zklock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// The core's errors say "zklock: " once, also where they wrap another of
// its errors (an acquire failing with ErrLocked, a downgrade blocked, an
// option wrapping a resource error, a connect that gave up), and still
// match their sentinels. Before: `zklock: acquire "x": zklock: resource
// is locked`.
func TestIntegration_ErrorsSayThePrefixOnce(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	other := newClient(t, root)
	mem := zklock.NewMemoryLocker()
	type result struct {
		what string
		err  error
		is   error
	}
	var results []result
	add := func(what string, err, is error) { results = append(results, result{what, err, is}) }

	for _, lk := range []struct {
		name   string
		a, b   zklock.Locker
		queued func() int // the nodes in x's queue
	}{
		{"zookeeper", c, other, func() int {
			q, err := c.Inspect(ctx, "x")
			if err != nil {
				t.Fatal(err)
			}
			return len(q.Nodes)
		}},
		{"memory", mem, mem, func() int { return len(zklock.MemoryQueue(mem, "x")) }},
	} {
		held, err := lk.a.Acquire(ctx, "x", zklock.Write)
		if err != nil {
			t.Fatal(err)
		}
		_, err = lk.b.Acquire(ctx, "x", zklock.Try())
		add(lk.name+": a try on a held lock", err, zklock.ErrLocked)
		_, err = lk.b.Acquire(ctx, "x", zklock.MaxWait(50*time.Millisecond))
		add(lk.name+": a wait that ran out", err, zklock.ErrWaitTimeout)
		// A writer queued behind the held write lease blocks its downgrade.
		wctx, cancel := context.WithCancel(ctx)
		waiting := make(chan struct{})
		go func() {
			defer close(waiting)
			if l, err := lk.b.Acquire(wctx, "x", zklock.Write); err == nil {
				l.Release(ctx)
			}
		}()
		eventually(t, "a writer queued", func() bool { return lk.queued() == 2 })
		_, err = held.Downgrade(ctx)
		add(lk.name+": a blocked downgrade", err, zklock.ErrDowngradeBlocked)
		cancel()
		<-waiting
		held.Release(ctx)
		add(lk.name+": a second release", held.Release(ctx), zklock.ErrReleased)
	}

	_, err := zklock.Connect(ctx, []string{"127.0.0.1:1"}, zklock.WithRoot("/a/"))
	add("a bad root", err, zklock.ErrInvalidResource)
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = zklock.Connect(cctx, []string{"127.0.0.1:1"})
	add("a connect that gave up", err, zklock.ErrUnavailable)

	for _, r := range results {
		switch {
		case r.err == nil:
			t.Errorf("%s: no error", r.what)
		case !errors.Is(r.err, r.is):
			t.Errorf("%s: %v does not match %v", r.what, r.err, r.is)
		case strings.Count(r.err.Error(), "zklock:") != 1 || !strings.HasPrefix(r.err.Error(), "zklock: "):
			t.Errorf("%s: %q; want one \"zklock: \", at the start", r.what, r.err)
		default:
			t.Logf("%s: %v", r.what, r.err)
		}
	}
}
