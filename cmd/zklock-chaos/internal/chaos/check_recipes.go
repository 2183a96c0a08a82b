package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// span is the stretch of the store's order over which a lease's counted
// writes fell: the places (storeWrite.pos) of its first and last.
type span struct {
	l           *leaseRec
	first, last int64
	firstT      int64
	lastT       int64
}

// goodStanding reports whether a write of l, received at t and sent at
// sent, came from a holder that had no reason to doubt its lease: not
// paused since its acquire, not told of loss, its node not deleted by the
// operator. Only such writes can witness two holders at once where tokens
// cannot fence (semaphores).
func (c *checker) goodStanding(l *leaseRec, sent, t int64) bool {
	switch {
	case c.pausedDuring(l.key.proc, l.acquired, t):
		return false
	case l.lost != 0 && l.lost <= sent:
		return false
	case c.deletedBy(l, t) != nil:
		return false
	}
	return true
}

// unfenced reports whether e, an accepted write of l, is one no token
// can fence from a holder not in good standing: it witnesses nothing
// about two holders at once. No token fences a semaphore's write, nor,
// in a database, any write on a read/write lock (readers leave no token
// in the fence, so a late writer is not refused after them; a late
// writer after a writer is, or checkStaleCommitted says so). In
// ZooKeeper the lease's node fences it: it existed when the write
// committed, so its holder still held, paused or not, and the write
// counts.
func (c *checker) unfenced(l *leaseRec, e Event) bool {
	kind := c.kindOf(e.Resource)
	return !c.zk && (kind == "sem" || kind == "rw" && c.db) && !c.goodStanding(l, e.Sent, e.T)
}

// checkSharedWrites judges the accepted writes of read/write locks and
// semaphores, per resource, in the store's order:
//
//   - read/write: the stretch of a writer's writes holds no write of
//     another lease, and its writes fall in no other lease's stretch;
//   - semaphore: no point of the order lies in the stretches of more than
//     limit leases (writes of holders not in good standing, which no token
//     can fence, are counted apart: Stale.Unfenced; in ZooKeeper every
//     accepted write counts, see zkFenceSpec).
func (c *checker) checkSharedWrites() {
	r := c.rep
	spans := map[string]map[*leaseRec]*span{}
	for _, w := range c.writes {
		if !w.Accepted {
			break // the accepted ones come first
		}
		e := w.Event
		kind := c.kindOf(e.Resource)
		if kind == "x" {
			continue
		}
		l := c.leases[leaseKey{e.Proc, e.Op, e.Resource}]
		if l == nil {
			continue
		}
		if c.unfenced(l, e) {
			r.Stale.Unfenced++
			continue
		}
		m := spans[e.Resource]
		if m == nil {
			m = map[*leaseRec]*span{}
			spans[e.Resource] = m
		}
		if sp := m[l]; sp != nil {
			sp.last, sp.lastT = w.pos, e.T
		} else {
			m[l] = &span{l: l, first: w.pos, last: w.pos, firstT: e.T, lastT: e.T}
		}
	}
	for _, res := range slicesSorted(spans) {
		list := make([]*span, 0, len(spans[res]))
		for _, sp := range spans[res] {
			list = append(list, sp)
		}
		slices.SortFunc(list, func(a, b *span) int { return cmp.Compare(a.first, b.first) })
		if c.kindOf(res) == "rw" {
			c.rwSpans(res, list)
		} else {
			c.semSpans(res, list)
		}
	}
}

// rwSpans reports every pair of overlapping stretches with a writer in it.
func (c *checker) rwSpans(res string, list []*span) {
	for i, a := range list {
		for _, b := range list[i+1:] {
			if b.first > a.last {
				break
			}
			if a.l.writer() || b.l.writer() {
				c.violation(VSharedOverlap, res, fmt.Sprintf("%v (%s, token %#x) and %v (%s, token %#x) both had writes accepted while the other was writing",
					a.l.key, a.l.mode, a.l.token, b.l.key, b.l.mode, b.l.token), min(a.firstT, b.firstT), max(a.lastT, b.lastT), a.l.key, b.l.key)
			}
		}
	}
}

