package chaos

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// onZooKeeper are the verdicts that hold only if ZooKeeper keeps one
// history: who held a lock, and when, is what the ensemble said. A lease
// that stood on a node the members disagreed on can break them with no
// fault of zklock's (a deposed leader's uncommitted create, kept by one
// member, is a lock node nobody else sees), so such a verdict is judged
// VDivergedLease, ZooKeeper's. What the fence does (stale writes
// committed, interleaved accepted writes, the store's linearizability)
// is never excused: it must hold whatever ZooKeeper says.
var onZooKeeper = map[string]bool{
	VDoubleGrant: true, VLateLoss: true, VGoodStanding: true, VSharedOverlap: true,
	VOverLimit: true, VDowngradeGap: true, VDeleteUnnoticed: true, VLossMargin: true,
}

// ZooKeeper's verdicts: reported, and kept apart from zklock's (Report.Pass
// counts only zklock's; Report.ZooKeeperVerdicts these).
func zooKeepers(kind string) bool {
	return kind == VDivergence || kind == VDivergedLease || kind == VStoreDiverged
}

// findDivergence runs before the other checks. It orders the queue
// snapshots and what they show of every lock node (c.snaps, c.spans) and
// finds the nodes the ensemble's members disagreed on, two ways:
//
//   - a synced listing left a node out although listings before and after
//     it showed it (snapshotGaps);
//   - one sequence number was given to two nodes of one queue
//     (sequenceTwice).
//
// c.disputed holds every such node (the phantom check leaves them alone);
// c.unsound those a lease stood on whose verdicts are ZooKeeper's.
func (c *checker) findDivergence() {
	c.disputed, c.unsound = map[string]bool{}, map[string]string{}
	for _, e := range c.evs {
		if e.Kind == EvQueues {
			c.snaps = append(c.snaps, e)
		}
	}
	slices.SortStableFunc(c.snaps, func(a, b Event) int { return cmp.Compare(a.T, b.T) })
	spans := map[string]*nodeSpan{}
	for _, s := range c.snaps {
		for p, owner := range s.Owners {
			n := spans[p]
			if n != nil {
				n.to = max(n.to, s.T)
			} else {
				n = &nodeSpan{path: p, session: owner, seen: s.T, from: max(s.End, s.T), to: s.T}
				spans[p] = n
			}
			n.members |= 1 << (s.Server & 31)
		}
	}
	c.spans = slices.SortedFunc(maps.Values(spans), func(a, b *nodeSpan) int {
		return cmp.Or(cmp.Compare(a.seen, b.seen), cmp.Compare(a.path, b.path))
	})
	c.snapshotGaps()
	c.sequenceTwice()
}

// snapshotGaps finds lock znodes that a snapshot left out although the
// snapshots before and after it listed them: snapshot s with T after the
// first listing's End and End before the last listing's T. Every listing
// starts with a sync and a sequential node never comes back once deleted,
// so the node existed throughout, and a member that has applied every
// commit up to s.T must list it: the members disagree on what was
// committed (VDivergence), a fault of ZooKeeper, not of zklock (one was
// found by hand in a long run: a member kept a deposed leader's create
// across its sync with the new leader).
func (c *checker) snapshotGaps() {
	snaps := c.snaps
	for _, n := range c.spans {
		i := sort.Search(len(snaps), func(i int) bool { return snaps[i].T > n.from })
		for _, s := range snaps[i:] {
			if s.T >= n.to {
				break
			}
			if max(s.End, s.T) >= n.to {
				continue
			}
			if _, ok := s.Owners[n.path]; ok {
				continue
			}
			c.disputed[n.path] = true
			c.unsound[n.path] = fmt.Sprintf("zk%d's synced listing at %s left it out", s.Server, clock(s.T))
			c.rep.Phantom.Divergent++
			c.violation(VDivergence, "", fmt.Sprintf("%s (owner session %#x) was listed by %s from %s to %s, but not by zk%d's synced listing at %s in between: the ensemble's members disagree on a committed node (a ZooKeeper fault)",
				n.path, n.session, memberNames(n.members), clock(n.seen), clock(n.to), s.Server, clock(s.T)), n.seen, n.to)
			break
		}
	}
}

