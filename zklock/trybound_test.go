package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// tryBound is the try's answer bound for the tests' 4 s session timeout:
// min(session timeout/3, 1 s); tryGrace is room for a loaded machine.
// tryCallerDeadline is how long the caller's context of a try lets it
// wait: twice the bound and its grace, so that a try with no bound of its
// own fails the test when its caller's context ends, instead of hanging
// until go test's timeout.
const (
	tryBound          = time.Second
	tryGrace          = 500 * time.Millisecond
	tryCallerDeadline = 2 * (tryBound + tryGrace)
)

// A try never waits on ZooKeeper past its bound: with the server stopped,
// or cut off silently, it answers ErrUnavailable within min(session
// timeout/3, 1 s), however long its caller's context would let it wait,
// and leaves no node.
func TestIntegration_TryIsBoundedWhileZooKeeperIsAway(t *testing.T) {
	tries := map[string]func(ctx context.Context, c *zklock.Client) error{
		"TryAcquire": func(ctx context.Context, c *zklock.Client) error {
			_, err := c.TryAcquire(ctx, "r")
			return err
		},
		"Acquire+Try": func(ctx context.Context, c *zklock.Client) error {
			_, err := c.Acquire(ctx, "r", zklock.Try())
			return err
		},
		"AcquireAll+Try": func(ctx context.Context, c *zklock.Client) error {
			_, err := c.AcquireAll(ctx, []string{"r", "s"}, zklock.Try())
			return err
		},
		"Read+Try": func(ctx context.Context, c *zklock.Client) error {
			_, err := c.Acquire(ctx, "r", zklock.Read, zklock.Try())
			return err
		},
		"Semaphore+Try": func(ctx context.Context, c *zklock.Client) error {
			_, err := c.Acquire(ctx, "sem", zklock.Limit(2), zklock.Try())
			return err
		},
	}
	outages := map[string]func(t *testing.T, srv *zktest.Server, p *zktest.Proxy) (heal func()){
		"server-stopped": func(t *testing.T, srv *zktest.Server, p *zktest.Proxy) func() {
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			return func() {
				if err := srv.Start(); err != nil {
					t.Fatal(err)
				}
			}
		},
		"silent-partition": func(t *testing.T, srv *zktest.Server, p *zktest.Proxy) func() {
			p.Blackhole(true)
			return func() { p.Blackhole(false) }
		},
	}
	for oname, outage := range outages {
		t.Run(oname, func(t *testing.T) {
			srv, err := zktest.StartServer(zktest.WithTickTime(500 * time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			p, err := zktest.NewProxy(srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			root := zktest.UniqueRoot(t)
			c := newClientAt(t, p.Addr(), root)
			// The queues exist: the tries below get as far as they can.
			for _, r := range []string{"r", "s", "sem"} {
				opts := []zklock.AcquireOption{}
				if r == "sem" {
					opts = append(opts, zklock.Limit(2))
				}
				l, err := c.TryAcquire(testCtx(t), r, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if err := l.Release(testCtx(t)); err != nil {
					t.Fatal(err)
				}
			}
			heal := outage(t, srv, p)
			for name, try := range tries {
				ctx, cancel := context.WithTimeout(context.Background(), tryCallerDeadline)
				start := time.Now()
				err := try(ctx, c)
				took := time.Since(start)
				callerEnded := ctx.Err() != nil
				cancel()
				switch {
				case callerEnded && took > tryBound+tryGrace:
					t.Errorf("%s answered after %v, when its caller's context ended (%v): the try has no bound of its own; want ErrUnavailable within %v",
						name, took.Round(time.Millisecond), err, tryBound)
				case !errors.Is(err, zklock.ErrUnavailable):
					t.Errorf("%s while ZooKeeper is away = %v; want ErrUnavailable", name, err)
				case took > tryBound+tryGrace:
					t.Errorf("%s answered after %v; want within %v", name, took, tryBound)
				}
				t.Logf("%s: %v after %v", name, err, took.Round(time.Millisecond))
			}
			heal()
			// After the outage a try succeeds again, and nothing of the
			// failed tries is left in the tree.
			ctx := testCtx(t)
			eventually(t, "a try holds again", func() bool {
				l, err := c.TryAcquire(ctx, "r")
				if err != nil {
					return false
				}
				return l.Release(ctx) == nil
			})
			op := newClientAt(t, srv.Addr(), root)
			eventually(t, "no lock node left", func() bool { return len(lockNodes(t, op.Conn(), root)) == 0 })
		})
	}
}

// A try that finds the lock busy answers ErrLocked at once, without
// waiting for the holder, and Try with MaxWait is refused.
func TestIntegration_TryOptions(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	h, err := newClient(t, root).Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(ctx)
	start := time.Now()
	if _, err := c.TryAcquire(ctx, "r"); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("TryAcquire of a held lock = %v", err)
	}
	if took := time.Since(start); took > tryBound {
		t.Fatalf("a busy try took %v", took)
	}
	for _, opts := range [][]zklock.AcquireOption{
		{zklock.Try(), zklock.MaxWait(time.Second)},
		{zklock.MaxWait(time.Second), zklock.Try()},
	} {
		if _, err := c.Acquire(ctx, "free", opts...); !errors.Is(err, zklock.ErrInvalidOption) {
			t.Fatalf("Try with MaxWait = %v; want ErrInvalidOption", err)
		}
	}
	if _, err := c.TryAcquire(ctx, "free", zklock.MaxWait(time.Second)); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("TryAcquire with MaxWait = %v; want ErrInvalidOption", err)
	}
	if n := len(lockNodes(t, c.Conn(), root)); n != 1 {
		t.Fatalf("%d lock nodes, want the holder's alone", n)
	}
}

// A blocking acquire during an outage waits: only its context and MaxWait
// bound it, and the error then also says ZooKeeper was unavailable.
func TestIntegration_AcquireWaitsOutAnOutage(t *testing.T) {
	srv, err := zktest.StartServer(zktest.WithTickTime(500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := newClientAt(t, srv.Addr(), zktest.UniqueRoot(t))
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	const wait = 1500 * time.Millisecond
	start := time.Now()
	_, err = c.Acquire(context.Background(), "r", zklock.MaxWait(wait))
	took := time.Since(start)
	if !errors.Is(err, zklock.ErrWaitTimeout) || !errors.Is(err, zklock.ErrUnavailable) {
		t.Fatalf("Acquire with MaxWait during an outage = %v; want ErrWaitTimeout and ErrUnavailable", err)
	}
	if took < wait || took > wait+tryGrace {
		t.Fatalf("Acquire with MaxWait %v returned after %v", wait, took)
	}
	// Without MaxWait it waits for the server, and holds once it is back.
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		l, err := c.Acquire(ctx, "r")
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Acquire returned %v while ZooKeeper was away", err)
	case <-time.After(2 * time.Second):
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Acquire once ZooKeeper was back: %v", err)
	}
}
