package chaos

import (
	"context"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// A worker reports its client's lock nodes under its session, from a
// goroutine that sends nothing once stopped.
func TestIntegration_ReportLocal(t *testing.T) {
	s := startServer(t)
	h := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{s.Addr()}, zklock.WithRoot("/root"), zklock.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := &worker{spec: workerSpec{Hub: h.Addr(), Proc: 5, Slot: 2}, c: c, hc: &http.Client{Timeout: 10 * time.Second}, hubGone: func(error) {}, pid: os.Getpid()}

	l, err := c.Acquire(ctx, "res-0")
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixNano()
	e, ok := w.localNodes()
	ls := c.Locks()
	if !ok || e.Kind != EvLocal || e.Session != c.SessionID() || e.T < before || e.T > time.Now().UnixNano() ||
		len(ls) != 1 || !slices.Equal(e.Nodes, []string{ls[0].Path}) {
		t.Fatalf("local nodes %+v (%t), client's locks %+v", e, ok, ls)
	}

	stop := w.reportLocal(50 * time.Millisecond)
	waitFor(t, h, EvLocal, func(e Event) bool {
		return e.Proc == 5 && e.Slot == 2 && e.Session == c.SessionID() && slices.Equal(e.Nodes, []string{ls[0].Path})
	})
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	released := time.Now().UnixNano()
	waitFor(t, h, EvLocal, func(e Event) bool { return e.T > released && len(e.Nodes) == 0 })
	stop()
	n := len(count(h, EvLocal))
	time.Sleep(200 * time.Millisecond)
	if m := len(count(h, EvLocal)); m != n {
		t.Fatalf("%d local reports after stop, %d before", m, n)
	}
}
