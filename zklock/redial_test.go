package zklock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A client of one server redials at once when a connection that lived a
// second or more drops (go-zookeeper alone waits a second before every
// redial of its only server), so a short session keeps its leases across
// drops; a connection that drops sooner is redialled after the second, as
// before, so a server that keeps dropping its clients is not dialled in a
// loop. Without the quick redial the first part fails twice over: every
// reconnection takes over a second, and with a 2 s session the lease is
// given up 0.6 to 0.8 s after each drop.
func TestIntegration_OneServerRedialsAtOnce(t *testing.T) {
	srv, err := zktest.StartServer(zktest.WithTickTime(500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const timeout = 2 * time.Second
	c, err := zklock.Connect(ctx, []string{p.Addr()}, zklock.WithRoot(zktest.UniqueRoot(t)), zklock.WithSessionTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	// reconnect drops the connection in use and returns how long the
	// client took to have its session again.
	reconnect := func() time.Duration {
		t.Helper()
		p.DropAll()
		start := time.Now()
		for c.Conn().State() == zk.StateHasSession && time.Since(start) < time.Second {
			time.Sleep(time.Millisecond) // until go-zookeeper sees the drop
		}
		for c.Conn().State() != zk.StateHasSession {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("no session 10 s after a drop (state %v)", c.Conn().State())
			}
			time.Sleep(time.Millisecond)
		}
		return time.Since(start)
	}
	var took []time.Duration
	for range 5 {
		time.Sleep(zklock.QuickRedialAfter + 200*time.Millisecond)
		took = append(took, reconnect())
		if err := l.Err(); err != nil {
			t.Fatalf("after drop %d (reconnections in %v): lease lost: %v", len(took), took, err)
		}
	}
	slices.Sort(took)
	t.Logf("reconnections after a connection of over %v: %v", zklock.QuickRedialAfter, took)
	if took[len(took)/2] >= 500*time.Millisecond {
		t.Fatalf("reconnections after a drop took %v: median at or over 500 ms", took)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// A connection that lived less than QuickRedialAfter: the second's wait.
	time.Sleep(zklock.QuickRedialAfter + 200*time.Millisecond)
	reconnect()
	if d := reconnect(); d < 900*time.Millisecond {
		t.Fatalf("a connection dropped %v after the one before was redialled at once", d)
	}
}
