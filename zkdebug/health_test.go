package zkdebug_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// probe returns a handler's status code and body.
func probe(t *testing.T, h http.Handler) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// awaitProbe polls h until it answers code, within d, and returns how long
// that took.
func awaitProbe(t *testing.T, h http.Handler, code int, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got, body := probe(t, h)
		if got == code {
			return time.Since(start)
		}
		if time.Since(start) > d {
			t.Fatalf("probe answered %d %q for %v; want %d", got, strings.TrimSpace(body), d, code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Readiness follows the session through a silent partition: 200 while the
// session is verified, 503 naming the state once the proof of life runs
// out (within the loss margin's bound: 40% of the session timeout after the
// last answered sync), 200 again once the partition heals; 503 after Close.
func TestIntegration_ReadinessUnderPartition(t *testing.T) {
	const timeout = 4 * time.Second
	px, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	c, err := zklock.Connect(context.Background(), []string{px.Addr()}, zklock.WithRoot(zktest.UniqueRoot(t)),
		zklock.WithSessionTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	ready := zkdebug.ReadyHandler(c)
	awaitProbe(t, ready, http.StatusOK, timeout)
	px.Blackhole(true)
	took := awaitProbe(t, ready, http.StatusServiceUnavailable, timeout)
	if _, body := probe(t, ready); !strings.Contains(body, "suspended") {
		t.Fatalf("readiness during the partition says %q; want the state", body)
	}
	t.Logf("unready %v into the partition", took)
	px.Blackhole(false)
	awaitProbe(t, ready, http.StatusOK, timeout)
	c.Close()
	if code, body := probe(t, ready); code != http.StatusServiceUnavailable || !strings.Contains(body, "closed") {
		t.Fatalf("readiness after Close = %d %q; want 503 closed", code, body)
	}
}

// A leader's liveness: healthy while it leads with its lease, and after a
// leader function that returns when told; unhealthy, past the grace, when
// the function goes on after its leadership was lost (here, an operator
// deleted the leader's node).
func TestIntegration_LeaderLiveness(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := connect(t, root)
	op := connect(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const grace = 300 * time.Millisecond
	for _, obeys := range []bool{true, false} {
		health := zkdebug.NewLeaderHealth(grace)
		leading := make(chan *zklock.Lease, 1)
		release := make(chan struct{})
		done := make(chan struct{})
		fn := health.Wrap(func(ctx context.Context) error {
			leading <- zklock.LeaseFromContext(ctx)
			if obeys {
				<-ctx.Done()
			} else {
				<-release // ignores its context
			}
			return nil
		})
		lctx, stop := context.WithCancel(ctx)
		go func() {
			defer close(done)
			_ = c.Lead(lctx, "scheduler", nil, func(ctx context.Context) error {
				err := fn(ctx)
				stop() // lead once
				return err
			})
		}()
		l := <-leading
		if code, body := probe(t, health); code != http.StatusOK {
			t.Fatalf("liveness while leading = %d %q; want 200", code, body)
		}
		if err := op.Conn().Delete(l.Path(), -1); err != nil {
			t.Fatal(err)
		}
		<-l.Done()
		if obeys {
			<-done
			if code, body := probe(t, health); code != http.StatusOK {
				t.Fatalf("liveness after a leader function that returned = %d %q; want 200", code, body)
			}
			continue
		}
		if code, _ := probe(t, health); code != http.StatusOK {
			t.Fatal("liveness failed before the grace passed")
		}
		took := awaitProbe(t, health, http.StatusServiceUnavailable, grace+2*time.Second)
		if took < grace/2 {
			t.Fatalf("liveness failed %v after the loss; want the grace (%v) first", took, grace)
		}
		close(release)
		<-done
		if code, body := probe(t, health); code != http.StatusOK {
			t.Fatalf("liveness once the leader function returned = %d %q; want 200", code, body)
		}
	}
}
