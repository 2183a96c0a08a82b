package zklock_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// The reference model of the model-based test (model_test.go): what the
// lock recipes promise, as a state machine with no I/O. It knows queues of
// nodes, the acquires (ops) that made them and the leases they returned.
//
// The model does not guess what it cannot know: when several nodes are
// made at once (waiters queueing again after a session expiry, several
// multi-resource acquires moving on to their next part), their order is
// ZooKeeper's. Such nodes are pending until the driver sees them in a
// listing and tells the model their sequence numbers (learn). A pending
// node lies behind every node already seen: a listing is a snapshot and
// sequence numbers only grow, so a node not in it gets a larger number.

// opStatus is where an acquire stands.
type opStatus int

const (
	opWaiting opStatus = iota // queued (or about to queue) for a part
	opHeld                    // returned a lease
	opFailed                  // returned an error
)

// leaseEnd is how a lease stands.
type leaseEnd int

const (
	leaseLive leaseEnd = iota
	leaseReleased
	leaseLost
)

// boundKind says which bound an expectation is held to (model_test.go).
type boundKind int

const (
	boundHandoff boundKind = iota // a hand-off, a loss, a cancel
	boundTry                      // a try's answer
	boundWait                     // MaxWait or a context deadline, plus a hand-off
	boundExpiry                   // what follows a session expiry: the client reconnects first
)

// mnode is a lock node.
type mnode struct {
	op    *mop
	res   string
	mode  zklock.Mode
	seq   int64
	known bool // seen, with its sequence number; before: pending (made or about to be)
	held  bool // the rule let it hold; it stays so (nodes ahead only go)
	// lazy: the node is the re-queue of a waiter whose node an operator
	// deleted. A waiter need not watch its own node, so it may learn of
	// the deletion only when the node it watches goes: it must have
	// queued again by the time the deleted node would have held (ghost).
	lazy  *mghost
	since time.Time // pending: when it became due
	bound boundKind
	order int // creation order
}

// mghost is where a deleted waiter's node was.
type mghost struct {
	mode zklock.Mode
	seq  int64
}

// mop is one acquire (Acquire, AcquireAll, a re-entry, a downgrade).
type mop struct {
	id     int
	client int
	step   int // the step that started it
	res    []string
	mode   zklock.Mode
	parts  []string // the resources it queues on: res less those it re-enters
	part   int      // parts[:part] are held
	nodes  map[string]*mnode
	seqs   map[string][]int64 // every sequence number its nodes have had, per resource
	// onBlock: Try, MaxWait or a context deadline: the error it returns
	// when a part cannot be held at once.
	onBlock     error
	blockBound  boundKind
	grantBound  boundKind // the bound of its answer when it holds
	status      opStatus
	want        error              // opFailed: what the acquire returns
	lease       *mlease            // opHeld: the lease it returned (shared by a plain re-entry)
	ctxOf       *mlease            // acquired under this lease's context: cancelled when it ends
	ctxOp       *mop               // the op whose Lease made that context: cancelled too when that Lease is released
	lend        map[string]*mlease // parts a lease in its context holds: re-entered, not queued for
	borrowed    *mlease            // the lease it re-entered parts of (one reference, taken at the first)
	nextBound   boundKind          // the bound of its next queueing
	objReleased bool               // its *Lease was released (or downgraded)
	countedDown bool               // released while another reference held the lease on: that Lease has ended, its nodes stay
	blocked     bool               // a part of it had to wait
	waited      bool               // it held after waiting
	since       time.Time
	bound       boundKind
}

// mlease is a lease state; re-entries share it.
type mlease struct {
	id     int // the op that made it
	client int
	mode   zklock.Mode
	res    []string
	own    []*mnode // its own nodes (a partial re-entry's new parts only)
	parent *mlease  // a partial re-entry's re-entered lease
	refs   int
	end    leaseEnd
	reason zklock.LossReason // lost directly; 0 if lost with its parent
	since  time.Time
	bound  boundKind
}

type model struct {
	now    time.Time
	limits map[string]int // semaphore resources: their limit
	queues map[string][]*mnode
	ops    []*mop
	byID   map[int]*mop
	order  int
	// dry: no system to learn from (the step generator): pending nodes
	// get the next sequence numbers in creation order.
	dry bool
	seq int64
	// quiet is the acquire the step being applied starts, on a settled
	// system (see holds).
	quiet *mop
	// visiting: the seen nodes whose holds is being decided (a guard
	// against cycles of acquires in motion).
	visiting map[*mnode]bool
}

func newModel(resources []string, limits map[string]int) *model {
	m := &model{limits: limits, queues: map[string][]*mnode{}, byID: map[int]*mop{}}
	for _, r := range resources {
		m.queues[r] = nil
	}
	return m
}