// sequenceTwice finds one sequence number given to two nodes of one queue
// (by the leases' nodes and the snapshots). ZooKeeper numbers a parent's
// children from the parent's count of changes, so a number given twice
// while both nodes lived means that one member applied a create the others
// never committed and the new leader gave its number again: a deposed
// leader's create, kept by a member across its sync (ZooKeeper 3.8.0
// truncating its log to the new leader's, then loading a snapshot taken
// past that point). The kept node has the older token (czxid); a lease on
// it is unsound. When only one of the nodes has a lease, which is the kept
// one cannot be told, and nothing is excused.
//
// A queue is a container: ZooKeeper deletes it once empty, and the next
// lock makes it again, numbering from 0. So a number given twice is
// evidence only if the two nodes lived at one time (see coexisted); the
// others are counted apart (SequencesReused).
func (c *checker) sequenceTwice() {
	ev := map[string]*nodeEvidence{}
	get := func(p string) *nodeEvidence {
		e := ev[p]
		if e == nil {
			e = &nodeEvidence{by: math.MaxInt64, after: math.MinInt64}
			ev[p] = e
		}
		return e
	}
	for p, ls := range c.byNode {
		for _, l := range ls {
			if path.Base(path.Dir(p)) != l.resource || l.token == 0 {
				continue
			}
			e := get(p)
			e.token = l.token
			// A lease's listing showed its node just before acquired.
			e.by, e.after = min(e.by, l.acquired), max(e.after, l.acquired)
		}
	}
	for _, n := range c.spans {
		e := get(n.path)
		e.by, e.after = min(e.by, n.from), max(e.after, n.to)
	}
	named := map[string][]string{} // "parent#seq" → node paths
	for p := range ev {
		if k, ok := seqKey(p); ok {
			named[k] = append(named[k], p)
		}
	}
	listedTogether := map[[2]string]bool{}
	for _, s := range c.snaps {
		byKey := map[string][]string{}
		for p := range s.Owners {
			if k, ok := seqKey(p); ok && len(named[k]) > 1 {
				byKey[k] = append(byKey[k], p)
			}
		}
		for _, ps := range byKey {
			slices.Sort(ps)
			for i := range ps {
				for j := i + 1; j < len(ps); j++ {
					listedTogether[[2]string{ps[i], ps[j]}] = true
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(named)) {
		ps := named[k]
		if len(ps) < 2 {
			continue
		}
		slices.Sort(ps)
		proven := map[string]bool{}
		for i, a := range ps {
			for _, b := range ps[i+1:] {
				if listedTogether[[2]string{a, b}] || coexisted(ev[a], ev[b]) {
					proven[a], proven[b] = true, true
				}
			}
		}
		if len(proven) == 0 {
			c.rep.SequencesReused++
			continue
		}
		ps = slices.DeleteFunc(ps, func(p string) bool { return !proven[p] })
		var newest int64
		for _, p := range ps {
			newest = max(newest, ev[p].token)
			c.disputed[p] = true
		}
		var kept []string
		for _, p := range ps {
			if t := ev[p].token; t != 0 && t < newest {
				kept = append(kept, fmt.Sprintf("%s (token %#x)", p, t))
				if c.unsound[p] == "" {
					c.unsound[p] = fmt.Sprintf("its sequence number was given again, token %#x", newest)
				}
			}
		}
		what := "which one a member kept uncommitted cannot be told"
		if len(kept) > 0 {
			what = "kept uncommitted by a member: " + strings.Join(kept, ", ")
		}
		parent, seq, _ := strings.Cut(k, "#")
		c.rep.SequencesTwice++
		c.violation(VDivergence, path.Base(parent), fmt.Sprintf("sequence number %s of %s was given to %d nodes that lived at one time (%s): ZooKeeper numbers a queue's nodes once each, so the ensemble's members disagree on what was committed (a ZooKeeper fault); %s",
			seq, parent, len(ps), strings.Join(ps, ", "), what), c.firstSeen(ps), c.lastT)
	}
}

// nodeEvidence is what the history shows of one lock node's life: it
// existed by the time by, and still did at some moment at or after after
// (a lease's acquisition, a snapshot's listing); token is its czxid if a
// lease stood on it.
type nodeEvidence struct {
	by, after int64
	token     int64
}

// coexisted reports whether two nodes surely lived at one time. A node
// lives in one stretch (a sequential node never comes back), so it lived
// throughout [by, after] when by <= after: two such stretches that meet
// prove it. So does the older node (by czxid) living on after the newer
// one existed: in one committed history the older was made first, so
// both lived when the newer was made.
func coexisted(a, b *nodeEvidence) bool {
	if a.by <= a.after && b.by <= b.after && max(a.by, b.by) <= min(a.after, b.after) {
		return true
	}
	if a.token == 0 || b.token == 0 || a.token == b.token {
		return false
	}
	older, newer := a, b
	if b.token < a.token {
		older, newer = b, a
	}
	return older.after > newer.by
}

// seqKey returns "parent#seq" for a lock node whose name ends in a
// ZooKeeper sequence number.
func seqKey(p string) (string, bool) {
	seq := p[max(0, len(p)-10):]
	if _, err := strconv.ParseUint(seq, 10, 64); err != nil || len(seq) != 10 {
		return "", false
	}
	return path.Dir(p) + "#" + seq, true
}

// firstSeen returns when the first of the nodes was seen (snapshot or
// lease), for a verdict's slice of history.
func (c *checker) firstSeen(ps []string) int64 {
	t := c.lastT
	for _, p := range ps {
		for _, l := range c.byNode[p] {
			t = min(t, l.acquired)
		}
		for _, n := range c.spans {
			if n.path == p {
				t = min(t, n.seen)
			}
		}
	}
	return t
}

// onDisputedNode returns the first lock node of the keys' leases that the
// members disagreed on and what showed it ("" if none).
func (c *checker) onDisputedNode(keys []leaseKey) (node, why string) {
	for _, k := range keys {
		l := c.leases[k]
		if l == nil {
			continue
		}
		for _, n := range l.nodes {
			if w := c.unsound[n]; w != "" && path.Base(path.Dir(n)) == l.resource {
				return n, w
			}
		}
	}
	return "", ""
}

// memberNames names the members in a bit set ("zk1, zk3").
func memberNames(set uint32) string {
	var names []string
	for i := range 32 {
		if set&(1<<i) != 0 {
			names = append(names, fmt.Sprintf("zk%d", i))
		}
	}
	if len(names) == 0 {
		return "a member"
	}
	return strings.Join(names, ", ")
}
