package zklock_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// stepKind is what one step of a model-based sequence does.
type stepKind int

const (
	stAcquire    stepKind = iota // Acquire or AcquireAll; waits until held or cancelled
	stTry                        // with Try
	stMaxWait                    // with MaxWait(wait), on a busy resource
	stDeadline                   // under a context with a deadline wait away, on a busy resource
	stCancel                     // cancel a waiting acquire's context
	stRelease                    // release an acquire's lease (again, or after a loss, too)
	stDowngrade                  // downgrade an acquire's lease
	stReenter                    // acquire under the context of an acquire's lease
	stDelete                     // an operator deletes one of an acquire's nodes
	stExpire                     // a client's session expires
	stMismatch                   // a semaphore acquire with a limit other than its live queue's
	stTryMaxWait                 // Try together with MaxWait
	stDrop                       // a client's connection drops (its session lives); while it is down, an operator deletes one of an acquire's nodes
)

// step is one step of a sequence. Acquires are numbered (op) in the order
// steps start them.
type step struct {
	kind   stepKind
	client int
	op     int // the acquire it acts on
	newOp  int // the acquire it starts
	res    []string
	mode   zklock.Mode
	limit  int
	wait   time.Duration
	try    bool // stReenter: with Try
	// diverge (stAcquire): the client reads its queue's listings as a
	// server that diverged from the ensemble would show them, until the
	// acquire has reported one (see zkSystem.diverge).
	diverge bool
}

func (s step) String() string {
	call := func() string {
		name := "Acquire"
		if len(s.res) > 1 {
			name = "AcquireAll"
		}
		args := strings.Join(s.res, " ")
		if len(s.res) > 1 {
			args = "[" + args + "]"
		}
		if s.mode == zklock.Semaphore {
			args += fmt.Sprintf(", limit %d", s.limit)
		} else {
			args += ", " + s.mode.String()
		}
		return fmt.Sprintf("c%d op%d = %s(%s", s.client, s.newOp, name, args)
	}
	switch s.kind {
	case stAcquire:
		if s.diverge {
			return call() + ") reading a diverged server's listings"
		}
		return call() + ")"
	case stTry:
		return call() + ", Try)"
	case stMaxWait:
		return call() + fmt.Sprintf(", MaxWait(%v))", s.wait)
	case stDeadline:
		return call() + fmt.Sprintf(") under a deadline %v away", s.wait)
	case stCancel:
		return fmt.Sprintf("cancel op%d", s.op)
	case stRelease:
		return fmt.Sprintf("release op%d", s.op)
	case stDowngrade:
		return fmt.Sprintf("op%d = downgrade op%d", s.newOp, s.op)
	case stReenter:
		if s.try {
			return call() + fmt.Sprintf(", Try) under op%d's lease", s.op)
		}
		return call() + fmt.Sprintf(") under op%d's lease", s.op)
	case stDelete:
		return fmt.Sprintf("operator deletes op%d's node on %s", s.op, s.res[0])
	case stExpire:
		return fmt.Sprintf("c%d's session expires", s.client)
	case stDrop:
		return fmt.Sprintf("c%d's connection drops; while it is down, the operator deletes op%d's node on %s", s.client, s.op, s.res[0])
	case stMismatch:
		return call() + ") on a live queue of another limit"
	case stTryMaxWait:
		return call() + ", Try, MaxWait)"
	}
	return fmt.Sprintf("step(%d)", int(s.kind))
}

