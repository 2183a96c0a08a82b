package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/internal/duration"
	"github.com/zklockkit/zklockkit/zklock"
)

// DefaultTopInterval is how long "zklock top" waits at most between two
// refreshes when no watch fires.
const DefaultTopInterval = 2 * time.Second

var topCommand = &command{
	name:         "top",
	args:         "[PREFIX]",
	summary:      "live view of the most contended resources across hosts: waiters, longest wait, holder, hold age",
	interspersed: true,
	help: fmt.Sprintf(`
Top shows the resources under the root (names starting with PREFIX) whose
locks are the most contended, across every process and host that locks
them: it reads ZooKeeper, not one process. Per resource: how many hold and
wait, the longest wait (the age of the oldest waiting node), HELD (the age
of the first holder's node: its wait included, since ZooKeeper records
when a node was made, not when it began to hold), and who holds it
(label, host, pid). Empty queues are not shown. A semaphore's holders past
the first count as waiting: top cannot know its limit (show --limit N can).

On a terminal it is a live view. It refreshes when a ZooKeeper watch sees
a change, and at least every --interval. It watches the root's list of
resources and up to %d queues at a time, set as it reads them (hottest
first). Keys: w sorts by waiters, l by longest wait, h by hold age; q or
Ctrl-C quits and gives the terminal back as it was. When stdout
is not a terminal it prints one table per refresh, headed by the time and
the refresh's cost; --once prints one and exits. --json prints one JSON
object per refresh, each on one line (docs/operations.md lists its fields).

Cost on ZooKeeper: a refresh makes 1 + Σ(2 + n) reads over the queues in
use it reads, n being a queue's nodes: one listing of the root, and per
queue a listing (which also sets its watch) and an inspection (a listing
and one read of each node's data); an empty queue costs its listing. N
queues of n nodes cost 1 + N×(2 + n). A refresh never makes more than
--max-reads reads (default %d). Half of them go first to the resources in
use at the last refresh, hottest first; then the others are read in turn,
from where the last refresh stopped, so that every resource is read within
a few refreshes; what is left goes to the rest of the busy ones. A queue
whose inspection would pass the cap shows its node count only, and the
header counts what was not read. Refreshes are at least %v apart (at most
%d a second), however often the watches fire.

Examples:
  zklock top
  zklock top billing/ --sort longest
  zklock top --once --json | jq -r '.resources[] | "\(.resource) \(.waiting)"'`,
		TopMaxWatches-1, DefaultTopMaxReads, TopMinRefresh, int(time.Second/TopMinRefresh)),
	setup: func(fs *flag.FlagSet, cf *connFlags) func(*env, []string) error {
		o := &topOpts{cf: cf}
		sortName := fs.String("sort", sortWaiters.String(), "order rows by `key`: "+topSortNames())
		duration.Var(fs, &o.interval, "interval", DefaultTopInterval, "refresh at least this often (`duration`)")
		duration.Var(fs, &o.forDur, "for", 0, "stop after this `duration` (default: until q, Ctrl-C or a signal)")
		fs.IntVar(&o.maxReads, "max-reads", DefaultTopMaxReads, "make at most `N` ZooKeeper reads per refresh")
		fs.BoolVar(&o.once, "once", false, "print one refresh and exit")
		fs.BoolVar(&o.json, "json", false, "print one JSON object per refresh, one per line")
		return func(e *env, args []string) error {
			key, ok := parseTopSort(*sortName)
			switch {
			case len(args) > 1:
				return usageErrorf("top", "at most one PREFIX expected, got %d arguments: %q", len(args), args)
			case !ok:
				return usageErrorf("top", "bad --sort %q: one of %s", *sortName, topSortNames())
			case o.interval < TopMinRefresh:
				return usageErrorf("top", "bad --interval %v: must be at least %v", o.interval, TopMinRefresh)
			case o.forDur < 0:
				return usageErrorf("top", "bad --for %v: must not be negative", o.forDur)
			case o.once && o.forDur > 0:
				return usageErrorf("top", "--once and --for exclude each other")
			case o.maxReads < 2:
				return usageErrorf("top", "bad --max-reads %d: must be at least 2 (the root's listing and one queue's)", o.maxReads)
			}
			if len(args) == 1 {
				o.prefix = args[0]
			}
			o.key = key
			return o.run(e)
		}
	},
}

// topOpts are the flags of "zklock top", and its state while it runs.
type topOpts struct {
	cf       *connFlags
	prefix   string
	root     string
	interval time.Duration
	forDur   time.Duration
	maxReads int
	once     bool
	json     bool
	key      topSort

	e    *env
	live *liveTerminal // nil unless a live view
	last *topSnapshot  // the last refresh that succeeded
	errs retryErrors
}

