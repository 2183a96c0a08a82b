package zklock_test

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// How the runner compares a system with the model (see model_run_test.go).

// issue is one way the system differs from the model.
type issue struct {
	key   string
	msg   string
	since time.Time // zero: from when it is first seen
	bound time.Duration
	fatal bool // waiting cannot mend it
}

func bound(k boundKind) time.Duration {
	switch k {
	case boundTry:
		return modelTryBound
	case boundWait:
		return modelWaitLimit + modelHandoff
	case boundExpiry:
		return modelExpiry
	}
	return modelHandoff
}

func (r *runner) compare(obs observation) []issue {
	var out []issue
	add := func(is issue) { out = append(out, is) }
	for _, x := range r.m.ops {
		o := r.ops[x.id]
		if o == nil {
			continue
		}
		s := o.snap()
		r.noteAnswer(o, x, s)
		if r.triedOut(x, s) {
			continue
		}
		switch x.status {
		case opWaiting:
			if s.done {
				add(issue{key: fmt.Sprintf("early%d", x.id), bound: modelHandoff,
					msg: fmt.Sprintf("op%d returned (%s), the model says it waits for %s", x.id, answer(s), x.parts[x.part])})
			}
		case opHeld:
			switch {
			case !s.done:
				add(issue{key: fmt.Sprintf("held%d", x.id), since: x.since, bound: bound(x.bound),
					msg: fmt.Sprintf("op%d may hold %v, and has not returned", x.id, x.res)})
			case s.err != nil:
				add(issue{fatal: true, msg: fmt.Sprintf("op%d failed (%v), the model says it holds %v", x.id, s.err, x.res)})
			default:
				out = append(out, r.compareLease(obs, x, s)...)
			}
		case opFailed:
			switch {
			case !s.done:
				add(issue{key: fmt.Sprintf("fail%d", x.id), since: x.since, bound: bound(x.bound),
					msg: fmt.Sprintf("op%d must fail with %v, and has not returned", x.id, x.want)})
			case s.err == nil:
				add(issue{fatal: true, msg: fmt.Sprintf("op%d holds %v, the model says it fails with %v", x.id, shortPaths(paths(s.lease)), x.want)})
			case !errors.Is(s.err, x.want):
				add(issue{fatal: true, msg: fmt.Sprintf("op%d failed with %v, the model says %v", x.id, s.err, x.want)})
			case x.onBlock != nil && x.blockBound == boundWait && x.want == x.onBlock && s.at.Sub(s.issued) < modelWaitLimit:
				add(issue{fatal: true, msg: fmt.Sprintf("op%d gave up after %v, before its wait of %v", x.id, s.at.Sub(s.issued), modelWaitLimit)})
			}
		}
	}
	// The queues, node by node.
	for _, res := range r.m.resources() {
		real := map[[2]int64]realNode{}
		for _, n := range obs.nodes[res] {
			real[[2]int64{int64(r.opOf(n)), n.seq}] = n
		}
		for _, n := range r.m.queues[res] {
			switch {
			case n.known:
				key := [2]int64{int64(n.op.id), n.seq}
				if rn, ok := real[key]; !ok {
					add(issue{fatal: true, msg: fmt.Sprintf("node %s of op%d on %s is gone, the model says it stays", n, n.op.id, res)})
				} else if rn.mode != n.mode {
					add(issue{fatal: true, msg: fmt.Sprintf("node %s is a %v node, the model says %v", rn.path, rn.mode, n.mode)})
				}
				delete(real, key)
			case n.lazy != nil:
				// may queue again later
			default:
				add(issue{key: fmt.Sprintf("queue%d/%s/%d", n.op.id, res, n.order), since: n.since, bound: bound(n.bound),
					msg: fmt.Sprintf("op%d has not queued on %s", n.op.id, res)})
			}
		}
		for key, rn := range real {
			add(issue{key: "extra" + rn.path, bound: modelHandoff,
				msg: fmt.Sprintf("node %s (op%d) on %s, the model says there is none", rn.path, key[0], res)})
		}
	}
	return out
}

// triedOut accepts a try that gave up on a slow ZooKeeper: a try never
// waits on ZooKeeper past min(session timeout/3, 1s) and then answers
// ErrUnavailable, leaving no node. On a loaded machine that is a right
// answer; the model is told, and the run counts it.
func (r *runner) triedOut(x *mop, s opSnap) bool {
	if x.onBlock != zklock.ErrLocked || !s.done || !errors.Is(s.err, zklock.ErrUnavailable) ||
		x.status == opFailed && errors.Is(x.want, zklock.ErrUnavailable) {
		return false
	}
	if took := s.at.Sub(s.issued); took < modelTryGiveUp {
		return false // too soon: compare reports it
	}
	if x.status == opHeld {
		if x.lease.end != leaseLive || x.lease.refs != 1 {
			return false
		}
		x.lease.end = leaseReleased
	}
	r.note("       op%d gave up on ZooKeeper after %v: %v", x.id, s.at.Sub(s.issued).Round(time.Millisecond), s.err)
	r.stats.triedOut.Add(1)
	r.m.fail(x, s.err, boundTry)
	r.m.settle()
	return true
}

