package dsn

import (
	"testing"
	"time"
)

// Next skips go-zookeeper's one-second wait (retryStart) only for the
// first redial after a connection that lived QuickRedialAfter or more.
func TestHostsQuickRedial(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &Hosts{now: func() time.Time { return now }}
	next := func(want string, wantRetry bool) {
		t.Helper()
		s, retry := h.Next()
		if s != want || retry != wantRetry {
			t.Fatalf("Next() = %q, %v; want %q, %v", s, retry, want, wantRetry)
		}
	}
	if err := h.Init([]string{"a:2181"}); err != nil {
		t.Fatal(err)
	}
	next("a:2181", false) // the first dial
	h.Connected()
	now = now.Add(QuickRedialAfter - time.Millisecond)
	next("a:2181", true) // a short connection: the wait, as go-zookeeper's provider
	next("a:2181", true)
	h.Connected()
	now = now.Add(QuickRedialAfter)
	next("a:2181", false) // a long one: at once
	next("a:2181", true)  // that failed: the wait
	next("a:2181", true)
	h.Connected()
	now = now.Add(time.Hour)
	next("a:2181", false)
	h.Connected() // redialled at once and connected: the next long one too
	now = now.Add(time.Hour)
	next("a:2181", false)

	// With several servers the others are dialled at once anyway; the
	// one of the last connection waits once they all failed.
	if err := h.Init([]string{"a:2181", "b:2181", "c:2181"}); err != nil {
		t.Fatal(err)
	}
	next("a:2181", false)
	h.Connected()
	now = now.Add(time.Hour)
	next("b:2181", false)
	next("c:2181", false)
	next("a:2181", true)
	next("b:2181", false)
}