func (o *topOpts) run(e *env) error {
	o.e = e
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if o.forDur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.forDur)
		defer cancel()
	}
	c, err := o.cf.open(ctx, "top")
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted or --for passed while connecting
		}
		return err
	}
	defer c.Close()
	o.root = c.Root()
	w := newWatches(ctx, c.Conn())
	w.limit = TopMaxWatches
	r := &topReader{c: c, watches: w, prefix: o.prefix, maxReads: o.maxReads, timeout: o.cf.connectTimeout}
	var keys <-chan byte
	if !o.once && !o.json && isTerminal(e.stdout) {
		if o.live, err = openLive(e.stdin, e.stdout); err != nil {
			return fmt.Errorf("cannot take over the terminal: %w", err)
		}
		defer o.live.restore()
		ctx, keys = quitKeys(ctx, o.live.keys)
	}
	return o.loop(ctx, r, keys)
}

// quitKeys returns a context that ends when q or Ctrl-C is typed, at
// once, even in the middle of a refresh, and the other keys.
func quitKeys(ctx context.Context, typed <-chan byte) (context.Context, <-chan byte) {
	ctx, quit := context.WithCancel(ctx)
	keys := make(chan byte, 16)
	go func() {
		for k := range typed {
			if k == 'q' || k == 'Q' || k == 3 { // 3: Ctrl-C, a byte in raw mode
				quit()
				return
			}
			select {
			case keys <- k:
			default:
			}
		}
	}()
	return ctx, keys
}

// loop refreshes until q, a signal, --for or --once ends it; keys are the
// keys typed on the live view (nil otherwise).
func (o *topOpts) loop(ctx context.Context, r *topReader, keys <-chan byte) error {
	resized := make(chan os.Signal, 1)
	if o.live != nil {
		signal.Notify(resized, syscall.SIGWINCH)
		defer signal.Stop(resized)
	}
	for {
		started := time.Now()
		s, err := r.refresh(ctx, o.key)
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case err != nil && (o.once || errors.Is(err, zklock.ErrClosed)):
			return err
		case err != nil && o.live != nil:
			o.draw(err)
		case err != nil:
			o.errs.report(o.e.stderr, "top", err)
		default:
			o.last = s
			o.errs.reset()
			if err := o.print(); err != nil {
				return err // stdout is gone (a closed pipe)
			}
		}
		if o.once {
			return nil
		}
		// Wait for the interval, or a watch (then no sooner than
		// TopMinRefresh after this refresh began); keys meanwhile.
		interval := time.NewTimer(o.interval)
		changed := r.watches.changed
		var soon <-chan time.Time
	wait:
		for {
			select {
			case <-ctx.Done():
				interval.Stop()
				return nil
			case <-interval.C:
				break wait
			case <-changed:
				changed = nil
				soon = time.After(time.Until(started.Add(TopMinRefresh)))
			case <-soon:
				interval.Stop()
				break wait
			case <-resized:
				o.draw(nil) // fitted to the new size
			case k := <-keys:
				if key, ok := sortKey(k); ok && key != o.key {
					o.key = key
					o.draw(nil) // the same reads in another order: no new reads
				}
			}
		}
	}
}

// sortKey returns the order that key k picks on the live view.
func sortKey(k byte) (topSort, bool) {
	for i := range topSorts {
		if s := topSort(i); s.key() == k {
			return s, true
		}
	}
	return 0, false
}

// print writes the last refresh: as JSON, as a live view, or as a table.
func (o *topOpts) print() error {
	switch {
	case o.json:
		b, err := json.Marshal(toTopJSON(o.last, o, o.key))
		if err != nil {
			return err
		}
		_, err = o.e.stdout.Write(append(b, '\n'))
		return err
	case o.live != nil:
		o.draw(nil)
		return nil
	}
	var b bytes.Buffer
	topHeader(&b, o.last, o, o.key)
	fmt.Fprintln(&b)
	_ = writeTopTable(&b, o.last, o.key, -1)
	if !o.once {
		fmt.Fprintln(&b)
	}
	_, err := o.e.stdout.Write(b.Bytes())
	return err
}

// draw redraws the live view: the last refresh fitted to the terminal,
// and err when the latest refresh failed.
func (o *topOpts) draw(err error) {
	rows, cols := o.live.size()
	var b bytes.Buffer
	if o.last != nil {
		topHeader(&b, o.last, o, o.key)
	}
	keys := make([]string, len(topSorts))
	for i, s := range topSorts {
		keys[i] = fmt.Sprintf("%c %s", s.name[0], s.words)
	}
	fmt.Fprintf(&b, "keys: %s; q quit\n", strings.Join(keys, ", "))
	if err != nil {
		fmt.Fprintf(&b, "error: %s (retrying; the table is from the last refresh)\n", errText(err))
	}
	fmt.Fprintln(&b)
	if o.last != nil {
		used := strings.Count(b.String(), "\n") + 1 // the table's header
		_ = writeTopTable(&b, o.last, o.key, max(0, rows-used-1))
	}
	o.live.draw(fit(b.Bytes(), rows, cols))
}

// fit cuts text to the terminal: at most rows lines (the last one without
// its newline, so the screen does not scroll), each at most cols
// characters.
func fit(text []byte, rows, cols int) []byte {
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if len(lines) > rows {
		lines = lines[:rows]
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > cols {
			lines[i] = string(r[:cols])
		}
	}
	return []byte(strings.Join(lines, "\n"))
}
