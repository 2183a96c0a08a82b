package zkecho_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/zklock"
)

// releases records what OnRelease saw.
type releases struct {
	mu   sync.Mutex
	errs []error
}

func (r *releases) hook(_ echo.Context, _ *zklock.Lease, err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *releases) all() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// The lease is released, and no node remains, after a handler panics (with
// a recover middleware in the chain), returns an error, or succeeds.
func TestIntegration_ReleasedAfterPanicAndError(t *testing.T) {
	checkLeaks(t)
	root := newRoot(t)
	ctx := testCtx(t)
	c, other := newClient(t, root), newClient(t, root)
	var rel releases
	e, url := newEcho(t)
	e.Use(recoverMW)
	mw := zkmw.LockWithConfig(zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "accounts/{id}"}, OnRelease: rel.hook})
	held := func(c echo.Context) {
		if l := zkmw.LeaseFrom(c); l == nil || l.Err() != nil {
			panic("handler runs without a live lease")
		}
	}
	e.POST("/panic/:id", func(c echo.Context) error { held(c); panic("boom") }, mw)
	e.POST("/error/:id", func(c echo.Context) error {
		held(c)
		return echo.NewHTTPError(http.StatusTeapot, "no")
	}, mw)
	e.POST("/plain-error/:id", func(c echo.Context) error { held(c); return errors.New("plain") }, mw)
	e.POST("/ok/:id", func(c echo.Context) error { held(c); return c.NoContent(http.StatusNoContent) }, mw)

	for _, tc := range []struct {
		path string
		code int
	}{
		{"/panic/1", http.StatusInternalServerError},
		{"/error/1", http.StatusTeapot},
		{"/plain-error/1", http.StatusInternalServerError},
		{"/ok/1", http.StatusNoContent},
	} {
		for range 3 { // a lock left behind would block the second round
			r := do(t, ctx, http.MethodPost, url+tc.path, nil)
			if r.code != tc.code {
				t.Fatalf("%s: %d %s, want %d", tc.path, r.code, r.body, tc.code)
			}
			// Released before the answer was sent: nothing to wait for.
			assertNoLock(t, c, "accounts/1")
			l, err := other.TryAcquire(ctx, "accounts/1")
			if err != nil {
				t.Fatalf("%s: another replica cannot take the lock after the request: %v", tc.path, err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, err := range rel.all() {
		if err != nil {
			t.Errorf("release %d: %v", i, err)
		}
	}
	if n := len(rel.all()); n != 12 {
		t.Errorf("OnRelease ran %d times, want 12", n)
	}
}

// A client that goes away releases the lock: while the handler runs (its
// context is cancelled) and while the request waits in the queue.
func TestIntegration_ReleasedWhenClientDisconnects(t *testing.T) {
	checkLeaks(t)
	root := newRoot(t)
	ctx := testCtx(t)
	c, holder := newClient(t, root), newClient(t, root)
	e, url := newEcho(t)
	entered := make(chan struct{}, 1)
	stopped := make(chan error, 1)
	e.POST("/accounts/:id/withdraw", func(c echo.Context) error {
		entered <- struct{}{}
		<-c.Request().Context().Done()
		stopped <- c.Request().Context().Err()
		return c.Request().Context().Err()
	}, zkmw.Lock(c, zkmw.Resource("accounts/{id}")))

	t.Run("in handler", func(t *testing.T) {
		rctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() { _, err := doErr(rctx, http.MethodPost, url+"/accounts/1/withdraw", nil); errc <- err }()
		<-entered
		if n := queueLen(t, holder, "accounts/1"); n != 1 {
			t.Fatalf("queue has %d nodes while the handler runs", n)
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("client: %v", err)
		}
		if err := <-stopped; !errors.Is(err, context.Canceled) {
			t.Fatalf("handler context: %v", err)
		}
		waitFor(t, "the lock to be released", func() bool {
			return len(c.Locks()) == 0 && queueLen(t, holder, "accounts/1") == 0
		})
	})

	t.Run("while waiting", func(t *testing.T) {
		lease, err := holder.Acquire(ctx, "accounts/2")
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() { _, err := doErr(rctx, http.MethodPost, url+"/accounts/2/withdraw", nil); errc <- err }()
		waitFor(t, "the request to queue", func() bool { return queueLen(t, holder, "accounts/2") == 2 })
		cancel()
		<-errc
		waitFor(t, "the waiting node to go", func() bool {
			return len(c.Locks()) == 0 && queueLen(t, holder, "accounts/2") == 1
		})
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-entered:
			t.Fatal("the handler ran for a client that had gone")
		default:
		}
	})
}

// A lease lost mid-request (its node deleted by an operator) cancels the
// handler's context with the loss as cause; the answer is 503.
func TestIntegration_LostLeaseCancelsHandler(t *testing.T) {
	checkLeaks(t)
	root := newRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)
	var rel releases
	e, url := newEcho(t)
	path := make(chan string, 1)
	cause := make(chan error, 1)
	e.POST("/accounts/:id/withdraw", func(c echo.Context) error {
		rctx := c.Request().Context()
		path <- zkmw.LeaseFrom(c).Path()
		select {
		case <-rctx.Done():
		case <-time.After(time.Minute):
			return errors.New("handler context not cancelled")
		}
		cause <- context.Cause(rctx)
		return rctx.Err()
	}, zkmw.LockWithConfig(zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "accounts/{id}"}, OnRelease: rel.hook}))

	done := make(chan response, 1)
	go func() { done <- do(t, ctx, http.MethodPost, url+"/accounts/1/withdraw", nil) }()
	if err := c.Conn().Delete(<-path, -1); err != nil {
		t.Fatal(err)
	}
	if err := <-cause; !errors.Is(err, zklock.ErrLeaseLost) {
		t.Fatalf("handler context cause = %v, want a lost lease", err)
	}
	r := <-done
	if r.code != http.StatusServiceUnavailable || r.message != "lock lost" {
		t.Fatalf("answer %d %q, want 503 lock lost", r.code, r.body)
	}
	if errs := rel.all(); len(errs) != 1 || !errors.Is(errs[0], zklock.ErrLeaseLost) {
		t.Fatalf("OnRelease saw %v, want the loss", errs)
	}
	assertNoLock(t, c, "accounts/1")
}
