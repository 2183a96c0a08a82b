package chaos

import (
	"cmp"
	"fmt"
	"maps"
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
	VOverLimit: true, VDowngradeGap: true, VDeleteUnnoticed: true,
}

// ZooKeeper's verdicts: reported, and kept apart from zklock's (Report.Pass
// counts only zklock's; Report.ZooKeeperVerdicts these).
func zooKeepers(kind string) bool { return kind == VDivergence || kind == VDivergedLease }

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
// means that one member applied a create the others never committed and
// the new leader gave its number again: a deposed leader's create, kept by
// a member across its sync (ZooKeeper 3.8.0 truncating its log to the new
// leader's, then loading a snapshot taken past that point). The kept node
// has the older token (czxid); a lease on it is unsound. When only one of
// the nodes has a lease, which is the kept one cannot be told, and nothing
// is excused.
func (c *checker) sequenceTwice() {
	tokens := map[string]int64{} // node → the token of the lease that stood on it
	for p, ls := range c.byNode {
		for _, l := range ls {
			if path.Base(path.Dir(p)) == l.resource && l.token != 0 {
				tokens[p] = l.token
			}
		}
	}
	named := map[string][]string{} // "parent#seq" → node paths
	add := func(p string) {
		seq := p[max(0, len(p)-10):]
		if _, err := strconv.ParseUint(seq, 10, 64); err != nil || len(seq) != 10 {
			return
		}
		k := path.Dir(p) + "#" + seq
		if !slices.Contains(named[k], p) {
			named[k] = append(named[k], p)
		}
	}
	for p := range c.byNode {
		add(p)
	}
	for _, n := range c.spans {
		add(n.path)
	}
	for _, k := range slices.Sorted(maps.Keys(named)) {
		ps := named[k]
		if len(ps) < 2 {
			continue
		}
		slices.Sort(ps)
		var newest int64
		for _, p := range ps {
			newest = max(newest, tokens[p])
			c.disputed[p] = true
		}
		var kept []string
		for _, p := range ps {
			if t := tokens[p]; t != 0 && t < newest {
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
		c.violation(VDivergence, path.Base(parent), fmt.Sprintf("sequence number %s of %s was given to %d nodes (%s): ZooKeeper numbers a queue's nodes once each, so the ensemble's members disagree on what was committed (a ZooKeeper fault); %s",
			seq, parent, len(ps), strings.Join(ps, ", "), what), c.firstSeen(ps), c.lastT)
	}
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
