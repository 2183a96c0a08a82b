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
	for _, w := range c.writes {
		e := w.Event
		k := leaseKey{e.Proc, e.Op, e.Resource}
		l := c.leases[k]
		if !e.Accepted {
			if w.refused() {
				r.Writes.Rejected++
				c.classifyStale(e, l)
			}
			continue
		}
		r.Writes.Accepted++
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
func (c *checker) classifyStale(e Event, l *leaseRec) {
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
	case l.lost != 0 && l.lost <= cmp.Or(e.Called, e.T):
		// sent in good standing, delivered after its writer was told of
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

// next returns the lease granted after l on its resource.
func (c *checker) next(l *leaseRec) *leaseRec {
	ls := c.byRes[l.resource]
	i := sort.Search(len(ls), func(i int) bool { return ls[i].token > l.token })
	if i < len(ls) {
		return ls[i]
	}
	return nil
}
