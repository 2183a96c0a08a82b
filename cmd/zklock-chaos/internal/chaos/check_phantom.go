package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"
)

// PhantomCheck is what the phantom-node check compared and found.
type PhantomCheck struct {
	QueueSnapshots int `json:"queue_snapshots"` // EvQueues in the history
	LocalReports   int `json:"local_reports"`   // EvLocal in the history
	// PairsCompared counts the lock znodes (with their owner session)
	// that the session's client reported on at least once while the
	// snapshots showed the node existed.
	PairsCompared int `json:"pairs_compared"`
	// Phantoms counts the znodes unknown to their client for PhantomGrace
	// or longer (one VPhantom each).
	Phantoms int `json:"phantoms"`
	// MaxUnknownMS is the longest time a compared znode was unknown to its
	// client, counted as the check counts it.
	MaxUnknownMS float64 `json:"max_unknown_ms"`
	GraceMS      int64   `json:"grace_ms"`
	// Divergent counts the znodes that one synced listing showed and
	// another, taken between two that showed them, did not (one
	// VDivergence each): the members disagreed. Such a node is not judged
	// as a phantom.
	Divergent int `json:"divergent"`
}

// nodeSpan is what the queue snapshots show of one lock znode. Sequential
// names never come back once deleted, so the node existed throughout
// [from, to].
type nodeSpan struct {
	path    string
	session int64  // ephemeral owner
	seen    int64  // T of the first snapshot that lists it
	from    int64  // End of that snapshot: it existed by then...
	to      int64  // ...and still did at T of the last snapshot that lists it
	members uint32 // bit i: member i listed it
}

// checkPhantoms finds lock znodes of a live session that its own client
// did not know about (a node created twice after a lost reply, say, whose
// first copy sits in the queue, owned by the live session, until the
// session ends). For every znode the snapshots show, it takes the EvLocal
// reports of the owner session strictly inside the node's span: a run of
// consecutive reports that leave the node out, spanning PhantomGrace or
// more, is a phantom.
//
// A node is legitimately unknown for a while: a create in flight or whose
// reply was lost (the client registers the node once a listing finds it),
// the moment between the client forgetting a node and starting its delete.
// The grace absorbs those. A node the client is deleting is reported
// (Client.Deleting), however long ZooKeeper keeps the delete waiting: it
// was not lost track of. Time nobody could observe is not counted: a gap of more
// than a third of the grace between two reports (the worker was stopped, or
// starved) or between two snapshots (the ensemble could not be read, so no
// delete could complete either). A killed worker sends nothing, and a new
// session after an expiry reports under its own id.
func (c *checker) checkPhantoms() {
	pc := &c.rep.Phantom
	grace := c.p.PhantomGrace
	if grace <= 0 {
		grace = 3 * c.p.SessionTimeout
	}
	if grace <= 0 {
		grace = 9 * time.Second
	}
	pc.GraceMS = grace.Milliseconds()
	snaps := c.snaps
	reports := map[int64][]Event{} // by session
	for _, e := range c.evs {
		if e.Kind == EvLocal {
			pc.LocalReports++
			reports[e.Session] = append(reports[e.Session], e)
		}
	}
	pc.QueueSnapshots = len(snaps)
	// A campaign that granted leases must have fed the check. A history
	// with neither kind of event predates the check (CheckHistoryFile
	// re-checks old histories): it is judged without it, as it was.
	if c.rep.Acquisitions > 0 && len(snaps) == 0 && pc.LocalReports > 0 {
		c.violation(VPhantom, "", "no queue snapshots: phantom check could not run", c.lastT, c.lastT)
	}
	if c.rep.Acquisitions > 0 && len(snaps) > 0 && pc.LocalReports == 0 {
		c.violation(VPhantom, "", "no local reports: phantom check could not run", c.lastT, c.lastT)
	}
	if len(snaps) == 0 || pc.LocalReports == 0 {
		return
	}
	byT := func(a, b Event) int { return cmp.Compare(a.T, b.T) }
	for _, rs := range reports {
		slices.SortStableFunc(rs, byT)
	}
	var points []int64 // when the snapshotter was seen reading
	for _, s := range c.snaps {
		points = append(points, s.T, max(s.End, s.T))
	}
	gap := int64(grace / 3)
	unseen := blindTimes(points, gap)
	counted := func(a, b int64) int64 { // unknown time between two consecutive reports
		if b-a > gap {
			return 0
		}
		return b - a - unseen.within(a, b)
	}
	var maxUnknown int64
	for _, n := range c.spans {
		if c.disputed[n.path] {
			continue // a ZooKeeper fault (findDivergence)
		}
		rs := reports[n.session]
		i := sort.Search(len(rs), func(i int) bool { return rs[i].T > n.from })
		j := sort.Search(len(rs), func(j int) bool { return rs[j].T >= n.to })
		if i >= j {
			continue
		}
		pc.PairsCompared++
		in := rs[i:j]
		// the longest run of reports leaving the node out: in[worstFrom:worstTo+1]
		start, worstFrom, worstTo := -1, -1, -1
		var unknown, worst int64
		for k, r := range in {
			if slices.Contains(r.Nodes, n.path) {
				start = -1
				continue
			}
			if start < 0 {
				start, unknown = k, 0
			} else {
				unknown += counted(in[k-1].T, r.T)
			}
			if worstFrom < 0 || unknown > worst {
				worst, worstFrom, worstTo = unknown, start, k
			}
		}
		maxUnknown = max(maxUnknown, worst)
		if worstFrom < 0 || worst < int64(grace) {
			continue
		}
		pc.Phantoms++
		a, b := in[worstFrom], in[worstTo]
		c.violation(VPhantom, "", fmt.Sprintf("%s (owner session %#x, worker proc %d) was unknown to its client for %.1f s (%d reports from %s to %s leave it out; grace %v) while the queue snapshots showed it from %s to %s",
			n.path, n.session, a.Proc, float64(worst)/1e9, worstTo-worstFrom+1, clock(a.T), clock(b.T), grace, clock(n.seen), clock(n.to)),
			n.seen, b.T, leaseKey{proc: a.Proc})
	}
	pc.MaxUnknownMS = float64(maxUnknown) / 1e6
}

func clock(t int64) string { return time.Unix(0, t).Format("15:04:05.000") }

// blindSet is a sorted set of disjoint intervals of time.
type blindSet struct {
	from, to []int64
	cum      []int64 // cum[i]: total length of the first i intervals
}

// blindTimes returns the gaps of more than gap between consecutive points.
func blindTimes(points []int64, gap int64) *blindSet {
	slices.Sort(points)
	b := &blindSet{cum: []int64{0}}
	for i := 1; i < len(points); i++ {
		if points[i]-points[i-1] > gap {
			b.from = append(b.from, points[i-1])
			b.to = append(b.to, points[i])
			b.cum = append(b.cum, b.cum[len(b.cum)-1]+points[i]-points[i-1])
		}
	}
	return b
}

// upTo returns how much of (-∞, t] is blind.
func (b *blindSet) upTo(t int64) int64 {
	i := sort.Search(len(b.from), func(i int) bool { return b.from[i] >= t })
	if i == 0 {
		return 0
	}
	return b.cum[i-1] + min(t, b.to[i-1]) - b.from[i-1]
}

// within returns how much of [x, y] is blind.
func (b *blindSet) within(x, y int64) int64 { return b.upTo(y) - b.upTo(x) }
