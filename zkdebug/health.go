package zkdebug

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// Ready reports whether c's session is verified (zklock.SessionVerified:
// connected, and ZooKeeper's leader proven to hear from it), the
// readiness a Kubernetes probe or a gRPC health service asks for: nil if
// so, otherwise an error naming the state. Asking keeps the session
// proven (see zklock.Client.State).
func Ready(c *zklock.Client) error {
	if st, _ := c.State(); st != zklock.SessionVerified {
		return fmt.Errorf("zklock session %s", st)
	}
	return nil
}

// ReadyHandler answers a readiness probe: 200 "ok" while c's session is
// verified (Ready), 503 with the session's state otherwise.
//
//	mux.Handle("/readyz", zkdebug.ReadyHandler(client))
func ReadyHandler(c *zklock.Client) http.Handler {
	return healthHandler(func() error { return Ready(c) })
}

// LeaderHealth is a liveness check for a process that leads an election
// with Client.Lead, in the spirit of client-go's HealthzAdaptor: it fails
// when the process runs its leader function although its leadership can
// no longer be proven, past a grace period. zklock cancels the function's
// context when the lease is lost; a function that goes on regardless (a
// loop that never looks at its context, a call that ignores it) does
// leader work without the lock, and a restart is the cure. A process that
// does not lead, or whose function returns when told, stays healthy.
//
// Wrap the leader function, and serve the check:
//
//	health := zkdebug.NewLeaderHealth(10 * time.Second)
//	go client.Lead(ctx, "scheduler", nil, health.Wrap(schedule))
//	mux.Handle("/livez", health)
type LeaderHealth struct {
	grace time.Duration

	mu      sync.Mutex
	lease   *zklock.Lease // the lease a wrapped function runs under
	running bool
	// since: when Check first saw sinceLease ended while its function
	// still ran
	since      time.Time
	sinceLease *zklock.Lease
}

// NewLeaderHealth returns a LeaderHealth that tolerates an unproven
// leadership for grace (at least 0).
func NewLeaderHealth(grace time.Duration) *LeaderHealth {
	return &LeaderHealth{grace: max(grace, 0)}
}

// Wrap returns fn, recording while it runs that the process leads with
// the lease in its context (zklock.LeaseFromContext).
func (h *LeaderHealth) Wrap(fn func(ctx context.Context) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		h.mu.Lock()
		h.lease, h.running = zklock.LeaseFromContext(ctx), true
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.lease, h.running = nil, false
			h.mu.Unlock()
		}()
		return fn(ctx)
	}
}

// Check returns nil unless the process leads (a wrapped function runs)
// with a leadership that has not been proven for longer than the grace:
// its lease ended (lost) that long ago, or its session has been out of
// the verified state that long.
func (h *LeaderHealth) Check() error {
	h.mu.Lock()
	l, running := h.lease, h.running
	h.mu.Unlock()
	if !running || l == nil {
		return nil
	}
	select {
	case <-l.Done():
		return h.overdue(l.Err())
	default:
		return nil
	}
}

// overdue reports a leader function still running after its lease ended
// with err, once the grace has passed since the check first saw it.
func (h *LeaderHealth) overdue(err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.since.IsZero() || h.sinceLease != h.lease {
		h.since, h.sinceLease = time.Now(), h.lease
	}
	if d := time.Since(h.since); d >= h.grace {
		return fmt.Errorf("zklock: leading for %v after the leadership ended (%v): the leader function ignores its context", d.Round(time.Millisecond), err)
	}
	return nil
}

// ServeHTTP answers a liveness probe: 200 "ok", or 503 with Check's error.
func (h *LeaderHealth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	healthHandler(h.Check).ServeHTTP(w, r)
}

// healthHandler answers 200 "ok" when check passes and 503 with its
// error otherwise, as plain text that is never cached.
func healthHandler(check func() error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := check(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
}
