package zkdebug

import (
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// estimate fills in a waiting lock's estimated wait: its turns times the
// resource's recent hold-time median (zklock.QueueNode.EstimatedWait).
// The turns and the deadline come from the queue as the page read it
// (h, when ok and it shows the node waiting); without it, an exclusive lock's
// turns are its position, and other modes' are unknown. The median is
// the one the queue's nodes report (zklock.Queue.HoldMedian) or, when
// none does, this client's own (zklock.LocalLock.HoldMedian).
func (v *lockView) estimate(l zklock.LocalLock, h holders, ok bool, now time.Time) {
	n := zklock.QueueNode{Path: l.Path, Turns: l.Position}
	known := l.Mode == zklock.Exclusive
	hold, source := l.HoldMedian, "this client"
	if ok && h.q != nil {
		for _, qn := range h.q.Nodes {
			if qn.Path == l.Path && !qn.Holder { // an older read may show it holding: the client knows better
				n, known = qn, true
			}
		}
		if m := h.q.HoldMedian(); m > 0 {
			hold, source = m, "reports"
		}
	}
	if d := n.Owner.Deadline; !d.IsZero() {
		d = d.UTC()
		v.Deadline = &d
	}
	if hold > 0 {
		s := hold.Seconds()
		v.HoldP50Seconds, v.HoldSource = &s, source
	}
	if !known {
		return
	}
	turns := n.Turns
	v.Turns = &turns
	if w, ok := n.EstimatedWait(hold); ok {
		s := w.Seconds()
		v.EstimatedWaitSeconds, v.wait = &s, w
		v.GivesUpFirst = n.GivesUpFirst(now, hold)
	}
}

// TurnIn is a waiting lock's estimated wait, for people: "≈1.5s"; "?"
// when unknown; "-" for a held lock.
func (l lockView) TurnIn() string {
	switch {
	case l.State == "held":
		return "-"
	case l.EstimatedWaitSeconds == nil:
		return "?"
	}
	return "≈" + formatAge(l.wait)
}

// DeadlineIn says how long until a waiting lock's acquire gives up, if it
// has a deadline: "gives up in 2s"; "" when none or held.
func (l lockView) DeadlineIn() string {
	if l.Deadline == nil || l.State == "held" {
		return ""
	}
	return "gives up in " + formatAge(max(time.Until(*l.Deadline), 0))
}
