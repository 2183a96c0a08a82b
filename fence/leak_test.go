package fence_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/goleak"

	"github.com/zklockkit/zklockkit/fence"
)

// TestIntegration_NoGoroutineLeak guards, is refused, and carries a token
// over HTTP on both engines, tears everything down and checks that no
// goroutine is left behind.
func TestIntegration_NoGoroutineLeak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, name := range []string{"postgres", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			e := sqliteEngine
			if name == "postgres" {
				e = postgresEngine
			}
			eng := e(t)
			ctx := testCtx(t)
			c := newClient(t)
			older, newer := leasePair(t, c, "r")
			must(t, eng.fencedWrite(ctx, newer, "r"))
			if err := eng.fencedWrite(ctx, older, "r"); !errors.Is(err, fence.ErrStaleToken) {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tx, _ := eng.db.BeginTx(r.Context(), nil)
				defer tx.Rollback()
				if err := eng.fence.GuardRequest(r.Context(), tx, r); err != nil {
					w.WriteHeader(http.StatusConflict)
				}
			}))
			defer srv.Close()
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			l, err := c.Acquire(ctx, "r")
			must(t, err)
			defer l.Release(ctx)
			req, _ := http.NewRequestWithContext(l.Context(ctx), "POST", srv.URL, nil)
			resp, err := (&http.Client{Transport: fence.Transport(base)}).Do(req)
			must(t, err)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatal(resp.Status)
			}
		})
	}
}
