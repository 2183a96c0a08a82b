package zkecho_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/zklock"
)

// Code called by a handler that acquires the same resource through the
// request context re-enters the lock instead of deadlocking, and so does a
// second lock middleware on the same resource (app-wide table plus a
// per-route lock).
func TestIntegration_ReentrantThroughRequestContext(t *testing.T) {
	root := newRoot(t)
	ctx := testCtx(t)
	c := newClient(t, root)

	// account.debit is code that locks on its own, as a library would.
	debit := func(locker zklock.Locker, c echo.Context, id string) (int64, error) {
		l, err := locker.Acquire(c.Request().Context(), "accounts/"+id, zklock.MaxWait(10*time.Second))
		if err != nil {
			return 0, err
		}
		defer l.Release(c.Request().Context())
		return l.Token(), nil
	}
	handler := func(ec echo.Context) error {
		outer := zkmw.LeaseFrom(ec)
		token, err := debit(c, ec, ec.Param("id"))
		if err != nil {
			return err
		}
		if token != outer.Token() {
			return echo.NewHTTPError(http.StatusInternalServerError, "nested acquire took a new lease")
		}
		if outer.Err() != nil {
			return echo.NewHTTPError(http.StatusInternalServerError, "inner release ended the outer lease")
		}
		return ec.NoContent(http.StatusNoContent)
	}

	mw, err := zkmw.Config{Locker: c, Routes: map[string]zkmw.Rule{
		"POST /twice/:id": {Resource: "accounts/{id}"},
	}}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e, url := newEcho(t)
	e.Use(mw)
	e.POST("/accounts/:id/withdraw", handler, zkmw.Lock(c, zkmw.Resource("accounts/{id}")))
	e.POST("/twice/:id", handler, zkmw.Lock(c, zkmw.Resource("accounts/{id}"), zkmw.Try()))

	for _, p := range []string{"/accounts/42/withdraw", "/twice/42"} {
		r := do(t, ctx, http.MethodPost, url+p, nil)
		if r.code != http.StatusNoContent {
			t.Fatalf("%s: %d %s", p, r.code, r.body)
		}
		assertNoLock(t, c, "accounts/42")
	}
}