// semSpans reports each point where more than limit stretches overlap.
func (c *checker) semSpans(res string, list []*span) {
	limit := 0
	for _, sp := range list {
		limit = max(limit, sp.l.limit)
	}
	if limit == 0 {
		return
	}
	var open []*span
	for _, sp := range list {
		open = slices.DeleteFunc(open, func(o *span) bool { return o.last < sp.first })
		open = append(open, sp)
		if len(open) > limit {
			var who []string
			var keys []leaseKey
			from := sp.firstT
			for _, o := range open {
				who = append(who, fmt.Sprintf("%v (token %#x)", o.l.key, o.l.token))
				keys = append(keys, o.l.key)
				from = min(from, o.firstT)
			}
			c.violation(VOverLimit, res, fmt.Sprintf("%d holders of a semaphore of %d wrote at once: %s", len(open), limit, strings.Join(who, ", ")),
				from, sp.firstT, keys...)
			open = open[:0] // report each crowd once
		}
	}
}

// checkSharedHandOffs is checkHandOffs for read/write locks and
// semaphores: when a lease is granted, the leases still held in their
// holders' eyes must leave room for it (no writer beside anyone; fewer
// than limit semaphore holders). A paused holder, or one whose node the
// operator had just deleted, is excused as in checkHandOffs.
func (c *checker) checkSharedHandOffs() {
	for _, res := range slicesSorted(c.byRes) {
		kind := c.kindOf(res)
		if kind == "x" {
			continue
		}
		ls := slices.Clone(c.byRes[res])
		slices.SortFunc(ls, func(a, b *leaseRec) int { return cmp.Compare(a.acquired, b.acquired) })
		var active []*leaseRec
		blamed := map[*leaseRec]bool{} // one verdict per holder, however many came in beside it
		for _, b := range ls {
			active = slices.DeleteFunc(active, func(a *leaseRec) bool {
				end, _ := a.end()
				return end != 0 && end <= b.acquired
			})
			var conflict []*leaseRec
			for _, a := range active {
				if kind == "sem" || a.writer() || b.writer() {
					conflict = append(conflict, a)
				}
			}
			room := 0
			if kind == "sem" {
				room = max(b.limit-1, 0)
			}
			switch {
			case len(conflict) <= room:
			case c.deletedBy(b, b.acquired) != nil:
				// b's own node was gone before its grant reached it (a
				// listing sent before the operator's delete, a slow link):
				// its lease ended before it began, the others came in by
				// that delete, and checkOpDeletes bounds how soon b hears.
				c.rep.OperatorOverlaps++
			default:
				var guilty []*leaseRec
				for _, a := range conflict {
					end, _ := a.end()
					if end == 0 {
						end = c.lastT
					}
					if !c.excused(a, b.acquired, end) && !c.stoppedAcquiring(b, a.acquired) {
						guilty = append(guilty, a)
					}
				}
				if len(guilty) > room {
					for _, a := range guilty[:len(guilty)-room] {
						if blamed[a] {
							continue
						}
						blamed[a] = true
						end, how := a.end()
						kindV := VDoubleGrant
						if how == "lost" {
							kindV = VLateLoss
						}
						c.violation(kindV, res, fmt.Sprintf("%v (%s, token %#x, %s at %s) still held when %v (%s, token %#x) acquired",
							a.key, a.mode, a.token, how, clockOr(end), b.key, b.mode, b.token), a.acquired, max(b.acquired, end), a.key, b.key)
					}
				}
			}
			active = append(active, b)
		}
	}
}

func clockOr(t int64) string {
	if t == 0 {
		return "never"
	}
	return clock(t)
}

