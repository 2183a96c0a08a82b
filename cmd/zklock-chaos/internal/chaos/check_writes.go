package chaos

import (
	"cmp"
	"fmt"
	"sort"
)

// checkWrites verifies, per resource, that accepted writes of different
// leases never interleave in the store's order (what fencing promises) and
// classifies every write the store's fence refused. (A fenced write
// accepted below an earlier token is checkStaleCommitted's.)
func (c *checker) checkWrites() {
	r := c.rep
	type state struct {
		cur    leaseKey
		curTok int64
		done   map[leaseKey]bool
	}
	states := map[string]*state{}
	accepted := map[string][]Event{} // by resource; complete before the first refusal
	for _, w := range c.writes {
		e := w.Event
		k := leaseKey{e.Proc, e.Op, e.Resource}
		l := c.leases[k]
		if !e.Accepted {
			if w.refused() {
				r.Writes.Rejected++
				c.classifyStale(e, l, accepted[e.Resource])
			}
			continue
		}
		r.Writes.Accepted++
		accepted[e.Resource] = append(accepted[e.Resource], e)
		if c.kindOf(e.Resource) != "x" {
			continue // checkSharedWrites
		}
		s := states[e.Resource]
		if s == nil {
			s = &state{done: map[leaseKey]bool{}}
			states[e.Resource] = s
		}
		if s.cur != k {
			if s.done[k] {
				c.violation(VOverlap, e.Resource, fmt.Sprintf("%v (token %#x) wrote again after %v (token %#x) had written: their critical sections overlap and both writes were accepted",
					k, e.Token, s.cur, s.curTok), e.T, e.T, k, s.cur)
			}
			if s.cur != (leaseKey{}) {
				s.done[s.cur] = true
			}
			s.cur, s.curTok = k, e.Token
		}
		if l != nil {
			if next := c.next(l); next != nil && e.T > next.acquired {
				// Accepted although the next holder had acquired: it was
				// ordered before all of the next holder's writes.
				r.Stale.AcceptedBeforeNext++
			}
		}
	}
}

// classifyStale explains a refused write: its writer had been paused, or
// had already been told its lease was lost. Otherwise a holder in good
// standing was fenced off: someone else held the lock at the same time.
// accepted are the accepted writes of e's resource.
func (c *checker) classifyStale(e Event, l *leaseRec, accepted []Event) {
	r := c.rep
	r.Stale.Rejected++
	switch {
	case l == nil:
		c.violation(VGoodStanding, e.Resource, fmt.Sprintf("write of unknown lease %v refused", leaseKey{e.Proc, e.Op, e.Resource}), e.T, e.T)
	case c.deletedBy(l, e.T) != nil:
		// its node was deleted by the operator: the next holder may be in
		// before the holder hears of it (checkOpDeletes bounds how long)
		r.Stale.RejectedAfterDelete++
	case c.pausedDuring(l.key.proc, l.acquired, e.T):
		// stopped at some point between its acquire and the store's
		// receipt of the write (perhaps in the middle of sending it)
		r.Stale.RejectedPaused++
	case l.lost != 0 && l.lost <= e.Sent:
		r.Stale.RejectedAfterLoss++
	case l.lost != 0 && l.lost <= c.refusableFrom(e, accepted):
		// sent in good standing, refused after its writer was told of
		// its loss: a write in transit across the loss, fencing's to
		// refuse (whether the signal came before the next holder is
		// late-loss-signal's to judge)
		r.Stale.RejectedAfterLoss++
		r.Stale.RejectedInTransit++
	default:
		c.violation(VGoodStanding, e.Resource, fmt.Sprintf("%v (token %#x) was neither paused nor told of loss, yet the store had seen token %#x",
			l.key, e.Token, e.Max), l.acquired, e.T, l.key)
	}
}

// refusableFrom returns the moment from which a loss told to e's writer
// explains the refusal of e. For a store that refuses below a token it
// is the earliest moment the store could have refused e
// (tokenRefusableFrom). ZooKeeper refuses a write when its lease's node
// is gone, which no other write tells, so there it is the moment the
// refusal was answered: the refusal says the node was gone, and a holder
// told of its loss by then had been told its node might go (zklock tells
// it before the session can expire; whether before the next holder came
// in is checkHandOffs' late-loss-signal to judge). A holder told nothing
// by then (not paused, its node not deleted by the operator) had its node
// taken without a word: in good standing.
func (c *checker) refusableFrom(e Event, accepted []Event) int64 {
	if c.zk {
		return e.T
	}
	return tokenRefusableFrom(e, accepted)
}

// tokenRefusableFrom returns the earliest moment a store that refuses
// below a token could have refused write e, given the accepted writes of
// e's resource. That is no earlier than the call to the store (e.Called;
// e.T in histories without it), and no earlier than the first write that
// could have raised the fence to
// e's token or above: an accepted write of another lease on e's
// resource, with a token at least e's, whose own call began before e was
// answered. The earliest of those calls bounds the refusal from below,
// whichever of them raised the fence. The refusal itself proves such a
// write. In a database, e's transaction may have begun long before it
// (waiting for a connection or for the fence's row) while the next holder
// came in and wrote.
//
// A loss told by that moment was told before the refusal, whatever the
// store's timing: the write was in transit across the loss. A loss told
// later is not excused. A loss told after the next holder acquired is
// checkHandOffs' late-loss-signal, whatever this says. Without such a
// write the refusal is unexplained (checkStoreHistory's to judge) and the
// bound is the call.
func tokenRefusableFrom(e Event, accepted []Event) int64 {
	from := cmp.Or(e.Called, e.T)
	first := int64(0)
	for _, w := range accepted {
		if w.Token < e.Token || w.Proc == e.Proc && w.Op == e.Op {
			continue
		}
		if call := cmp.Or(w.Called, w.T); call <= e.T && (first == 0 || call < first) {
			first = call
		}
	}
	return max(from, first)
}

// next returns the lease granted after l on its resource.
func (c *checker) next(l *leaseRec) *leaseRec {
	ls := c.byRes[l.resource]
	i := sort.Search(len(ls), func(i int) bool { return ls[i].token > l.token })
	if i < len(ls) {
		return ls[i]
	}
	return nil
}
