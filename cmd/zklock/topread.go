package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
)

// DefaultTopMaxReads is how many ZooKeeper reads one refresh of "zklock
// top" makes at most, unless --max-reads says otherwise.
const DefaultTopMaxReads = 500

// TopMinRefresh is the shortest time between two refreshes of "zklock
// top": however often its watches fire, it refreshes at most
// 1/TopMinRefresh times a second, so it makes at most --max-reads /
// TopMinRefresh reads a second.
const TopMinRefresh = 200 * time.Millisecond

// TopMaxWatches is how many ZooKeeper watches "zklock top" keeps at most:
// one on the root and, in the order it reads them (hottest first), on
// queues. A change in a queue it does not watch shows at the next
// refresh.
const TopMaxWatches = 100

// TopReads is what one refresh of "zklock top" costs ZooKeeper, in reads,
// for the queues it reads, given as their node counts: one listing of the
// root, then for each queue a listing (which also sets its watch) and an
// inspection (a listing and one read of each node's data): 1 + Σ (2 + n).
// A queue listed but left uninspected, because its inspection would pass
// the --max-reads budget, costs its one listing.
func TopReads(nodes ...int) int {
	reads := 1
	for _, n := range nodes {
		reads += 2 + n
	}
	return reads
}

// topRow is one resource as a refresh of top read it.
type topRow struct {
	resource string
	path     string
	nodes    int           // children of its queue at top's listing
	queue    *zklock.Queue // nil when not inspected: over the read budget
}

// waiting is the number of waiters, or for a queue not inspected the
// number an exclusive lock would have (all nodes but one).
func (r topRow) waiting() int {
	if r.queue == nil {
		return r.nodes - 1
	}
	return len(r.queue.Waiters())
}

// longestWait is the age of the oldest waiting node (the first waiter in
// queue order), or 0.
func (r topRow) longestWait(now time.Time) time.Duration {
	if r.queue == nil {
		return 0
	}
	return firstAge(r.queue.Waiters(), now)
}

// held is the age of the first holder's node (its wait included:
// ZooKeeper records when a node was made, not when it began to hold), or
// 0.
func (r topRow) held(now time.Time) time.Duration {
	if r.queue == nil {
		return 0
	}
	return firstAge(r.queue.Holders(), now)
}

// firstAge is how long before now the first of nodes was made (0 for
// none, or for a server clock ahead of this host's).
func firstAge(nodes []zklock.QueueNode, now time.Time) time.Duration {
	if len(nodes) == 0 {
		return 0
	}
	return max(0, now.Sub(nodes[0].Created))
}

// topSnapshot is what one refresh read.
type topSnapshot struct {
	time   time.Time
	total  int      // resources under the prefix (the root's matching children)
	rows   []topRow // the resources read that are in use
	empty  int      // resources read whose queue was empty
	unread int      // resources not read: the budget ran out
	reads  int      // ZooKeeper reads made (TopReads of the queues read)
}

// topReader reads the hottest queues under a prefix, refresh after
// refresh, within a budget of reads per refresh.
type topReader struct {
	c        *zklock.Client
	watches  *watches
	prefix   string
	maxReads int
	timeout  time.Duration

	// busy are the resources in use at the last refresh, hottest first:
	// read first at the next one. next is where the next refresh resumes
	// reading the others, in name order, when the budget did not cover
	// them all.
	busy []string
	next string
}

// refresh lists the resources under the prefix and reads their queues
// until the budget of reads is spent (in the order explained below); it
// sorts what it read by key.
func (r *topReader) refresh(ctx context.Context, key topSort) (*topSnapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	s := &topSnapshot{time: time.Now()}
	root := r.c.Root()
	names, err := r.watches.children(ctx, root)
	s.reads++
	if err != nil && !errors.Is(err, zk.ErrNoNode) { // no root: nothing locked yet
		return nil, opError(err, r.timeout)
	}
	var resources []string
	for _, n := range names {
		if res, ok := zklock.UnescapeResource(n); ok && strings.HasPrefix(res, r.prefix) {
			resources = append(resources, res)
		}
	}
	slices.Sort(resources)
	s.total = len(resources)
	// Half the budget goes to the resources in use at the last refresh,
	// hottest first; then the others in turn, from where the last refresh
	// stopped, so that none waits for ever behind busy ones; then what is
	// left to the rest of the busy ones.
	hot, others := r.order(resources)
	r.next = ""
	spend := func(list []string, limit int) (rest []string, err error) {
		for i, res := range list {
			if s.reads >= limit {
				return list[i:], nil
			}
			if err := r.read(ctx, s, res); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	later, err := spend(hot, r.maxReads/2)
	if err != nil {
		return nil, err
	}
	unread, err := spend(others, r.maxReads)
	if err != nil {
		return nil, err
	}
	if len(unread) > 0 {
		r.next = unread[0]
	}
	if later, err = spend(later, r.maxReads); err != nil {
		return nil, err
	}
	s.unread = len(unread) + len(later)
	sortRows(s.rows, key, s.time)
	r.busy = r.busy[:0]
	for _, row := range s.rows {
		r.busy = append(r.busy, row.resource)
	}
	return s, nil
}

// read lists the queue of res and, when its inspection fits in the
// budget, inspects it; it adds what it found to s.
func (r *topReader) read(ctx context.Context, s *topSnapshot, res string) error {
	path := r.c.Root() + "/" + zklock.EscapeResource(res)
	kids, err := r.watches.children(ctx, path)
	s.reads++
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil // gone since the root's listing
	case err != nil:
		return opError(err, r.timeout)
	case len(kids) == 0:
		s.empty++
		return nil
	}
	row := topRow{resource: res, path: path, nodes: len(kids)}
	if cost := TopReads(len(kids)) - 2; s.reads+cost <= r.maxReads {
		q, err := r.c.Inspect(ctx, res)
		s.reads += cost
		if err != nil {
			return opError(err, r.timeout)
		}
		if emptyQueue(q) {
			s.empty++
			return nil
		}
		row.queue = q
	}
	s.rows = append(s.rows, row)
	return nil
}

// order splits the resources into those in use at the last refresh,
// hottest first, and the others, in name order from r.next on, wrapping
// around.
func (r *topReader) order(resources []string) (hot, others []string) {
	busy := map[string]bool{}
	for _, b := range r.busy {
		if _, ok := slices.BinarySearch(resources, b); ok {
			hot = append(hot, b)
			busy[b] = true
		}
	}
	start, _ := slices.BinarySearch(resources, r.next)
	for k := range resources {
		if res := resources[(start+k)%len(resources)]; !busy[res] {
			others = append(others, res)
		}
	}
	return hot, others
}
