package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/internal/duration"
	"github.com/zklockkit/zklockkit/zklock"
)

var watchCommand = &command{
	name:         "watch",
	args:         "RESOURCE",
	summary:      "live view of the queue as it changes",
	interspersed: true,
	help: `
Watch follows the queue of RESOURCE until interrupted (Ctrl-C) or until
--for passes. On a terminal it redraws the "zklock show" table whenever the
queue changes (and every --interval, to update ages). When stdout is not a
terminal it prints one line per change instead (with --json, one JSON object
per line, on a terminal too):

  15:04:05.120  holds     pos 0  exclusive  worker-3 (box-1, pid 27461)  token 23  node _c_...-lock-0000000003
  15:04:05.121  waiting   pos 1  exclusive  worker-4 (box-1, pid 27462)  token 24  node _c_...-lock-0000000004
  15:04:05.121  queue     1 holder, 1 waiting
  15:04:05.470  released  pos 0  exclusive  worker-3 (box-1, pid 27461)  token 23  node _c_...-lock-0000000003
  15:04:05.470  acquired  pos 0  exclusive  worker-4 (box-1, pid 27462)  token 24  node _c_...-lock-0000000004
  15:04:05.470  queue     1 holder, 0 waiting

Events: holds and waiting (already there when watch started, or newly
queued), acquired, released (a holder's node went), left (a waiter gave up),
and a queue line after each batch. Changes are seen through a ZooKeeper
watch on the queue, and by reading it every --interval.

With --json each line is an object with "time" (RFC 3339, UTC), "event"
and "resource", then for a node event the fields of "zklock show --json"'s
nodes (position, state, mode, host, pid, label, token, created, session,
node, path, seq, turns, deadline, hold_p50_seconds, estimated_wait_seconds,
gives_up_first), and for a queue line "holders", "waiting",
"hold_p50_seconds" and "hold_source".

A waiter's estimated wait is its turns (its position, in an exclusive
queue) times the resource's recent hold-time median: the median the
queue's nodes report ("hold_source": "reports"), or, when none does, the
median of the holds this watch saw from acquire to release ("watched").

Example:
  zklock watch demo/nightly-report
  zklock watch --for 1h demo/nightly-report >> queue.log
  zklock watch --json demo/nightly-report | jq -c 'select(.event == "acquired")'`,
	setup: func(fs *flag.FlagSet, cf *connFlags) func(*env, []string) error {
		q := registerQueueFlags(fs)
		interval, forDur := new(time.Duration), new(time.Duration)
		duration.Var(fs, interval, "interval", time.Second, "read the queue at least this often (`duration`)")
		duration.Var(fs, forDur, "for", 0, "stop after this `duration` (default: until interrupted)")
		asJSON := fs.Bool("json", false, "print one JSON object per change (JSON Lines) instead of text")
		return func(e *env, args []string) error {
			resource, err := q.resource("watch", args)
			if err != nil {
				return err
			}
			if *interval < 10*time.Millisecond {
				return usageErrorf("watch", "bad --interval %v: must be at least 10ms", *interval)
			}
			if *forDur < 0 {
				return usageErrorf("watch", "bad --for %v: must not be negative", *forDur)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if *forDur > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, *forDur)
				defer cancel()
			}
			c, err := cf.open(ctx, "watch")
			if err != nil {
				if ctx.Err() != nil {
					return nil // interrupted or --for passed while connecting
				}
				return err
			}
			defer c.Close()
			path, err := c.QueuePath(resource, q.options()...)
			if err != nil {
				return err
			}
			w := &watcher{e: e, c: c, q: q, resource: resource, path: path, interval: *interval,
				timeout: cf.connectTimeout, tty: !*asJSON && isTerminal(e.stdout), json: *asJSON, watches: newWatches(ctx, c.Conn())}
			return w.run(ctx)
		}
	},
}

// watcher follows one queue.
type watcher struct {
	e        *env
	c        *zklock.Client
	q        *queueFlags
	resource string
	path     string
	interval time.Duration
	timeout  time.Duration
	tty      bool
	json     bool

	watches *watches
	prev    map[string]zklock.QueueNode // by path; nil before the first read
	errs    retryErrors                 // piped: errors reported, not repeated
	holds   watchedHolds                // hold times seen from acquired to released
	// hold is the hold-time median the waits are estimated from, from
	// the queue's reports or, when none reports, from holds; holdSource
	// says which ("reports", "watched"; "" when unknown).
	hold       time.Duration
	holdSource string
}

func (w *watcher) run(ctx context.Context) error {
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	for {
		w.watches.arm(w.path) // before reading, so no change between the two is missed
		queue, err := w.q.inspect(ctx, w.c, w.resource, w.timeout)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			w.holds.read(queue, time.Now())
			w.estimateFrom(queue)
		}
		switch {
		case errors.Is(err, zklock.ErrClosed):
			return err
		case err != nil && w.tty:
			w.redraw(nil, err)
		case err != nil:
			w.errs.report(w.e.stderr, "watch", err)
		case w.tty:
			w.redraw(queue, nil)
		default:
			w.errs.reset()
			if err := w.printChanges(queue); err != nil {
				return err // stdout is gone (a closed pipe)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-w.watches.changed:
		}
	}
}