// checkDowngrades checks that no other writer got in between a write
// lease and the read lease its Downgrade returned: none acquired between
// the write lease's acquire and the read lease's, none had a write
// accepted between their writes.
func (c *checker) checkDowngrades() {
	r := c.rep
	for _, l := range c.sortedLeases() {
		if l.mode != ModeDowngrade || l.from == 0 {
			continue
		}
		w := c.leases[leaseKey{l.key.proc, l.from, l.resource}]
		if w == nil {
			continue
		}
		r.Downgrades++
		if c.pausedDuring(l.key.proc, w.acquired, l.acquired) {
			// Stopped while it downgraded: its session may have expired,
			// and others come in; fencing's job, as for any paused holder.
			r.PausedOverlaps++
			continue
		}
		reported := false
		for _, x := range c.byRes[l.resource] {
			if reported {
				break
			}
			if x == w || x == l || !x.writer() {
				continue
			}
			if x.acquired > w.acquired && x.acquired < l.acquired {
				c.violation(VDowngradeGap, l.resource, fmt.Sprintf("%v (writer, token %#x) acquired between %v's write lease (token %#x) and the read lease of its Downgrade (token %#x)",
					x.key, x.token, w.key, w.token, l.token), w.acquired, l.acquired, x.key, w.key)
				reported = true
			}
		}
		// The read lease's first write that witnesses it held: one sent
		// after a pause, after its loss was told or after the operator
		// deleted its node, which a database does not fence (unfenced),
		// says nothing of the downgrade.
		first := slices.IndexFunc(l.writes, func(sw storeWrite) bool { return !c.unfenced(l, sw.Event) })
		if reported || len(w.writes) == 0 || first < 0 {
			continue
		}
		from, to := w.writes[len(w.writes)-1].pos, l.writes[first].pos
		for _, sw := range c.writes {
			e := sw.Event
			if !e.Accepted {
				break
			}
			if sw.pos <= from || sw.pos >= to || e.Resource != l.resource {
				continue
			}
			if x := c.leases[leaseKey{e.Proc, e.Op, e.Resource}]; x != nil && x.writer() && x != w {
				c.violation(VDowngradeGap, l.resource, fmt.Sprintf("%v (writer, token %#x) wrote between %v's last write as a writer and its first as a reader",
					x.key, x.token, w.key), w.acquired, l.acquired, x.key, w.key)
				break
			}
		}
	}
}

// deleteRace is how long after the operator's delete a holder may end by
// itself (release, death) without having been told: the notification may
// be on its way. It runs from the delete's reply: ZooKeeper may have
// committed the delete at any moment up to it, and sends the notification
// only then (the long run of 28 November on 4a93c17: a delete answered
// 71 ms after it was sent, on a leader whose requests took 150 to 270 ms;
// the holder released 47 ms after the reply). A holder that released later
// than that, untold, held a lease whose node was gone without knowing.
const deleteRace = 100 * time.Millisecond

// checkOpDeletes checks that a holder whose node the operator deleted was
// told of its loss within DeleteNotice (or ended by itself within
// deleteRace), unless it could not be told: paused, or cut off by a fault
// of its own or of the ensemble at the time.
func (c *checker) checkOpDeletes() {
	r := c.rep
	bound := int64(c.p.DeleteNotice)
	listedAfter := c.listedAfter()
	for _, n := range slicesSorted(c.deletes) {
		for _, f := range c.deletes[n] {
			if f.failed && listedAfter(n, f.end) {
				// The delete failed (its connection closed: the operator's
				// session sat on a server cut off from the leader) and a
				// server listed the node after it had ended: a deleted
				// node never comes back (its name is unique), so the
				// delete deleted nothing. It hit no holder.
				r.OpDeletesUndone++
				continue
			}
			r.OpDeletes[f.role]++
			seen := map[leaseKey]bool{} // a multi-resource lease once, not once per part
			// A delete whose reply was lost took effect at some moment up
			// to its end: the notice is counted from there.
			at := f.start
			if f.failed {
				at = f.end
			}
			for _, l := range c.byNode[n] {
				// A lease granted after the delete was granted on a listing
				// ZooKeeper sent before it (the node was its own, made
				// after its acquire began): born lost, it must hear of it
				// as any holder does.
				if whole := (leaseKey{l.key.proc, l.key.op, ""}); f.start < l.began || seen[whole] {
					continue
				} else {
					seen[whole] = true
				}
				end, how := l.end()
				if end != 0 && end < f.start {
					continue // over before the delete
				}
				r.OpDeleteHolders++
				if l.requeued {
					r.RequeuedDeleted++
				}
				race := max(at, f.end) + int64(deleteRace)
				if l.acquired > f.start {
					// Born lost: it ends by itself untold at most deleteRace
					// after its grant, or after the delete's reply, whichever
					// is later (a delete whose reply was lost may have taken
					// effect as late as its end, after the grant).
					r.OpDeleteBornLost++
					race = max(race, l.acquired+int64(deleteRace))
				}
				// Told of the loss within the bound; or ended by itself
				// (released, died) so soon that the notification may still
				// have been on its way.
				if end != 0 && (how == "lost" && end <= at+bound || end <= race) {
					r.OpDeleteNotice.add(float64(max(end-at, 0))/1e6, false)
					continue
				}
				// It could not hear of it: paused, or its own connection
				// down (a fault of its process, or of the server it was on,
				// from a second before the delete to its end). Even then, a
				// holder that came back must be told within a session
				// timeout: ZooKeeper sends the notification when the watch
				// is set again, or the session is lost.
				to := cmp.Or(end, c.lastT)
				if how == "lost" {
					to = min(to, at+bound)
				}
				excused := c.pausedDuring(l.key.proc, f.start-int64(time.Second), to) ||
					c.cutOff(l, f.start-int64(time.Second), to) && (how != "lost" || end <= at+int64(c.p.SessionTimeout)+bound)
				if excused {
					r.OpDeleteExcused++
					continue
				}
				c.violation(VDeleteUnnoticed, l.resource, fmt.Sprintf("%v (token %#x) went on holding after the operator deleted its node %s (%s; %s at %s, %v later)",
					l.key, l.token, n, f.role, how, clockOr(end), durOr(end, at)), f.start, max(end, at+bound), l.key)
			}
		}
	}
}