// mayHold is the hold rule, for a node of mode on res with the nodes
// ahead of it.
func (m *model) mayHold(res string, mode zklock.Mode, ahead []*mnode) bool {
	switch mode {
	case zklock.Read:
		return !slices.ContainsFunc(ahead, func(a *mnode) bool { return a.mode != zklock.Read })
	case zklock.Semaphore:
		// Fewer than the limit ahead, all of them semaphore nodes: a node
		// of another mode ahead excludes it.
		return len(ahead) < m.limits[res] && !slices.ContainsFunc(ahead, func(a *mnode) bool { return a.mode != zklock.Semaphore })
	}
	return len(ahead) == 0
}

// seen returns the nodes of res already seen (with a sequence number below
// n's, if n is seen).
func (m *model) seen(res string, n *mnode) []*mnode {
	var out []*mnode
	for _, o := range m.queues[res] {
		if o.known && (n == nil || !n.known || o.seq < n.seq) {
			out = append(out, o)
		}
	}
	return out
}

// holds says whether n holds, if that is known yet. Pending nodes and
// seen ones are in no known order: a pending node may be known not to
// hold (nodes seen ahead already stop it), but that it holds is known only
// once it is seen; a seen node holds once the rule lets it with every
// pending node (but the lazy) ahead of it too. Except for the acquire a step
// starts on a settled system (quiet): nothing else is being made, so only
// the pending nodes already there can come ahead of it.
func (m *model) holds(n *mnode) (held, known bool) {
	if n.held {
		return true, true
	}
	ahead := m.seen(n.res, n)
	if !m.mayHold(n.res, n.mode, ahead) {
		return false, true // more nodes ahead cannot help
	}
	if n.known {
		// A node still pending may have been made before n: a cascade's
		// creates are reported in any order, and the model may learn that
		// a node is due only after the system made it. n holds only if it
		// would with them ahead too; else that is known once they are seen
		// (a pending node is seen within its bound).
		for _, o := range m.queues[n.res] {
			if !o.known && o.lazy == nil {
				ahead = append(ahead, o)
			}
		}
		// So may the node of an acquire in motion that queues on n's
		// resource now or later: its current part's node not made yet,
		// pending, or seen and free to hold or not known yet to be held
		// (the settling may come to it after n). Its next parts may have
		// been made before n, in the same cascade (seed 1244736275: a
		// session's expiry re-queues one waiter on c while another's
		// hand-off runs a, b, c; the system reported c's second node
		// first).
		if m.visiting == nil {
			m.visiting = map[*mnode]bool{}
		}
		m.visiting[n] = true
		defer delete(m.visiting, n)
		for _, x := range m.ops {
			if x == n.op || x.status != opWaiting || x.part >= len(x.parts) || !slices.Contains(x.parts[x.part:], n.res) {
				continue
			}
			cur := x.nodes[x.parts[x.part]]
			switch {
			case cur == nil: // the settling has yet to make it: pending
			case x.parts[x.part] == n.res, m.visiting[cur], cur.lazy != nil:
				continue // in the queue already (above), or not moving
			case cur.known:
				// Known not to hold: it stays. Not known yet either way,
				// it may hold already and have made its next node before n
				// (seed 1383501900: a session's expiry let an exclusive
				// AcquireAll hold a and queue on b, while a reader of the
				// expired session queued again on b behind it; the system
				// reported the reader's node first).
				if held, known := m.holds(cur); known && !held {
					continue
				}
			}
			ahead = append(ahead, &mnode{op: x, res: n.res, mode: x.mode})
		}
		if m.mayHold(n.res, n.mode, ahead) {
			return true, true
		}
		return false, false
	}
	if n.op != m.quiet {
		return false, false
	}
	for _, o := range m.queues[n.res] {
		if o != n && !o.known {
			ahead = append(ahead, o)
		}
	}
	if m.mayHold(n.res, n.mode, ahead) {
		return true, true
	}
	return false, false
}

func (m *model) addOp(x *mop) {
	x.nodes = map[string]*mnode{}
	x.seqs = map[string][]int64{}
	m.ops = append(m.ops, x)
	m.byID[x.id] = x
}

// enqueue makes x's pending node on res, at the back.
func (m *model) enqueue(x *mop, res string, bound boundKind) *mnode {
	m.order++
	n := &mnode{op: x, res: res, mode: x.mode, since: m.now, bound: bound, order: m.order}
	x.nodes[res] = n
	m.queues[res] = append(m.queues[res], n)
	return n
}

func (m *model) remove(n *mnode) {
	m.queues[n.res] = slices.DeleteFunc(m.queues[n.res], func(o *mnode) bool { return o == n })
	if n.op.nodes[n.res] == n {
		delete(n.op.nodes, n.res)
	}
}

