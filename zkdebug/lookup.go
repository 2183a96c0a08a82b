package zkdebug

import (
	"context"
	"errors"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// The bounds of the page's look at ZooKeeper (see the package
// documentation, # Holders).
const (
	// DefaultLookupBudget is how long a request for the page waits for
	// ZooKeeper to say who holds the locks this process waits for
	// (WithLookupBudget).
	DefaultLookupBudget = 500 * time.Millisecond
	// DefaultLookupCache is how long the holders read for one page are
	// shown again without asking ZooKeeper anew, when the page is not
	// told to reload itself (with ?refresh=N, for N seconds).
	DefaultLookupCache = 5 * time.Second
	// MaxLookups is the most queues one page reads: the queues of the
	// longest-waiting locks; the others are shown without their holders.
	MaxLookups = 64
	// lookupReadLimit bounds one read of a queue (a Client.Inspect): a
	// read that outlasts the page's budget goes on, for the next page,
	// until then. One read per queue is under way at a time.
	lookupReadLimit = 5 * time.Second
)

// lookup reads the queues of the resources this process waits for, for
// the page, and keeps what it read for a while.
type lookup struct {
	client *zklock.Client
	budget time.Duration

	mu     sync.Mutex
	queues map[string]*queueRead // by queue path
}

// queueRead is the last read of one queue, and the read under way.
type queueRead struct {
	resource string
	opts     []zklock.QueueOption
	q        *zklock.Queue // the last successful read
	at       time.Time     // when q was read
	err      error         // the last read's error, if it failed
	reading  chan struct{} // closed when the read under way ends; nil when none
}

// holders is what the page knows of a waited-for queue.
type holders struct {
	q     *zklock.Queue
	at    time.Time
	fresh bool  // read for this page, or recently enough
	err   error // why it is not fresh (the last read failed, or is still under way)
}

// errStillReading says a read did not end within the page's budget.
var errStillReading = errors.New("ZooKeeper did not answer in time")

// read returns the holders of each queue that locks wait in (at most
// MaxLookups, longest waits first), reading again those older than ttl,
// and waiting for the reads until the budget is spent.
func (lk *lookup) read(locks []zklock.LocalLock, ttl time.Duration, now time.Time) map[string]holders {
	var waiting []zklock.LocalLock
	for _, l := range locks {
		if !l.Held {
			waiting = append(waiting, l)
		}
	}
	if len(waiting) == 0 || lk.budget <= 0 {
		return nil
	}
	slices.SortStableFunc(waiting, func(a, b zklock.LocalLock) int { return a.Since.Compare(b.Since) })
	wanted := map[string]bool{}
	var reads []chan struct{}
	lk.mu.Lock()
	for _, l := range waiting {
		qp := path.Dir(l.Path)
		if wanted[qp] || len(wanted) == MaxLookups {
			continue
		}
		wanted[qp] = true
		r := lk.queues[qp]
		if r == nil {
			opts, err := lk.options(l, qp)
			if err != nil {
				lk.queues[qp] = &queueRead{resource: l.Resource, err: err}
				continue
			}
			r = &queueRead{resource: l.Resource, opts: opts}
			lk.queues[qp] = r
		}
		if r.reading == nil && r.opts != nil && (r.q == nil || now.Sub(r.at) >= ttl) {
			lk.start(qp, r)
		}
		if r.reading != nil {
			reads = append(reads, r.reading)
		}
	}
	for qp, r := range lk.queues {
		if !wanted[qp] && r.reading == nil {
			delete(lk.queues, qp) // no longer waited for
		}
	}
	lk.mu.Unlock()

	timer := time.NewTimer(lk.budget)
	defer timer.Stop()
wait:
	for _, c := range reads {
		select {
		case <-c:
		case <-timer.C:
			break wait
		}
	}

	out := make(map[string]holders, len(wanted))
	lk.mu.Lock()
	defer lk.mu.Unlock()
	for qp := range wanted {
		r := lk.queues[qp]
		h := holders{q: r.q, at: r.at, err: r.err}
		switch {
		case r.reading != nil:
			h.err = errStillReading
		case r.err == nil && r.q != nil:
			h.fresh = true
		}
		out[qp] = h
	}
	return out
}

// options returns the options that read l's queue, qp: RawPath when l was
// locked by its znode path.
func (lk *lookup) options(l zklock.LocalLock, qp string) ([]zklock.QueueOption, error) {
	if p, err := lk.client.QueuePath(l.Resource); err == nil && p == qp {
		return []zklock.QueueOption{}, nil
	}
	if p, err := lk.client.QueuePath(l.Resource, zklock.RawPath()); err == nil && p == qp {
		return []zklock.QueueOption{zklock.RawPath()}, nil
	}
	return nil, errors.New("the lock's queue cannot be named from its resource")
}

// start reads r's queue in the background. lk.mu is held.
func (lk *lookup) start(qp string, r *queueRead) {
	done := make(chan struct{})
	r.reading = done
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), lookupReadLimit)
		q, err := lk.client.Inspect(ctx, r.resource, r.opts...)
		cancel()
		lk.mu.Lock()
		r.reading = nil
		if err != nil {
			r.err = err
		} else {
			r.q, r.at, r.err = q, time.Now(), nil
		}
		lk.mu.Unlock()
		close(done)
	}()
}
