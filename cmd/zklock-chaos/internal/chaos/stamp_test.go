package chaos

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
)

// gatedLosses holds a worker's loss reports while shut: the hub of the
// ZooKeeper-store long run of 27 November took no events for 9 s.
type gatedLosses struct {
	shut atomic.Bool
	open chan struct{}
}

func (g *gatedLosses) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/event" && g.shut.Load() {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		if bytes.Contains(b, []byte(`"kind":"lost"`)) {
			<-g.open
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// An acquire is stamped when it returned, not when its reports reached the
// hub. Lane B takes a lock whose holder, lane A of the same worker, lost
// it; B's goroutine reports A's loss before B's grant, and that report
// waits for a hub that takes no events. In the long run of 27 November an
// acquire was stamped 5.5 s past its deadline that way, and reported hung.
func TestIntegration_AcquireStampedWhenItReturned(t *testing.T) {
	s := startServer(t)
	h := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{s.Addr()}, zklock.WithRoot("/root"), zklock.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g := &gatedLosses{open: make(chan struct{})}
	w := &worker{spec: workerSpec{Hub: h.Addr(), Proc: 5, Slot: 1, HangGrace: time.Second, Work: time.Millisecond},
		c: c, hc: &http.Client{Transport: g, Timeout: 30 * time.Second}, hubGone: func(error) {}, pid: os.Getpid(),
		held: map[string]map[*heldLease]bool{}, requeues: newRequeues()}
	ln := &lane{w: w, rng: rand.New(rand.NewPCG(1, 2)), recipe: ModeExclusive}
	try := func(op int64) attempt {
		return attempt{op: op, resource: "res-0", mode: ModeExclusive, timeout: time.Second,
			acquire: func(ctx context.Context) (*zklock.Lease, error) { return c.Acquire(ctx, "res-0") }}
	}

	a := ln.acquire(ctx, try(1))
	if a == nil {
		t.Fatal("lane A did not acquire")
	}
	g.shut.Store(true)
	op, _, err := zk.Connect([]string{s.Addr()}, 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if err := op.Delete(a.l.Path(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("lane A was not told of its node's delete")
	}
	hold := 2500 * time.Millisecond // past B's deadline and its HangGrace
	time.AfterFunc(hold, func() { close(g.open) })
	b := ln.acquire(ctx, try(2))
	if b == nil {
		t.Fatalf("lane B did not acquire: %v", h.history())
	}
	var lost, acquired *Event
	for _, e := range h.history() {
		switch {
		case e.Kind == EvHung:
			t.Fatalf("hung reported for an acquire that returned at once: %v", e)
		case e.Kind == EvLost && e.Op == 1:
			lost = &e
		case e.Kind == EvAcquired && e.Op == 2:
			acquired = &e
		}
	}
	switch {
	case lost == nil || acquired == nil:
		t.Fatalf("lost %v, acquired %v; want both", lost, acquired)
	case lost.Seq > acquired.Seq || lost.T > acquired.T:
		t.Fatalf("A's loss %v reported after B's grant %v", lost, acquired)
	case time.Duration(acquired.T-acquired.Began) > hold/2:
		t.Fatalf("B's acquire stamped %v after it began, the hub's stall (%v) included", time.Duration(acquired.T-acquired.Began), hold)
	}
}
