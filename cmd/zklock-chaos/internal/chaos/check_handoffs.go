package chaos

import (
	"fmt"
	"slices"
)

// checkHandOffs looks at every pair of consecutive leases of a resource:
// the earlier holder must have stopped (released, been told of its loss, or
// died) before the later one acquired. A holder paused at that moment (or
// up to HangGrace before it) is excused, however its lease then ended: it
// could not be told, and fencing must have refused its late writes.
func (c *checker) checkHandOffs() {
	r := c.rep
	for res, all := range c.byRes {
		if c.kindOf(res) != "x" {
			continue // checkSharedHandOffs
		}
		// A part of a multi-resource lease whose token could not be read
		// (its node gone, or unreadable) has no place in the order.
		ls := slices.DeleteFunc(slices.Clone(all), func(l *leaseRec) bool { return l.token == 0 })
		r.Untokened += len(all) - len(ls)
		for i := 0; i+1 < len(ls); i++ {
			a, b := ls[i], ls[i+1]
			if a.key.proc == b.key.proc && a.session == b.session && a.session != 0 {
				r.LaneHandOffs++
			}
			end, how := a.end()
			ended := end != 0 && end <= b.acquired
			if end == 0 {
				end = c.lastT
			}
			excused := !ended && (c.excused(a, b.acquired, end) || c.stoppedAcquiring(b, a.acquired))
			switch {
			case how == "lost" && c.deletedBy(a, b.acquired) != nil:
				// the operator's delete: its notice is checkOpDeletes' figure
			case how == "lost":
				m := float64(b.acquired-a.lost) / 1e6
				kind, fate := c.attribute(a), c.sessionFate(a)
				// A holder stopped in the margin before its signal could
				// not be told sooner: its margin is fencing's, as an
				// excused one's is, on the rows and for the verdict.
				stopped := excused || c.pausedDuring(a.key.proc, a.lost-int64(c.p.SessionTimeout)/4, a.lost)
				if r.addMargin(kind, m, fate, stopped) && fate == fateExpired && !stopped && m < c.lossMarginMS() {
					c.violation(VLossMargin, res, fmt.Sprintf("%v (token %#x) was told of its loss (%s) %.0f ms before %v (token %#x) acquired, its session then expired: the loss margin is %.0f ms",
						a.key, a.token, kind, m, b.key, b.token, c.lossMarginMS()), a.lost, b.acquired, a.key, b.key)
				}
			case how == "died":
				r.KillTakeover.add(float64(b.acquired-a.died)/1e6, false)
			}
			switch {
			case ended, excused:
			case how == "lost":
				c.violation(VLateLoss, res, fmt.Sprintf("%v (token %#x) was told of its loss %.1f ms after %v (token %#x) acquired",
					a.key, a.token, float64(a.lost-b.acquired)/1e6, b.key, b.token), a.acquired, max(a.lost, b.acquired), a.key, b.key)
			default:
				c.violation(VDoubleGrant, res, fmt.Sprintf("%v (token %#x, %s) still held when %v (token %#x) acquired",
					a.key, a.token, how, b.key, b.token), a.acquired, b.acquired, a.key, b.key)
			}
		}
	}
}

// excused reports, and counts, whether holder a, still holding (until end)
// when another lease it excludes was acquired, is fencing's job rather than
// a violation: the operator deleted a's node (its deletion hands the lock
// on and tells a at once, in a race; checkOpDeletes bounds how long a went
// on), or a's process was stopped when (or just before) the other came in,
// so it could neither be told nor act. Fencing refuses their late writes.
func (c *checker) excused(a *leaseRec, acquired, end int64) bool {
	switch {
	case c.deletedBy(a, acquired) != nil:
		c.rep.OperatorOverlaps++
	case c.pausedDuring(a.key.proc, acquired-int64(c.p.HangGrace), end):
		c.rep.PausedOverlaps++
	default:
		return false
	}
	return true
}

// stoppedAcquiring reports, and counts as a paused overlap, whether b's
// process was stopped during b's acquire call when (or up to HangGrace
// before) other, a holder b excludes, was granted: b's grant may then have
// been decided before the stop (its session proven alive, as every grant
// is), and b handed its lease only once it ran again, past its session's
// end, after the other came in. That is a holder stopped while it holds,
// met before the call returned: fencing's job, as excused's. No client can
// check for a stop after its last check (the CI rehearsal of 29 November
// on ef2cb64, seed 1795922635249849546: proc 3, stopped 5.2 s from 10 ms
// into a Downgrade, got its read lease 2 ms after it ran again, 0.7 s
// after proc 2's writer, and was told of the loss 9 ms later; its write
// was refused).
func (c *checker) stoppedAcquiring(b *leaseRec, other int64) bool {
	if b.began == 0 || !c.pausedDuring(b.key.proc, max(b.began, other-int64(c.p.HangGrace)), b.acquired) {
		return false
	}
	c.rep.PausedOverlaps++
	return true
}

// What became of a lost lease's session (sessionFate).
const (
	fateAlive   = "alive"   // it outlived the loss: the client deleted the node itself
	fateExpired = "expired" // ZooKeeper expired it: its expiry let the next holder in
	fateUnknown = "unknown" // the history does not say (its process ended first, say)
)

// sessionFate says what became of the holder's session after the loss of
// l. Alive: the process later shows the same session (an acquire on it,
// its quiescence, or the Client's note that it was verified again).
// Expired: the Client noted it replaced by a new session
// (OutcomeSessionReplaced), or, for a lease of the worker's own Client,
// which is its only session outside the load, the process later shows a
// new session there.
func (c *checker) sessionFate(l *leaseRec) string {
	if l.session == 0 {
		return fateUnknown
	}
	replaced := false
	for _, e := range c.sessions[l.key.proc] {
		switch {
		case e.T <= l.lost || e.Session == 0:
		case e.Session == l.session:
			return fateAlive
		case l.detail != "load" && e.Detail != "load":
			replaced = true
		}
	}
	for _, e := range c.fates[l.session] {
		switch {
		case e.Outcome == OutcomeSessionVerified && e.T > l.lost:
			return fateAlive
		case e.Outcome == OutcomeSessionReplaced:
			replaced = true
		}
	}
	if replaced {
		return fateExpired
	}
	return fateUnknown
}

// lossMarginMS is the loss margin the campaign's clients use, in ms:
// zklock's default, a quarter of the session timeout.
func (c *checker) lossMarginMS() float64 { return float64(c.p.SessionTimeout) / 4 / 1e6 }

// attribute names the fault a loss is blamed on: a fault on the holder's
// own process or links first, else a server fault, active when the loss
// was signalled or ended at most two session timeouts before.
func (c *checker) attribute(l *leaseRec) string {
	var own, server *faultRec
	slack := 2 * int64(c.p.SessionTimeout)
	for _, f := range c.faults {
		if f.start > l.lost || f.end+slack < l.lost {
			continue
		}
		switch {
		case f.proc == l.key.proc && (own == nil || f.start > own.start):
			own = f
		case slices.Contains(f.stuck, l.key.proc) && (own == nil || f.start > own.start):
			own = f
		case f.kind.Server() && (server == nil || f.start > server.start):
			server = f
		}
	}
	switch {
	case own != nil && own.kind.Partition():
		return string(own.kind) + "/minority"
	case own != nil:
		return string(own.kind)
	case server != nil && server.kind.Partition():
		// which side the holder's session was on when told of the loss
		if slices.Contains(server.cut, l.lostServer) {
			return string(server.kind) + "/minority"
		}
		return string(server.kind) + "/majority"
	case server != nil:
		return string(server.kind)
	}
	return "none"
}