// learn records that pending node n has sequence number seq.
func (m *model) learn(n *mnode, seq int64) {
	n.seq, n.known, n.lazy = seq, true, nil
	n.op.seqs[n.res] = append(n.op.seqs[n.res], seq)
	q := m.queues[n.res]
	slices.SortStableFunc(q, func(a, b *mnode) int {
		switch {
		case a.known && b.known:
			return int(a.seq - b.seq)
		case a.known:
			return -1
		case b.known:
			return 1
		}
		return a.order - b.order
	})
}

// pending returns the nodes not yet seen, in creation order.
func (m *model) pending() []*mnode {
	var out []*mnode
	for _, r := range m.resources() {
		for _, n := range m.queues[r] {
			if !n.known {
				out = append(out, n)
			}
		}
	}
	slices.SortFunc(out, func(a, b *mnode) int { return a.order - b.order })
	return out
}

func (m *model) resources() []string {
	rs := make([]string, 0, len(m.queues))
	for r := range m.queues {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}

// settle applies the rule until nothing changes: acquires whose part now
// holds move on to the next part or return their lease; those that may
// not wait fail.
func (m *model) settle() {
	for changed := true; changed; {
		changed = false
		if m.dry {
			// As late as ZooKeeper may make them: a lazy re-queue only
			// once it is due.
			for _, n := range m.pending() {
				if n.lazy == nil {
					m.seq++
					m.learn(n, m.seq)
				}
			}
		}
		for _, n := range m.pending() {
			if n.lazy != nil && m.mayHold(n.res, n.lazy.mode, m.seen(n.res, &mnode{known: true, seq: n.lazy.seq})) {
				// the deleted node would hold now: its waiter must
				// have noticed, and queues again within the bound
				n.lazy, n.since = nil, m.now
				changed = true
			}
		}
		for _, x := range m.ops {
			if x.status != opWaiting {
				continue
			}
			r := x.parts[x.part]
			if l := x.lend[r]; l != nil {
				// A part a lease in its context holds: re-entered when
				// the acquire comes to it, in canonical order.
				if l.end != leaseLive {
					continue // its context ended with l: it failed with it
				}
				if x.borrowed != l {
					l.refs++
					x.borrowed = l
				}
				changed = true
				if x.part++; x.part == len(x.parts) {
					m.grant(x)
				}
				continue
			}
			n := x.nodes[r]
			if n == nil {
				n = m.enqueue(x, r, x.nextBound)
				x.nextBound = boundHandoff
				changed = true
			}
			held, known := m.holds(n)
			switch {
			case !known:
				continue
			case !held:
				x.blocked = true
				if x.onBlock != nil {
					m.fail(x, x.onBlock, x.blockBound)
					changed = true
				}
				continue
			}
			n.held = true
			x.part++
			changed = true
			if x.part < len(x.parts) {
				continue
			}
			m.grant(x)
		}
	}
}

// grant ends x's acquire with a lease.
func (m *model) grant(x *mop) {
	l := &mlease{id: x.id, client: x.client, mode: x.mode, res: x.res, refs: 1, parent: x.borrowed}
	for _, r := range x.parts {
		if n := x.nodes[r]; n != nil {
			l.own = append(l.own, n)
		}
	}
	x.status, x.lease, x.since, x.bound = opHeld, l, m.now, x.grantBound
	x.waited = x.blocked
}

// fail ends x's acquire with err: its nodes go, its re-entry is given back.
func (m *model) fail(x *mop, err error, bound boundKind) {
	x.status, x.want, x.since, x.bound = opFailed, err, m.now, bound
	for _, n := range x.nodes {
		m.remove(n)
	}
	m.giveBack(x, bound)
}

// unref gives back one reference to l; the last one releases it.
func (m *model) unref(l *mlease, bound boundKind) {
	l.refs--
	if l.refs > 0 || l.end != leaseLive {
		return
	}
	m.endLease(l, leaseReleased, 0, bound)
}

// lose ends l as lost, with the leases that re-entered it partly.
func (m *model) lose(l *mlease, reason zklock.LossReason, bound boundKind) {
	if l.end != leaseLive {
		return
	}
	m.endLease(l, leaseLost, reason, bound)
	for _, x := range m.ops {
		if x.lease != nil && x.lease.parent == l {
			m.lose(x.lease, 0, bound)
		}
	}
}

func (m *model) endLease(l *mlease, end leaseEnd, reason zklock.LossReason, bound boundKind) {
	l.end, l.reason, l.since, l.bound = end, reason, m.now, bound
	for _, n := range l.own {
		m.remove(n)
	}
	if l.parent != nil {
		m.unref(l.parent, bound)
	}
	// Acquires waiting under the lease's context see it cancelled.
	for _, x := range m.ops {
		if x.status == opWaiting && x.ctxOf == l {
			m.fail(x, context.Canceled, bound)
		}
	}
}

// restart makes x give back every part and queue again from the first.
func (m *model) restart(x *mop, bound boundKind) {
	for _, n := range x.nodes {
		m.remove(n)
	}
	m.giveBack(x, bound)
	x.part, x.nextBound = 0, bound
}

// giveBack returns the reference x took on a lease it re-entered parts of.
func (m *model) giveBack(x *mop, bound boundKind) {
	if l := x.borrowed; l != nil {
		x.borrowed = nil
		m.unref(l, bound)
	}
}

// leaseOf returns the live lease that owns n, if n is held as part of one.
func (m *model) leaseOf(n *mnode) *mlease {
	l := n.op.lease
	if n.op.status != opHeld || l == nil || l.end != leaseLive || !slices.Contains(l.own, n) {
		return nil
	}
	return l
}

// deleteNode applies an operator's deletion of n.
func (m *model) deleteNode(n *mnode) {
	if l := m.leaseOf(n); l != nil {
		m.lose(l, zklock.LossNodeDeleted, boundHandoff)
		return
	}
	x := n.op
	if x.status != opWaiting {
		m.remove(n)
		return
	}
	if i := slices.Index(x.parts, n.res); i < x.part {
		// a part it held while waiting for another: start over
		m.restart(x, boundHandoff)
		return
	}
	m.remove(n)
	p := m.enqueue(x, n.res, boundHandoff)
	p.lazy = &mghost{mode: n.mode, seq: n.seq}
	p.since = time.Time{}
}

// expire applies the expiry of client c's session: its leases are lost,
// its waiters queue again from their first part on the new session.
func (m *model) expire(c int) {
	for _, x := range m.ops {
		if x.client == c && x.status == opHeld && x.lease.end == leaseLive && len(x.lease.own) > 0 {
			m.lose(x.lease, zklock.LossSessionExpired, boundExpiry)
		}
	}
	for _, x := range m.ops {
		if x.client == c && x.status == opWaiting {
			m.restart(x, boundExpiry)
		}
	}
}

// wouldHold says whether an acquire of res in mode would hold at once.
func (m *model) wouldHold(res []string, mode zklock.Mode) bool {
	for _, r := range res {
		if !m.mayHold(r, mode, m.seen(r, nil)) {
			return false
		}
	}
	return true
}

// limitLive reports whether resource r's queue has a semaphore node, so
// that its limit is known to every backend: with only nodes of other
// modes left, the MemoryLocker has forgotten it, where ZooKeeper's queue
// znode may keep it.
func (m *model) limitLive(r string) bool {
	return slices.ContainsFunc(m.queues[r], func(n *mnode) bool { return n.mode == zklock.Semaphore })
}

func (m *model) String() string {
	var b strings.Builder
	for _, r := range m.resources() {
		fmt.Fprintf(&b, "  queue %s:", r)
		if l := m.limits[r]; l > 0 {
			fmt.Fprintf(&b, " (limit %d)", l)
		}
		for _, n := range m.queues[r] {
			fmt.Fprintf(&b, " %s", n)
		}
		b.WriteByte('\n')
	}
	for _, x := range m.ops {
		if x.status == opFailed && x.since.Before(m.now.Add(-time.Minute)) {
			continue
		}
		fmt.Fprintf(&b, "  %s\n", x)
	}
	return b.String()
}

func (n *mnode) String() string {
	s := fmt.Sprintf("op%d:%s", n.op.id, modeLetter(n.mode))
	switch {
	case n.known:
		s += fmt.Sprintf("#%d", n.seq)
	case n.lazy != nil:
		s += "#lazy"
	default:
		s += "#pending"
	}
	if n.held {
		s += "*"
	}
	return s
}

func (x *mop) String() string {
	s := fmt.Sprintf("op%d c%d %v %s", x.id, x.client, x.res, x.mode)
	switch x.status {
	case opWaiting:
		s += fmt.Sprintf(" waiting for %s", x.parts[x.part])
	case opHeld:
		l := x.lease
		s += fmt.Sprintf(" held: lease of op%d refs %d", l.id, l.refs)
		switch l.end {
		case leaseReleased:
			s += " released"
		case leaseLost:
			s += fmt.Sprintf(" lost (%v)", l.reason)
		}
		if x.objReleased {
			s += ", its Lease released"
		}
	case opFailed:
		s += fmt.Sprintf(" failed: %v", x.want)
	}
	return s
}

func modeLetter(m zklock.Mode) string {
	switch m {
	case zklock.Read:
		return "R"
	case zklock.Write:
		return "W"
	case zklock.Semaphore:
		return "S"
	}
	return "X"
}
