package zkecho_test

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func ok(c echo.Context) error { return c.String(http.StatusOK, "ok") }

var timingRE = regexp.MustCompile(`^zklock;dur=([0-9]+(?:\.[0-9]+)?);desc="([^"]*)"$`)

// timing parses the Server-Timing header: the wait and the resource.
func timing(t testing.TB, r response) (time.Duration, string) {
	t.Helper()
	vs := r.header.Values(zkmw.HeaderServerTiming)
	if len(vs) != 1 {
		t.Fatalf("Server-Timing = %q, want one value", vs)
	}
	m := timingRE.FindStringSubmatch(vs[0])
	if m == nil {
		t.Fatalf("Server-Timing %q does not match %v", vs[0], timingRE)
	}
	ms, _ := strconv.ParseFloat(m[1], 64)
	return time.Duration(ms * float64(time.Millisecond)), m[2]
}

// Try mode answers 423 Locked with Retry-After while another replica holds
// the resource, and 200 once it is free.
func TestIntegration_TryAnswers423WhileHeld(t *testing.T) {
	root := newRoot(t)
	ctx := testCtx(t)
	holder, c := newClient(t, root), newClient(t, root)
	e, url := newEcho(t)
	e.POST("/accounts/:id/withdraw", ok, zkmw.LockWithConfig(zkmw.Config{
		Locker:     c,
		Rule:       zkmw.Rule{Resource: "accounts/{id}", Try: true},
		RetryAfter: 1500 * time.Millisecond,
	}))

	lease, err := holder.Acquire(ctx, "accounts/42")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r := do(t, ctx, http.MethodPost, url+"/accounts/42/withdraw", nil)
		if r.code != http.StatusLocked || r.message != "resource is locked" {
			t.Fatalf("while held: %d %q, want 423 resource is locked", r.code, r.body)
		}
		if got := r.header.Get(echo.HeaderRetryAfter); got != "2" {
			t.Fatalf("Retry-After %q, want 2 (1.5s rounded up)", got)
		}
		if _, desc := timing(t, r); desc != "accounts/42" {
			t.Fatalf("Server-Timing desc %q", desc)
		}
	}
	if n := queueLen(t, holder, "accounts/42"); n != 1 {
		t.Fatalf("queue has %d nodes, want only the holder's", n)
	}
	// Another account is free meanwhile.
	if r := do(t, ctx, http.MethodPost, url+"/accounts/7/withdraw", nil); r.code != http.StatusOK {
		t.Fatalf("other account: %d %s", r.code, r.body)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if r := do(t, ctx, http.MethodPost, url+"/accounts/42/withdraw", nil); r.code != http.StatusOK {
		t.Fatalf("after release: %d %s", r.code, r.body)
	}
	assertNoLock(t, c, "accounts/42")
}

// With a wait limit, a request waits for the holder at least that long and
// then answers 503 with Retry-After, leaving no node behind.
func TestIntegration_MaxWaitAnswers503(t *testing.T) {
	checkLeaks(t)
	root := newRoot(t)
	ctx := testCtx(t)
	holder, c := newClient(t, root), newClient(t, root)
	e, url := newEcho(t)
	const limit = 300 * time.Millisecond
	e.POST("/accounts/:id/withdraw", ok, zkmw.Lock(c, zkmw.Resource("accounts/{id}"), zkmw.MaxWait(limit)))

	lease, err := holder.Acquire(ctx, "accounts/42")
	if err != nil {
		t.Fatal(err)
	}
	r := do(t, ctx, http.MethodPost, url+"/accounts/42/withdraw", nil)
	if r.code != http.StatusServiceUnavailable || r.message != "lock wait limit exceeded" {
		t.Fatalf("while held: %d %q, want 503 lock wait limit exceeded", r.code, r.body)
	}
	if got := r.header.Get(echo.HeaderRetryAfter); got != "1" {
		t.Fatalf("Retry-After %q, want 1", got)
	}
	if waited, _ := timing(t, r); waited < limit-time.Millisecond {
		t.Fatalf("Server-Timing says it waited %v, less than the limit %v", waited, limit)
	}
	if ls := c.Locks(); len(ls) != 0 {
		t.Fatalf("waiter's node left behind: %+v", ls)
	}
	if n := queueLen(t, holder, "accounts/42"); n != 1 {
		t.Fatalf("queue has %d nodes, want only the holder's", n)
	}

	// A request that is waiting gets the lock when the holder lets go.
	done := make(chan response, 1)
	e.POST("/slow/:id", ok, zkmw.Lock(c, zkmw.Resource("accounts/{id}"), zkmw.MaxWait(time.Minute)))
	go func() { done <- do(t, ctx, http.MethodPost, url+"/slow/42", nil) }()
	waitFor(t, "the request to queue", func() bool { return queueLen(t, holder, "accounts/42") == 2 })
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.code != http.StatusOK {
		t.Fatalf("waiting request: %d %s", r.code, r.body)
	}
	assertNoLock(t, c, "accounts/42")
}