// redraw clears the terminal and draws the table (or the error).
func (w *watcher) redraw(queue *zklock.Queue, err error) {
	var b bytes.Buffer
	now := time.Now()
	fmt.Fprintf(&b, "zklock watch %s: every %v and on change; %s (Ctrl-C to stop)\n\n", clean(w.resource), w.interval, now.Format("15:04:05"))
	if err != nil {
		fmt.Fprintf(&b, "error: %s (retrying)\n", errText(err))
	} else {
		source := ""
		if w.holdSource == "watched" {
			source = w.holds.text()
		}
		_ = writeQueue(&b, queue, now, w.hold, source)
	}
	drawFrame(w.e.stdout, b.Bytes(), false)
}

// printChanges prints one line per change since the last read, then a
// summary line; nothing when nothing changed.
func (w *watcher) printChanges(queue *zklock.Queue) error {
	now := time.Now()
	first := w.prev == nil
	cur := make(map[string]zklock.QueueNode, len(queue.Nodes))
	var b bytes.Buffer
	line := w.eventLine
	if w.json {
		line = w.eventJSON
	}
	for _, n := range queue.Nodes {
		cur[n.Path] = n
	}
	// gone first: a release comes before the acquire it causes
	if !first {
		for _, n := range orderedNodes(w.prev) {
			if _, ok := cur[n.Path]; !ok {
				ev := "left"
				if n.Holder {
					ev = "released"
				}
				line(&b, now, ev, n)
			}
		}
	}
	for _, n := range queue.Nodes {
		old, seen := w.prev[n.Path]
		switch {
		case first && n.Holder:
			line(&b, now, "holds", n)
		case !seen && n.Holder, seen && n.Holder && !old.Holder:
			line(&b, now, "acquired", n)
		case !seen:
			line(&b, now, "waiting", n)
		}
	}
	w.prev = cur
	if b.Len() == 0 && !first {
		return nil
	}
	if w.json {
		_ = json.NewEncoder(&b).Encode(queueEventJSON{Time: now.UTC(), Event: "queue", Resource: w.resource,
			Holders: len(queue.Holders()), Waiting: len(queue.Waiters()), HoldP50Seconds: secondsIf(w.hold), HoldSource: w.holdSource})
	} else {
		fmt.Fprintf(&b, "%s  %-8s  %s\n", now.Format("15:04:05.000"), "queue", counts(queue))
	}
	_, err := w.e.stdout.Write(b.Bytes())
	return err
}

func (w *watcher) eventLine(out io.Writer, now time.Time, ev string, n zklock.QueueNode) {
	fmt.Fprintf(out, "%s  %-8s  pos %d  %s  %s  token %d  node %s\n", now.Format("15:04:05.000"), ev, n.Position, n.Mode,
		ownerText(n.Owner), n.Token, clean(n.Name))
}

func (w *watcher) eventJSON(out io.Writer, now time.Time, ev string, n zklock.QueueNode) {
	_ = json.NewEncoder(out).Encode(nodeEventJSON{Time: now.UTC(), Event: ev, Resource: w.resource, nodeJSON: toNodeJSON(n, now, w.hold)})
}

// nodeEventJSON is a node line of "watch --json".
type nodeEventJSON struct {
	Time     time.Time `json:"time"`
	Event    string    `json:"event"`
	Resource string    `json:"resource"`
	nodeJSON
}

// queueEventJSON is a queue line of "watch --json".
type queueEventJSON struct {
	Time     time.Time `json:"time"`
	Event    string    `json:"event"`
	Resource string    `json:"resource"`
	Holders  int       `json:"holders"`
	Waiting  int       `json:"waiting"`
	// HoldP50Seconds is the hold-time median the waits are estimated
	// from; HoldSource says whence: "reports" (the nodes'), "watched"
	// (hand-offs this watch saw), or "" with a null median: unknown.
	HoldP50Seconds *float64 `json:"hold_p50_seconds"`
	HoldSource     string   `json:"hold_source"`
}

func counts(q *zklock.Queue) string {
	h, w := len(q.Holders()), len(q.Waiters())
	if h == 0 && w == 0 {
		return "empty"
	}
	if h == 1 {
		return fmt.Sprintf("1 holder, %d waiting", w)
	}
	return fmt.Sprintf("%d holders, %d waiting", h, w)
}

// orderedNodes returns the nodes of m in queue order.
func orderedNodes(m map[string]zklock.QueueNode) []zklock.QueueNode {
	ns := make([]zklock.QueueNode, 0, len(m))
	for _, n := range m {
		ns = append(ns, n)
	}
	for i := 1; i < len(ns); i++ {
		for j := i; j > 0 && ns[j].Position < ns[j-1].Position; j-- {
			ns[j], ns[j-1] = ns[j-1], ns[j]
		}
	}
	return ns
}
