package zklock

import "time"

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
