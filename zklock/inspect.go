package zklock

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/layout"
	"github.com/zklockkit/zklockkit/zklock/internal/session"

	"github.com/go-zookeeper/zk"
)

// QueueNode is one node of a resource's queue, as seen by Inspect.
type QueueNode struct {
	Name      string    // znode name
	Path      string    // full znode path
	Seq       int64     // sequence number
	Mode      Mode      // from the node's layout
	Position  int       // nodes ahead of it
	Holder    bool      // it holds the lock now
	Owner     Owner     // decoded owner data; Label holds foreign data as text
	Created   time.Time // node creation time (server clock)
	Token     int64     // czxid: the fencing token of its lease
	SessionID int64     // ephemeral owner
	// Turns is how many times the lock must change hands before the node
	// holds, were each group of holders to leave together: 0 for a
	// holder; a waiter's position in an exclusive queue; in a read/write
	// queue the readers between two writers count as one turn, in a
	// semaphore's the holders Limit at a time. See EstimatedWait.
	Turns int
}

// Queue is a snapshot of one resource's lock queue.
type Queue struct {
	Resource string
	Path     string      // the queue's znode
	Nodes    []QueueNode // in queue order; holders first
	Unknown  []string    // children that match no lock layout
}

// Holders returns the nodes that hold the lock.
func (q *Queue) Holders() []QueueNode {
	var hs []QueueNode
	for _, n := range q.Nodes {
		if n.Holder {
			hs = append(hs, n)
		}
	}
	return hs
}

// Waiters returns the nodes waiting, in order.
func (q *Queue) Waiters() []QueueNode {
	var ws []QueueNode
	for _, n := range q.Nodes {
		if !n.Holder {
			ws = append(ws, n)
		}
	}
	return ws
}