// compareLease checks the lease op x returned against the model's.
func (r *runner) compareLease(obs observation, x *mop, s opSnap) []issue {
	l := x.lease
	err := s.lease.Err()
	if x.countedDown {
		// Released while another reference held the lease on: this Lease
		// has ended at its Release, whatever the lease does since.
		if !errors.Is(err, zklock.ErrReleased) {
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's Lease, released while another held the lease on, says %v; want ErrReleased", x.id, err)}}
		}
		return nil
	}
	switch l.end {
	case leaseLive:
		if err != nil {
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease ended (%v), the model says it is held", x.id, err)}}
		}
		if l.id != x.id {
			return nil // a re-entry: checked with the lease's own op
		}
		// Its parts, in canonical order: its own nodes, and the nodes of
		// the lease it re-entered parts of; each part's token is its
		// node's (czxid on ZooKeeper), the lease's the largest.
		var want []zklock.Part
		var token int64
		for _, res := range l.res {
			n := x.nodes[res]
			if n == nil && l.parent != nil {
				if i := slices.IndexFunc(l.parent.own, func(p *mnode) bool { return p.res == res }); i >= 0 {
					n = l.parent.own[i]
				}
			}
			if n == nil || !n.known {
				return nil
			}
			i := slices.IndexFunc(obs.nodes[res], func(rn realNode) bool { return rn.seq == n.seq && r.opOf(rn) == n.op.id })
			if i < 0 {
				return nil // reported with the queues
			}
			rn := obs.nodes[res][i]
			want = append(want, zklock.Part{Resource: res, Path: rn.path, Token: rn.token})
			token = max(token, rn.token)
		}
		if got := s.lease.Parts(); !slices.Equal(got, want) {
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease has parts %v, the model says %v", x.id, got, want)}}
		}
		if got := s.lease.Token(); got != token {
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease has token %d, its nodes' largest is %d", x.id, got, token)}}
		}
	case leaseReleased:
		switch {
		case err == nil:
			return []issue{{key: fmt.Sprintf("rel%d", x.id), since: l.since, bound: modelHandoff,
				msg: fmt.Sprintf("op%d's lease is not over, the model says it was released", x.id)}}
		case !errors.Is(err, zklock.ErrReleased):
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease ended with %v, the model says released", x.id, err)}}
		}
	case leaseLost:
		var lost *zklock.LostError
		switch {
		case err == nil:
			return []issue{{key: fmt.Sprintf("lost%d", x.id), since: l.since, bound: bound(l.bound),
				msg: fmt.Sprintf("op%d's lease %v is still held, the model says it is lost (%v)", x.id, shortPaths(paths(s.lease)), l.reason)}}
		case !errors.As(err, &lost):
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease ended with %v, the model says it is lost (%v)", x.id, err, l.reason)}}
		case l.reason != 0 && lost.Reason != l.reason:
			return []issue{{fatal: true, msg: fmt.Sprintf("op%d's lease was lost for %v, the model says %v", x.id, lost.Reason, l.reason)}}
		}
		if o := r.ops[x.id]; x.lease.id == x.id && !o.lossNoted && !s.ended.IsZero() {
			o.lossNoted = true
			r.stats.lost(s.ended.Sub(l.since))
		}
	}
	return nil
}

// checkSafety checks the system alone: no two live leases conflict by the
// rule (re-entries of one lease count once). A lease the model knows lost
// may not know it yet: ZooKeeper tells other sessions first.
func (r *runner) checkSafety(obs observation) {
	type holder struct {
		group int
		mode  zklock.Mode
	}
	byRes := map[string][]holder{}
	for _, x := range r.m.ops {
		o := r.ops[x.id]
		if o == nil {
			continue
		}
		s := o.snap()
		if !s.done || s.lease == nil || s.lease.Err() != nil {
			continue
		}
		if x.status == opHeld && x.lease.end == leaseLost {
			continue
		}
		root := func(l *mlease) int {
			for l.parent != nil {
				l = l.parent
			}
			return l.id
		}
		group := x.id
		if x.lease != nil {
			group = root(x.lease)
		}
		for _, p := range paths(s.lease) {
			res := r.sys.resourceOf(p)
			g := group
			if l := x.lend[res]; x.lease == nil && l != nil {
				// Held, but the model has not granted it yet (its node's
				// place was unknown, after the operator deleted it): a
				// part it re-enters is its lender's, held once.
				g = root(l)
			}
			if !slices.ContainsFunc(byRes[res], func(h holder) bool { return h.group == g }) {
				byRes[res] = append(byRes[res], holder{g, s.lease.Mode()})
			}
		}
	}
	for res, hs := range byRes {
		sems, readers, others := 0, 0, 0
		for _, h := range hs {
			switch h.mode {
			case zklock.Semaphore:
				sems++
			case zklock.Read:
				readers++
			default:
				others++
			}
		}
		ok := true
		switch {
		case sems > 0 && len(hs) > sems: // a semaphore's holders with a lease of another mode
			ok = false
		case sems > r.m.limits[res]:
			ok = false
		case others > 1, others == 1 && readers > 0:
			ok = false
		}
		if !ok {
			r.fail("step %d: SAFETY: %d leases hold %s at once: %v", r.cur, len(hs), res, hs)
		}
	}
}
