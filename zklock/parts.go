package zklock

import (
	"context"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
	"github.com/zklockkit/zklockkit/zklock/internal/queue"
)

// clientParts takes one attempt's parts, in canonical order: a part a
// lease of the context holds is re-entered (borrowed from it), the others
// are waited for, a step of their waiter at a time (queue.Waiter.Step). A
// multi-resource acquire stops waiting when a part it holds is lost
// (errs.ErrPartLost).
type clientParts struct {
	a      *acquisition
	c      *Client
	part   int           // the index in a.ts of the part under way
	active bool          // its waiter is w
	req    queue.Request // what w asks for
	w      queue.Waiter  // one part at a time
	park   queue.Park    // what w waits for
	lost   *partsLost
}

// partsLost ends the waits of a multi-resource acquire when a part it
// holds is lost (see watchParts).
type partsLost struct {
	ctx  context.Context // the acquire's, ended then too (errs.ErrPartLost)
	stop func()          // undoes that
}

// watchParts makes the loss of a part already held end the waits of a
// multi-resource acquire (errs.ErrPartLost), for a lease made now. A
// single-resource acquire makes its lease when it holds.
func (p *clientParts) watchParts() {
	a := p.a
	if len(a.ts) == 1 {
		return
	}
	ctx, cancel := context.WithCancelCause(a.ctx)
	stop := context.AfterFunc(a.lease().ctx, func() { cancel(errs.ErrPartLost) })
	p.lost = &partsLost{ctx: ctx, stop: func() {
		stop()
		cancel(nil)
	}}
}

// waitCtx is the context of the parts' waits.
func (p *clientParts) waitCtx() context.Context {
	if p.lost != nil {
		return p.lost.ctx
	}
	return p.a.ctx
}

// done ends the attempt's hook (see watchParts).
func (p *clientParts) done() {
	if p.lost != nil {
		p.lost.stop()
		p.lost = nil
	}
}

// begin sets up the waiter of part t.
func (p *clientParts) begin(t *target) {
	a, c := p.a, p.c
	delay := c.cfg.nodeWatchDelay
	if len(a.ts) > 1 {
		// A part of a multi-resource acquire is held while the others
		// are awaited: not a short critical section, so watch at once.
		delay = 0
	}
	p.req = queue.Request{Resource: t.resource, Parent: t.parent, Kind: layout.Kind(a.cfg.mode), Limit: a.cfg.limit,
		Try: a.cfg.try, Raw: a.cfg.raw, Layout: a.cfg.layout, Data: c.partData(a, t.parent), DeleteBy: a.deleteBy(),
		WatchDelay: delay, Reporter: p, GivenUp: &a.gaveUp}
	p.w = c.q.Waiter(&p.req, &p.park)
}

func (p *clientParts) next(woke queue.Wake) (parker, target, int64, error) {
	a := p.a
	for {
		if !p.active {
			for p.part < len(a.ts) {
				t := a.ts[p.part]
				if l := a.lenders[t.parent]; l == nil || !a.lease().borrow(l, t.parent) {
					break
				}
				p.part++
			}
			if p.part == len(a.ts) {
				p.done()
				return nil, target{}, 0, nil
			}
			p.begin(&a.ts[p.part])
			p.active, woke = true, queue.WokeNone
		}
		t := a.ts[p.part]
		// A step runs on a runner unless the shell runs it on the
		// acquiring goroutine (a.inline: see runStep).
		parked, err := p.w.Step(p.waitCtx(), woke, !a.inline)
		if parked != nil {
			return parked, target{}, 0, nil
		}
		if err == nil {
			err = p.hold(t)
		}
		if err != nil {
			p.done()
			return nil, t, p.w.Session(), err
		}
		p.active = false // this part is held: on to the next
		p.part++
	}
}

// hold adds the node the waiter holds to the lease, and grants it to the
// lease. A multi-resource lease that lost a part meanwhile has ended: the
// node goes back, and the acquire queues again for every part.
func (p *clientParts) hold(t target) error {
	h := p.w.Held()
	st := p.a.lease()
	if !st.addHold(&heldNode{resource: t.resource, parent: t.parent, path: h.Path, token: h.Token, sessionID: h.SessionID, node: h.Node}) {
		return p.w.Fail(errs.ErrPartLost)
	}
	p.w.Grant(st)
	return nil
}

func (p *clientParts) waiting() (target, int64) { return p.a.ts[p.part], p.w.Session() }

// quick: a single-resource acquire whose park ended with the node ahead
// gone, where that hands it the lock with no round trip.
func (p *clientParts) quick(woke queue.Wake) bool {
	return len(p.a.ts) == 1 && p.active && p.w.Quick(woke)
}

func (p *clientParts) abandon(err error) {
	_ = p.w.Fail(err)
	p.done()
}

// Queued reports the position of the waiter's node to the observers.
func (p *clientParts) Queued(ctx context.Context, first bool, pos int, path string, token, sid int64) {
	a := p.a
	kind := EventPosition
	if first {
		kind = EventEnqueued
	}
	a.b.observe(ctx, Event{Kind: kind, ID: a.id, Resource: p.req.Resource, Resources: a.resources, Mode: a.cfg.mode,
		Path: path, Position: pos, Token: token, SessionID: sid})
}

// Diverged reports a diverged listing of the waiter's queue to the
// observers.
func (p *clientParts) Diverged(ctx context.Context, path string, sid int64) {
	a := p.a
	a.b.observe(ctx, Event{Kind: EventDiverged, ID: a.id, Resource: p.req.Resource, Resources: a.resources, Mode: a.cfg.mode,
		Path: path, SessionID: sid})
}