// listedAfter returns whether a queue snapshot begun at or after t lists
// the node n.
func (c *checker) listedAfter() func(n string, t int64) bool {
	var snaps []Event
	for _, e := range c.evs {
		if e.Kind == EvQueues {
			snaps = append(snaps, e)
		}
	}
	return func(n string, t int64) bool {
		for _, e := range snaps {
			if _, ok := e.Owners[n]; ok && e.T >= t {
				return true
			}
		}
		return false
	}
}

func durOr(end, start int64) string {
	if end == 0 {
		return "never"
	}
	return fmt.Sprintf("%.0f ms", float64(end-start)/1e6)
}

// cutOff reports whether l's holder may have been out of touch with
// ZooKeeper in [from, to]: a network fault of its own process (or one that
// left it on the minority side), a leader's death or isolation (followers
// drop their clients while a new one is elected), or a fault of the server
// its session was on.
func (c *checker) cutOff(l *leaseRec, from, to int64) bool {
	for _, f := range c.faults {
		if f.start > to || f.end < from {
			continue
		}
		switch {
		case f.proc == l.key.proc && f.kind.Network(), slices.Contains(f.stuck, l.key.proc),
			f.kind == FaultLeaderKill, f.kind == FaultIsolateLeader:
			// a leader's death or isolation: every follower drops its
			// clients until a new leader is elected
			return true
		case f.kind.Server() && (l.server == 0 || slices.Contains(f.cut, l.server) || f.server == l.server):
			return true
		}
	}
	return false
}

// countRecipes fills the per-recipe table: acquisitions, failures,
// violations.
func (c *checker) countRecipes() {
	r := c.rep
	c.loadStats()
	for _, a := range c.attempts {
		rc := r.recipe(recipeOf(a.mode, a.detail))
		rc.Attempts++
		if a.acquired {
			rc.Acquisitions++
		} else if a.outcome != "" {
			rc.Failures[a.outcome]++
		}
	}
	for _, v := range r.Violations {
		if v.Resource == "" || zooKeepers(v.Kind) {
			continue
		}
		name := recipeOfResource(v.Resource)
		if v.Kind == VDowngradeGap {
			name = RecipeDowngrade
		}
		r.recipe(name).Violations++
	}
}

func slicesSorted[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sortedLeases returns every lease record in acquire order.
func (c *checker) sortedLeases() []*leaseRec {
	ls := make([]*leaseRec, 0, len(c.leases))
	for _, l := range c.leases {
		ls = append(ls, l)
	}
	slices.SortFunc(ls, func(a, b *leaseRec) int {
		return cmp.Or(cmp.Compare(a.acquired, b.acquired), cmp.Compare(a.key.proc, b.key.proc), cmp.Compare(a.key.op, b.key.op),
			cmp.Compare(a.key.res, b.key.res))
	})
	return ls
}
