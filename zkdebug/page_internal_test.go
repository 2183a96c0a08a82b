package zkdebug

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// Every value the page shows is escaped for where it lands: a holder's
// label and host (owner data anyone with write access to a queue can
// set), a resource class in the history table and in the charts' titles,
// an error from a read of the holders.
func TestPageEscapesEverything(t *testing.T) {
	evil := `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	h := NewHistory(WithHistoryClass(func(string) string { return evil }))
	now := time.Now()
	ctx := context.Background()
	h.Observe(ctx, zklock.Event{Kind: zklock.EventStarted, ID: 1, Resource: "r", Time: now})
	h.Observe(ctx, zklock.Event{Kind: zklock.EventAcquired, ID: 1, Resource: "r", Wait: time.Second, Time: now})
	h.Observe(ctx, zklock.Event{Kind: zklock.EventLost, ID: 1, Resource: "r", Time: now,
		Err: &zklock.LostError{Resource: "r", Reason: zklock.LossNodeDeleted}})
	read := now.Add(-time.Minute)
	s := snapshot{Session: "0x1", Root: "/zklock", Time: now, Waiting: 1, lookups: 1, stale: 1, budget: time.Second,
		History: h.view(now),
		Locks: []lockView{{Resource: evil, Mode: "exclusive", State: "waiting", Position: 1, Path: "/zklock/x/" + evil,
			HoldersStatus: "stale", HoldersRead: &read, HoldersError: evil,
			WaitsFor: []holderView{{Label: evil, Host: evil, PID: 7, Session: "0x2", Path: "/zklock/x/" + evil}}}}}
	var b strings.Builder
	if err := page.Execute(&b, htmlPage{snapshot: s}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script>", "<img", `"><script`} {
		if strings.Contains(out, bad) {
			t.Errorf("the page has %q unescaped:\n%s", bad, out)
		}
	}
	// resource, holder's label, host and node (title), the error, the
	// node's path (title), the class (cell and title)
	if n := strings.Count(out, "&lt;script&gt;alert(1)&lt;/script&gt;"); n != 8 {
		t.Errorf("the hostile text shows %d times, escaped; want it everywhere it is used:\n%s", n, out)
	}
	if !strings.Contains(out, `<rect class="loss-node_deleted"`) || !strings.Contains(out, `<circle class="p99"`) {
		t.Errorf("the charts are not drawn:\n%s", out)
	}
}
