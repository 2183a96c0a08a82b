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

// TestIntegration_PageWithZooKeeperStalled: while ZooKeeper does not
// answer (the client's connection blackholed by a proxy: it stays open,
// and nothing comes back), the page still answers within its look-up
// budget, from the client's own bookkeeping, and says that what it shows
// of the holders is stale (an older read) or unavailable (none).
func TestIntegration_PageWithZooKeeperStalled(t *testing.T) {
	proxy, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	root := zktest.UniqueRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{proxy.Addr()}, zklock.WithRoot(root), zklock.WithSessionTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, other := scene(t, c, root, "nightly-export", "orders/1", "orders/2")
	const budget = 300 * time.Millisecond
	warm := httptest.NewServer(zkdebug.Handler(c, zkdebug.WithLookupBudget(budget)))
	defer warm.Close()
	cold := httptest.NewServer(zkdebug.Handler(c, zkdebug.WithLookupBudget(budget)))
	defer cold.Close()

	p := getJSON(t, warm.URL)
	if w := p.Locks[1]; w.HoldersStatus != "fresh" || len(w.WaitsFor) != 1 || w.WaitsFor[0].Label != "nightly-export" {
		t.Fatalf("before the stall: %+v", w)
	}

	proxy.Blackhole(true)
	defer proxy.Blackhole(false)        // before Close, in the defers' order
	time.Sleep(1100 * time.Millisecond) // past ?refresh=1's cache period

	// bound is the page's answer time the package documents (the budget)
	// plus room for a loaded machine to render it; without the budget a
	// read would wait for the connection to time out (about 13s here).
	const bound = budget + 2*time.Second
	for _, tc := range []struct {
		name, url, status string
	}{
		{"a page that read the holders before", warm.URL + "?refresh=1", "stale"},
		{"a page that never read them", cold.URL, "unavailable"},
	} {
		for _, format := range []string{"json", "html"} {
			start := time.Now()
			resp, body := get(t, tc.url+sep(tc.url)+"format="+format)
			took := time.Since(start)
			if resp.StatusCode != 200 || took > bound {
				t.Errorf("%s, %s: %d after %v; want 200 within %v", tc.name, format, resp.StatusCode, took, bound)
			}
			switch format {
			case "html":
				for _, want := range []string{`<p id="holders-status" class="warn">ZooKeeper did not answer within 300ms: holder information is ` + tc.status,
					`<span id="counts">1 held, 1 waiting</span>`, `<div class="note ` + tc.status + `">`} {
					if !strings.Contains(body, want) {
						t.Errorf("%s: the page lacks %q:\n%s", tc.name, want, body)
					}
				}
				if tc.status == "stale" && !strings.Contains(body, `<span class="label">nightly-export</span>`) {
					t.Errorf("%s: the stale holder is not shown:\n%s", tc.name, body)
				}
			case "json":
				var p pageJSON
				decode(t, body, &p)
				w := p.Locks[1]
				if w.HoldersStatus != tc.status || !strings.Contains(w.HoldersError, "did not answer in time") {
					t.Errorf("%s: waiting lock %+v", tc.name, w)
				}
				if tc.status == "stale" && (len(w.WaitsFor) != 1 || w.HoldersRead == nil || time.Since(*w.HoldersRead) < time.Second) {
					t.Errorf("%s: stale holders %+v", tc.name, w)
				}
			}
		}
	}

	// Once ZooKeeper answers again, so does the page, with fresh holders.
	proxy.Blackhole(false)
	waitFor(t, "fresh holders after the stall", func() bool {
		p := getJSON(t, cold.URL)
		return p.Locks[1].HoldersStatus == "fresh" && len(p.Locks[1].WaitsFor) == 1 &&
			p.Locks[1].WaitsFor[0].Session == session(other.SessionID())
	})
}

func sep(url string) string {
	if strings.Contains(url, "?") {
		return "&"
	}
	return "?"
}