// Inspect reads the queue of resource: holders and ordered waiters with
// their owners and ages. A resource nobody has locked has an empty queue.
// Accepts RawPath, and Limit to tell a semaphore's holders from its waiters.
func (c *Client) Inspect(ctx context.Context, resource string, opts ...QueueOption) (*Queue, error) {
	cfg := newQueueConfig(opts)
	parent, err := c.queuePath(resource, cfg.raw)
	if err != nil {
		return nil, err
	}
	q := &Queue{Resource: resource, Path: parent}
	names, err := session.Call(ctx, func() ([]string, error) {
		n, _, err := c.Conn().Children(parent)
		return n, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return q, nil
	}
	if err != nil {
		return nil, c.mapErr(err)
	}
	kids, unknown := layout.Sort(names)
	q.Unknown = unknown
	nodes := make([]QueueNode, len(kids))
	readErrs := make([]error, len(kids))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32) // requests in flight: go-zookeeper pipelines them
	for i, k := range kids {
		n := &nodes[i]
		*n = QueueNode{Name: k.Name, Path: parent + "/" + k.Name, Seq: k.Seq, Mode: Mode(k.Kind)}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err() // the reads under way end by themselves
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			data, stat, err := c.Conn().Get(n.Path)
			if err != nil {
				readErrs[i] = err
				return
			}
			n.Owner = decodeOwner(data)
			n.Created = time.UnixMilli(stat.Ctime)
			n.Token = stat.Czxid
			n.SessionID = stat.EphemeralOwner
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var live []layout.Child
	for i, n := range nodes {
		switch {
		case readErrs[i] == nil:
		case errors.Is(readErrs[i], zk.ErrNoNode):
			continue // gone since the listing
		default:
			return nil, c.mapErr(readErrs[i])
		}
		n.Position = len(q.Nodes)
		q.Nodes = append(q.Nodes, n)
		live = append(live, kids[i])
	}
	// Decide holders over the nodes that still exist: one released during
	// the reads must not leave its successor looking like a waiter.
	turns := layout.Turns(live, cfg.limit)
	for i := range q.Nodes {
		q.Nodes[i].Holder, _ = layout.Rule(live, i, cfg.limit)
		q.Nodes[i].Turns = turns[i]
	}
	return q, nil
}

// Resources lists the resources under the root whose names start with
// prefix, sorted. Queues created with RawPath are not listed.
func (c *Client) Resources(ctx context.Context, prefix string) ([]string, error) {
	names, err := session.Call(ctx, func() ([]string, error) {
		n, _, err := c.Conn().Children(c.cfg.root)
		return n, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, c.mapErr(err)
	}
	var rs []string
	for _, n := range names {
		if r, ok := UnescapeResource(n); ok && strings.HasPrefix(r, prefix) {
			rs = append(rs, r)
		}
	}
	sort.Strings(rs)
	return rs, nil
}

// Owner is the data zklock stores in each lock node: who created it and,
// for a waiter, what it tells others about its wait. Its JSON is
// Owner.MarshalJSON's.
type Owner struct {
	Host  string
	PID   int
	Label string
	// Deadline is when the acquire that created the node gives up
	// waiting, if it has a deadline (its context's, or MaxWait); zero
	// otherwise.
	Deadline time.Time
	// HoldMedian is the median of how long the client that created the
	// node held the resource, over its last HoldSamples leases of it, as
	// it knew it when it created the node; 0 when it had none.
	HoldMedian time.Duration
}

func decodeOwner(data []byte) Owner {
	var o Owner
	if len(data) > 0 && data[0] == '{' && json.Unmarshal(data, &o) == nil {
		return o
	}
	// Foreign data (Curator stores the host's IP address, kazoo an
	// identifier): show it as text.
	return Owner{Label: strings.ToValidUTF8(string(data), "?")}
}

// MaxValueLen is the largest node data (an election value) accepted:
// ZooKeeper's default packet limit (jute.maxbuffer) is 1 MB, and the request
// carries the path and ACL too.
const MaxValueLen = 1000 * 1000

// HoldMedian returns the resource's recent hold-time median as the
// queue's own nodes report it: the median of the reports
// (Owner.HoldMedian) of the nodes that carry one, holders and waiters
// alike, each client reporting the median of its last HoldSamples leases
// of the resource when it created its node. It is 0 when no node carries
// one: every node was created by a client that had not yet released the
// resource, by Curator or kazoo, or by a zklock older than the report.
func (q *Queue) HoldMedian() time.Duration {
	var ds []time.Duration
	for _, n := range q.Nodes {
		if n.Owner.HoldMedian > 0 {
			ds = append(ds, n.Owner.HoldMedian)
		}
	}
	return medianOf(ds)
}

// EstimatedWait returns how long the node is expected to wait for its
// turn from now: its turns (QueueNode.Turns: its position, in an
// exclusive queue) times hold, the resource's recent hold-time median
// (Queue.HoldMedian, or a history of one's own). A holder waits 0. The
// estimate is unknown (false) when hold is 0. It assumes every holder
// ahead holds for the median from now: it does not subtract how long the
// current holder has held already, so it errs long for a holder about to
// leave and short for one that holds far longer than its median.
func (n QueueNode) EstimatedWait(hold time.Duration) (time.Duration, bool) {
	switch {
	case n.Holder:
		return 0, true
	case hold <= 0:
		return 0, false
	}
	return time.Duration(n.Turns) * hold, true
}

// GivesUpFirst reports whether the node's acquire will give up before its
// turn: it has a deadline (Owner.Deadline) that falls before now plus its
// estimated wait (EstimatedWait with hold). It is false for a holder, a
// node with no deadline, or an unknown estimate.
func (n QueueNode) GivesUpFirst(now time.Time, hold time.Duration) bool {
	w, ok := n.EstimatedWait(hold)
	return ok && !n.Holder && !n.Owner.Deadline.IsZero() && n.Owner.Deadline.Before(now.Add(w))
}
