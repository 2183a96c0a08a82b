package chaos

import (
	"context"
	"math/rand/v2"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// A Downgrade that fails after giving the write lease up (the write
// node's delete waited out the session: ErrLeaseLost) ended the write
// lease when it was called, as a downgrade does. The downgrade lane
// recorded it as held until its own release after the call, and the
// checker read a writer that came in during the call as a double grant (a
// CI rehearsal's short run, 3969abd). Here the write node's delete loses
// its reply and reconnects are refused until the session has expired.
func TestIntegration_DowngradeLaneRecordsALostDowngradeAtTheCall(t *testing.T) {
	const sessionTimeout = 2 * time.Second
	s := startServer(t)
	p, err := zktest.NewProxy(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	h := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{p.Addr()}, zklock.WithRoot("/root"), zklock.WithSessionTimeout(sessionTimeout))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := &worker{spec: workerSpec{Hub: h.Addr(), Proc: 5, Slot: 1, RW: []string{"rw-0"}, SessionTimeout: sessionTimeout,
		HangGrace: 2 * time.Second, Work: time.Millisecond}, c: c, hc: &http.Client{Timeout: 10 * time.Second}, hubGone: func(error) {}, pid: os.Getpid(),
		held: map[string]map[*heldLease]bool{}, requeues: newRequeues()}
	ln := &lane{w: w, rng: rand.New(rand.NewPCG(1, 2)), recipe: ModeDowngrade}

	// The lane's acquire sends no delete: the first is the Downgrade's.
	p.RejectNew(true)
	lost := p.LoseReply(zktest.OpDelete)
	go func() {
		select {
		case <-lost:
			time.Sleep(sessionTimeout + 2*time.Second) // the server expires the session
		case <-ctx.Done():
		}
		p.RejectNew(false)
	}()
	ln.downgrade(ctx, attempt{op: w.op.Add(1), timeout: 10 * time.Second})
	select {
	case <-lost:
	default:
		t.Fatal("the write node's delete never lost its reply: the test did not set up its case")
	}

	var note, release, released *Event
	for _, e := range h.history() {
		switch {
		case e.Kind == EvNote && e.Mode == ModeWrite:
			note = &e
		case e.Kind == EvRelease && e.Mode == ModeWrite:
			release = &e
		case e.Kind == EvReleased && e.Mode == ModeWrite:
			released = &e
		}
	}
	if note == nil || note.Outcome != "downgrade-"+outcome(zklock.ErrLeaseLost) {
		t.Fatalf("the Downgrade did not fail with ErrLeaseLost: note %v; history:\n%v", note, h.history())
	}
	if release == nil || released == nil || release.T >= note.T || release.Detail != "downgrade-lost" || released.Outcome != "lost" {
		t.Fatalf("the write lease's end: release %v, released %v; want it ended at the call (before %v), lost", release, released, note)
	}
}