// With ZooKeeper unreachable the request answers 503 (errors.Is
// zklock.ErrUnavailable) once its wait limit passes, and works again once
// ZooKeeper is back.
func TestIntegration_UnavailableAnswers503(t *testing.T) {
	root := newRoot(t)
	ctx := testCtx(t)
	proxy, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	suspended := make(chan struct{}, 1)
	c := newClientAt(t, proxy.Addr(), root, zklock.WithSessionTimeout(20*time.Second),
		zklock.WithObserver(zklock.ObserverFunc(func(_ context.Context, ev zklock.Event) {
			if ev.Kind == zklock.EventSuspended {
				select {
				case suspended <- struct{}{}:
				default:
				}
			}
		})))
	var handled []error
	var mu sync.Mutex
	e, url := newEcho(t)
	e.POST("/accounts/:id/withdraw", ok, zkmw.LockWithConfig(zkmw.Config{
		Locker: c,
		Rule:   zkmw.Rule{Resource: "accounts/{id}", MaxWait: 500 * time.Millisecond},
		ErrorHandler: func(c echo.Context, err error) error {
			mu.Lock()
			handled = append(handled, err)
			mu.Unlock()
			return zkmw.DefaultErrorHandler(c, err)
		},
	}))
	if r := do(t, ctx, http.MethodPost, url+"/accounts/1/withdraw", nil); r.code != http.StatusOK {
		t.Fatalf("before the outage: %d %s", r.code, r.body)
	}

	proxy.RejectNew(true)
	proxy.DropAll()
	select {
	case <-suspended: // the client knows ZooKeeper is gone
	case <-ctx.Done():
		t.Fatal("the client never noticed the outage")
	}
	r := do(t, ctx, http.MethodPost, url+"/accounts/1/withdraw", nil)
	if r.code != http.StatusServiceUnavailable || r.message != "lock service unavailable" {
		t.Fatalf("during the outage: %d %q, want 503 lock service unavailable", r.code, r.body)
	}
	mu.Lock()
	last := handled[len(handled)-1]
	mu.Unlock()
	var le *zkmw.LockError
	if !errors.Is(last, zklock.ErrUnavailable) || !errors.As(last, &le) || le.Resource != "accounts/1" {
		t.Fatalf("ErrorHandler got %v, want a *LockError matching zklock.ErrUnavailable", last)
	}

	proxy.RejectNew(false)
	waitFor(t, "the lock to work again", func() bool {
		r := do(t, ctx, http.MethodPost, url+"/accounts/1/withdraw", nil)
		return r.code == http.StatusOK
	})
	waitFor(t, "nodes to go", func() bool { return len(c.Locks()) == 0 })
}

// ReadWrite mode: GET and HEAD share the lock, other methods take it alone.
func TestIntegration_ReadWriteByMethod(t *testing.T) {
	root := newRoot(t)
	ctx := testCtx(t)
	holder, c := newClient(t, root), newClient(t, root)
	e, url := newEcho(t)
	mw := zkmw.Lock(c, zkmw.Resource("docs/{id}"), zkmw.ReadWrite(), zkmw.Try())
	e.GET("/docs/:id", ok, mw)
	e.HEAD("/docs/:id", ok, mw)
	e.PUT("/docs/:id", ok, mw)
	e.DELETE("/docs/:id", ok, mw)

	type want struct{ get, head, put, del int }
	for _, tc := range []struct {
		held zklock.Mode
		want want
	}{
		{zklock.Read, want{200, 200, 423, 423}},
		{zklock.Write, want{423, 423, 423, 423}},
		{zklock.Exclusive, want{423, 423, 423, 423}},
	} {
		t.Run(tc.held.String(), func(t *testing.T) {
			lease, err := holder.Acquire(ctx, "docs/1", tc.held)
			if err != nil {
				t.Fatal(err)
			}
			got := want{
				do(t, ctx, http.MethodGet, url+"/docs/1", nil).code,
				do(t, ctx, http.MethodHead, url+"/docs/1", nil).code,
				do(t, ctx, http.MethodPut, url+"/docs/1", nil).code,
				do(t, ctx, http.MethodDelete, url+"/docs/1", nil).code,
			}
			if got != tc.want {
				t.Fatalf("held %v: GET/HEAD/PUT/DELETE answered %v, want %v", tc.held, got, tc.want)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}

	// Two GETs hold the read lock at once; the node layout is Curator's.
	var g gauge
	in := make(chan string, 2)
	e.GET("/slow/:id", func(c echo.Context) error {
		g.enter()
		defer g.leave()
		in <- zkmw.LeaseFrom(c).Path()
		deadline := time.Now().Add(10 * time.Second)
		for g.peak.Load() < 2 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		return c.NoContent(http.StatusOK)
	}, zkmw.Lock(c, zkmw.Resource("docs/{id}"), zkmw.ReadWrite()))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if r := do(t, ctx, http.MethodGet, url+"/slow/1", nil); r.code != http.StatusOK {
				t.Errorf("GET: %d", r.code)
			}
		})
	}
	wg.Wait()
	if p := g.peak.Load(); p != 2 {
		t.Fatalf("peak readers at once = %d, want 2", p)
	}
	for range 2 {
		if p := <-in; !regexp.MustCompile(`/_c_[0-9a-f-]{36}-__READ__[0-9]{10}$`).MatchString(p) {
			t.Fatalf("reader node %q is not in Curator's read layout", p)
		}
	}
	assertNoLock(t, c, "docs/1")
}
