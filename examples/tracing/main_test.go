package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// The demo runs against a real ZooKeeper and prints the queue: the first
// worker's lock taken at once (a hold span only), positions 1..3 and a
// hand-off for each waiter, one busy try, and the metrics.
func TestDemo(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		dsn := "zk://" + zktest.Shared().Addr() + zktest.UniqueRoot(t)
		err := run(ctx, &out, dsn, "accounts/42", 4, 10*time.Millisecond, asJSON)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		got := out.String()
		var want []string
		if asJSON {
			want = []string{`"Name": "zklock.acquire"`, `"Name": "zklock.hold"`, `"Name": "transfer-batch"`,
				`"Key": "zklock.queue.position"`, `"Value": "busy"`}
		} else {
			want = []string{"transfer-batch", "└─ try-once",
				// The first worker takes the lock at once: its hold span
				// is its only span and says so.
				"zklock.hold accounts/42 queue.position=0 outcome=acquired", "queue.position=1 outcome=acquired",
				"queue.position=2 outcome=acquired", "queue.position=3 outcome=acquired",
				"queue.position=4 outcome=busy", "ERROR: ",
				"zklock.acquire.duration{lock.kind=exclusive,outcome=acquired,resource.class=accounts/{id}} count=4",
				"zklock.hold.active{lock.kind=exclusive,resource.class=accounts/{id}} 0"}
			if n := strings.Count(got, "· zklock.position queue.position=0"); n != 3 {
				t.Errorf("%d hand-off events, want 3", n)
			}
			if n, m := strings.Count(got, "zklock.acquire "), strings.Count(got, "(linked to its acquire)"); n != 4 || m != 3 {
				t.Errorf("%d acquire spans and %d linked hold spans, want 4 (three waiters, one try) and 3", n, m)
			}
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("output lacks %q:\n%s", w, got)
			}
		}
	}
}
