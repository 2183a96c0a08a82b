package main

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// TestShowAndWatchEstimates: show and watch --json estimate each
// waiter's wait from the holder's reported hold-time median, name the
// waiters' deadlines, and flag the waiter whose deadline falls before its
// turn. The holder held the resource twice for 1.5s before holding it
// now (so its node reports a median of 1.5s); the first waiter waits up to a minute (MaxWait), the second until
// its context's deadline, 2.8s after it queued: its turn, the second,
// comes in about 3s.
func TestShowAndWatchEstimates(t *testing.T) {
	const hold = 1500 * time.Millisecond
	root := zktest.UniqueRoot(t)
	ctx := context.Background()
	holder := client(t, root, zklock.WithLabel("holder"))
	for range 2 {
		l, err := holder.Acquire(ctx, "est")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(hold)
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	l, err := holder.Acquire(ctx, "est")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release(ctx) })
	queue := func(label string, wctx context.Context, cancel context.CancelFunc, opts ...zklock.AcquireOption) {
		t.Cleanup(cancel)
		c := client(t, root, zklock.WithLabel(label))
		n := queueLen(t, holder, "est")
		go func() {
			if l, err := c.Acquire(wctx, "est", opts...); err == nil {
				l.Release(ctx)
			}
		}()
		eventually(t, label+" queued", func() bool { return queueLen(t, holder, "est") == n+1 })
	}
	queued := time.Now()
	wctx, cancel := context.WithCancel(ctx)
	queue("patient", wctx, cancel, zklock.MaxWait(time.Minute))
	wctx, cancel = context.WithTimeout(ctx, 2800*time.Millisecond)
	queue("hasty", wctx, cancel)

	r := zkl(t, nil, "show", "--root", root, "--json", "est")
	if time.Since(queued) > 2800*time.Millisecond {
		t.Fatalf("show took until %v after the hasty waiter queued: past its deadline", time.Since(queued))
	}
	var q struct {
		HoldP50Seconds *float64 `json:"hold_p50_seconds"`
		Nodes          []struct {
			Label                string
			Turns                int
			Deadline             *time.Time
			HoldP50Seconds       *float64 `json:"hold_p50_seconds"`
			EstimatedWaitSeconds *float64 `json:"estimated_wait_seconds"`
			GivesUpFirst         bool     `json:"gives_up_first"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &q); r.code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s %s", r.code, err, r.stdout, r.stderr)
	}
	if q.HoldP50Seconds == nil || *q.HoldP50Seconds < hold.Seconds() || *q.HoldP50Seconds > 3*hold.Seconds() || len(q.Nodes) != 3 {
		t.Fatalf("show --json: %s", r.stdout)
	}
	m := *q.HoldP50Seconds
	for i, want := range []struct {
		label        string
		deadline     bool
		givesUpFirst bool
	}{{"holder", false, false}, {"patient", true, false}, {"hasty", true, true}} {
		n := q.Nodes[i]
		if n.Label != want.label || n.Turns != i || n.EstimatedWaitSeconds == nil || math.Abs(*n.EstimatedWaitSeconds-float64(i)*m) > 1e-6 ||
			(n.Deadline != nil) != want.deadline || n.GivesUpFirst != want.givesUpFirst {
			t.Errorf("node %d: %+v; want %+v, %d turns", i, n, want, i)
		}
	}
	if q.Nodes[0].HoldP50Seconds == nil || q.Nodes[1].HoldP50Seconds != nil {
		t.Errorf("the holder's report %v, the first waiter's %v: want a report from the holder only", q.Nodes[0].HoldP50Seconds, q.Nodes[1].HoldP50Seconds)
	}

	r = zkl(t, nil, "show", "--root", root, "est")
	if r.code != 0 || !strings.Contains(r.stdout, "hold p50  ") || !strings.Contains(r.stdout, "(reported by 1 node)") ||
		!strings.Contains(r.stdout, "WAIT≈") {
		t.Errorf("show:\n%s", r.stdout)
	}

	r = zkl(t, nil, "watch", "--root", root, "--for", "500ms", "--json", "est")
	var source string
	var estimates []float64
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var e struct {
			Event                string
			EstimatedWaitSeconds *float64 `json:"estimated_wait_seconds"`
			HoldSource           string   `json:"hold_source"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Event == "queue":
			source = e.HoldSource
		case e.EstimatedWaitSeconds != nil:
			estimates = append(estimates, *e.EstimatedWaitSeconds)
		}
	}
	if source != "reports" || len(estimates) != 3 || estimates[2] <= estimates[1] {
		t.Errorf("watch --json: source %q, estimates %v:\n%s", source, estimates, r.stdout)
	}
}

// TestWatchedHolds: with no report in the queue, watch estimates from the
// holds it saw, from a read showing the acquire to one showing the
// release; a holder there when the watch began counts for nothing.
func TestWatchedHolds(t *testing.T) {
	node := func(name string, holder bool, turns int) zklock.QueueNode {
		return zklock.QueueNode{Name: name, Path: "/q/" + name, Holder: holder, Turns: turns}
	}
	t0 := time.Now()
	w := &watcher{}
	for i, q := range []*zklock.Queue{
		{Nodes: []zklock.QueueNode{node("a", true, 0), node("b", false, 1), node("c", false, 2)}},
		{Nodes: []zklock.QueueNode{node("b", true, 0), node("c", false, 1)}}, // a's start was unknown
		{Nodes: []zklock.QueueNode{node("c", true, 0)}},                      // b held 2s
	} {
		w.holds.read(q, t0.Add(time.Duration(2*i)*time.Second))
		w.estimateFrom(q)
	}
	if w.hold != 2*time.Second || w.holdSource != "watched" || w.holds.text() != "from 1 hold this watch saw" {
		t.Fatalf("hold %v from %q (%s); want 2s watched", w.hold, w.holdSource, w.holds.text())
	}
	reported := &zklock.Queue{Nodes: []zklock.QueueNode{{Holder: true, Owner: zklock.Owner{HoldMedian: time.Second}}}}
	if w.estimateFrom(reported); w.hold != time.Second || w.holdSource != "reports" {
		t.Fatalf("with a report: %v from %q; want the report", w.hold, w.holdSource)
	}
}