// apply performs s on the model and settles it. It returns what the
// step's own call must return (Release, Downgrade) and false, changing
// nothing, if the step does not apply in this state (a sequence made on
// one run can meet another state on another, see model_test.go).
func (m *model) apply(s step, index int) (want error, ok bool) {
	defer func() {
		m.settle()
		m.quiet = nil
	}()
	newOp := func(parts []string) *mop {
		x := &mop{id: s.newOp, client: s.client, step: index, res: s.res, mode: s.mode, parts: parts}
		m.addOp(x)
		m.quiet = x
		return x
	}
	switch s.kind {
	case stAcquire, stTry, stMaxWait, stDeadline:
		if s.kind != stAcquire && m.lazyOn(s.res) {
			return nil, false
		}
		x := newOp(s.res)
		switch s.kind {
		case stTry:
			x.onBlock, x.blockBound, x.grantBound, x.nextBound = zklock.ErrLocked, boundTry, boundTry, boundTry
		case stMaxWait:
			x.onBlock, x.blockBound = zklock.ErrWaitTimeout, boundWait
		case stDeadline:
			x.onBlock, x.blockBound = context.DeadlineExceeded, boundWait
		}
	case stMismatch:
		if !m.limitLive(s.res[0]) {
			return nil, false
		}
		x := newOp(s.res)
		m.fail(x, zklock.ErrLimitMismatch, boundTry)
	case stTryMaxWait:
		x := newOp(s.res)
		m.fail(x, zklock.ErrInvalidOption, boundTry)
	case stCancel:
		x := m.byID[s.op]
		if x == nil || x.status != opWaiting {
			return nil, false
		}
		m.fail(x, context.Canceled, boundHandoff)
	case stRelease:
		x := m.byID[s.op]
		if x == nil || x.status != opHeld {
			return nil, false
		}
		switch {
		case x.objReleased:
			return zklock.ErrReleased, true
		case x.lease.end == leaseLost:
			x.objReleased = true
			return zklock.ErrLeaseLost, true
		case x.lease.end == leaseReleased:
			x.objReleased = true
			return zklock.ErrReleased, true
		}
		x.objReleased = true
		m.unref(x.lease, boundHandoff)
		x.countedDown = x.lease.end == leaseLive
		if x.countedDown {
			// That Lease has ended: acquires waiting under its context
			// see it cancelled.
			for _, y := range m.ops {
				if y.status == opWaiting && y.ctxOp == x {
					m.fail(y, context.Canceled, boundHandoff)
				}
			}
		}
	case stDowngrade:
		return m.downgrade(s, index)
	case stReenter:
		p := m.byID[s.op]
		if p == nil || p.status != opHeld || p.objReleased || p.lease.end != leaseLive || p.lease.parent != nil || p.client != s.client {
			return nil, false
		}
		l := p.lease
		var covered []string
		for _, r := range s.res {
			if slices.Contains(l.res, r) {
				covered = append(covered, r)
			}
		}
		switch {
		case s.mode == zklock.Semaphore || l.mode == zklock.Semaphore || len(covered) == 0:
			// No re-entry: queued like any other acquire. One that would
			// wait is a Try: a waiter under a lease's context that the
			// lease's own end lets in may hold or see its context
			// cancelled, whichever comes first.
			if s.try != !m.wouldHold(s.res, s.mode) || (s.try && m.lazyOn(s.res)) {
				return nil, false
			}
			x := newOp(s.res)
			x.ctxOf, x.ctxOp = l, p
			if s.try {
				x.onBlock, x.blockBound, x.grantBound, x.nextBound = zklock.ErrLocked, boundTry, boundTry, boundTry
			}
		case l.mode == zklock.Read && s.mode != zklock.Read:
			x := newOp(nil)
			m.fail(x, zklock.ErrUpgrade, boundTry)
		case len(covered) == len(s.res):
			x := newOp(nil)
			l.refs++
			x.status, x.lease, x.since, x.bound = opHeld, l, m.now, boundTry
		default:
			x := newOp(s.res)
			x.ctxOf, x.ctxOp, x.lend = l, p, map[string]*mlease{}
			for _, r := range covered {
				x.lend[r] = l
			}
		}
	case stDelete, stDrop:
		// A dropped connection changes nothing the model sees: the
		// client is back on its session well within the loss margin.
		x := m.byID[s.op]
		if x == nil {
			return nil, false
		}
		n := x.nodes[s.res[0]]
		if n == nil || !n.known {
			return nil, false
		}
		m.deleteNode(n)
	case stExpire:
		m.expire(s.client)
	}
	return nil, true
}

// downgrade applies Lease.Downgrade of op s.op's lease.
func (m *model) downgrade(s step, index int) (error, bool) {
	x := m.byID[s.op]
	if x == nil || x.status != opHeld || x.objReleased || x.lease.end != leaseLive || x.lease.parent != nil {
		return nil, false
	}
	l := x.lease
	if m.lazyOn(l.res) {
		return nil, false // whether it is blocked depends on when the waiter queues again
	}
	if l.refs > 1 {
		return zklock.ErrDowngradeBlocked, true
	}
	if (l.mode != zklock.Write && l.mode != zklock.Exclusive) || len(l.own) != 1 {
		return zklock.ErrInvalidOption, true
	}
	n := l.own[0]
	for _, o := range m.queues[n.res] {
		if (!o.known || o.seq > n.seq) && o.mode != zklock.Read {
			return zklock.ErrDowngradeBlocked, true
		}
	}
	d := &mop{id: s.newOp, client: x.client, step: index, res: []string{n.res}, mode: zklock.Read, parts: []string{n.res}}
	m.addOp(d)
	dn := m.enqueue(d, n.res, boundHandoff)
	dn.held = true
	d.part = 1
	m.grant(d)
	d.bound = boundTry
	x.objReleased = true
	m.endLease(l, leaseReleased, 0, boundHandoff)
	return nil, true
}

// lazyOn reports whether a waiter whose node was deleted may still queue
// again on one of res, at a time the model cannot know: an acquire that
// cannot wait, or a downgrade, would then depend on that time.
func (m *model) lazyOn(res []string) bool {
	for _, r := range res {
		for _, n := range m.queues[r] {
			if n.lazy != nil {
				return true
			}
		}
	}
	return false
}
