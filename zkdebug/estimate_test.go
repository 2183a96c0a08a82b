package zkdebug_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// estimateJSON is a lock of the page's JSON, the estimate's fields.
type estimateJSON struct {
	Resource             string
	State                string
	Turns                *int
	HoldP50Seconds       *float64 `json:"hold_p50_seconds"`
	HoldSource           string   `json:"hold_source"`
	EstimatedWaitSeconds *float64 `json:"estimated_wait_seconds"`
	Deadline             *time.Time
	GivesUpFirst         bool `json:"gives_up_first"`
}

func estimates(t *testing.T, url string) map[string]estimateJSON {
	t.Helper()
	var p struct{ Locks []estimateJSON }
	_, body := get(t, url+"?format=json")
	decode(t, body, &p)
	m := map[string]estimateJSON{}
	for _, l := range p.Locks {
		m[l.Resource] = l
	}
	return m
}

// The page estimates each waiting lock's wait: its turns times the
// hold-time median the queue's nodes report (here the holder's, 2s) or,
// without a read of the queue, this client's own; it shows the deadline
// the acquire wrote, and flags a lock whose deadline comes before its
// turn.
func TestPageEstimates(t *testing.T) {
	const hold = 2 * time.Second
	ctx := context.Background()
	root := zktest.UniqueRoot(t)
	holder := connect(t, root, zklock.WithLabel("holder"))
	c := connect(t, root)
	for _, cl := range []*zklock.Client{holder, c} { // each reports a median of 2s
		l, err := cl.Acquire(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(hold)
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	l, err := holder.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	wait(t, c, "r", zklock.MaxWait(hold-100*time.Millisecond)) // its turn, in about 2s, comes after it gives up
	queued := time.Now()

	srv := httptest.NewServer(zkdebug.Handler(c))
	defer srv.Close()
	r := estimates(t, srv.URL)["r"]
	if time.Since(queued) > hold-100*time.Millisecond {
		t.Fatalf("the page took until %v after the waiter queued: past its MaxWait", time.Since(queued))
	}
	if r.State != "waiting" || r.Turns == nil || *r.Turns != 1 || r.HoldSource != "reports" || r.HoldP50Seconds == nil ||
		*r.HoldP50Seconds < hold.Seconds() || r.EstimatedWaitSeconds == nil || *r.EstimatedWaitSeconds != *r.HoldP50Seconds ||
		r.Deadline == nil || !r.GivesUpFirst {
		t.Errorf("with the queue read: %+v", r)
	}
	_, body := get(t, srv.URL)
	if !strings.Contains(body, "<th>Turn in</th>") || !strings.Contains(body, "≈2") || !strings.Contains(body, "gives up before its turn") {
		t.Errorf("page lacks the estimate:\n%s", body)
	}

	off := httptest.NewServer(zkdebug.Handler(c, zkdebug.WithLookupBudget(0)))
	defer off.Close()
	r = estimates(t, off.URL)["r"]
	if r.Turns == nil || *r.Turns != 1 || r.HoldSource != "this client" || r.EstimatedWaitSeconds == nil ||
		*r.EstimatedWaitSeconds < hold.Seconds() || r.Deadline != nil {
		t.Errorf("without a read of the queue: %+v", r)
	}
}
