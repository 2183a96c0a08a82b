package zklock_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// The client-wide session state (Client.State, EventState) through a
// partition, an expiry and a close, against a real server behind a fault
// proxy: Verified while the leader hears from the session; Suspended
// once the proof of life runs out or the connection is lost; Verified
// again when the partition heals in time; Expired when the server
// expired the session, then Verified on the new session; Closed. Each
// change closes the channel State returned, and is reported in order
// (the state the session is established in is no change: not reported).
func TestIntegration_SessionState(t *testing.T) {
	const timeout = 4 * time.Second
	px, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	var mu sync.Mutex
	var seen []zklock.SessionState
	c, err := zklock.Connect(context.Background(), []string{px.Addr()}, zklock.WithRoot(zktest.UniqueRoot(t)),
		zklock.WithSessionTimeout(timeout),
		zklock.WithObserver(zklock.ObserverFunc(func(_ context.Context, e zklock.Event) {
			if e.Kind == zklock.EventState {
				mu.Lock()
				seen = append(seen, e.State)
				mu.Unlock()
			}
		})))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	// await waits for state want, through the channels State returns, and
	// returns how long it took.
	await := func(want zklock.SessionState, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		deadline := time.After(within)
		for {
			st, changed := c.State()
			if st == want {
				return time.Since(start)
			}
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("state %v after %v; want %v", st, within, want)
			}
		}
	}
	await(zklock.SessionVerified, timeout)
	sid := c.SessionID()

	px.Blackhole(true) // a silent partition: nothing answers
	took := await(zklock.SessionSuspended, timeout)
	t.Logf("suspended %v into the partition", took)
	px.Blackhole(false)
	await(zklock.SessionVerified, timeout)
	if c.SessionID() != sid {
		t.Fatalf("session %#x after a short partition; want %#x", c.SessionID(), sid)
	}

	px.Blackhole(true) // long enough for the server to expire the session
	await(zklock.SessionSuspended, timeout)
	time.Sleep(timeout + 2*time.Second)
	px.Blackhole(false)
	await(zklock.SessionExpired, 2*timeout)
	await(zklock.SessionVerified, 2*timeout)
	if c.SessionID() == sid {
		t.Fatal("the same session after the server expired it")
	}

	c.Close()
	closed = true
	if st, _ := c.State(); st != zklock.SessionClosed {
		t.Fatalf("state after Close = %v; want closed", st)
	}
	mu.Lock()
	got := slices.Clone(seen)
	mu.Unlock()
	want := []zklock.SessionState{zklock.SessionSuspended, zklock.SessionVerified,
		zklock.SessionSuspended, zklock.SessionExpired, zklock.SessionVerified, zklock.SessionClosed}
	if !slices.Equal(got, want) {
		t.Fatalf("EventState reported %v; want %v", got, want)
	}
}

// A Client that Connect returned reports its session verified at once:
// the state is published before Connect returns, not by a goroutine that
// may run later.
func TestIntegration_SessionStateVerifiedOnConnect(t *testing.T) {
	for range 20 {
		c := newClient(t, zktest.UniqueRoot(t))
		if st, _ := c.State(); st != zklock.SessionVerified {
			t.Fatalf("state right after Connect = %v; want verified", st)
		}
		c.Close()
	}
}
