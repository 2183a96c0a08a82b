package zklock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// errRestart tells the wait loop to enqueue again with a fresh node: our
// node vanished (session expired, or someone deleted it).
var errRestart = errors.New("zklock: restart")

// Acquire blocks until the lock on resource is held, ctx ends, or the wait
// limit (MaxWait) passes, and returns the lease. If ctx carries a lease of
// this client on the same resource (see Lease.Context), the acquire
// re-enters it instead of waiting.
//
// Errors: *ResourceError (ErrInvalidResource) for a bad name; ErrLocked with
// Try; ErrWaitTimeout; the context's error (also matching ErrUnavailable if
// ZooKeeper was unreachable at the time); ErrClosed; ErrUpgrade.
func (c *Client) Acquire(ctx context.Context, resource string, opts ...AcquireOption) (*Lease, error) {
	// Not through acquireOpts: every frame on this goroutine's stack
	// counts while it waits (see parked.park).
	return newAcquisition(ctx, c, []string{resource}, opts).acquire()
}

// TryAcquire is Acquire with Try: it never waits for another holder and
// returns ErrLocked when the resource is busy, leaving no node behind.
func (c *Client) TryAcquire(ctx context.Context, resource string, opts ...AcquireOption) (*Lease, error) {
	return c.Acquire(ctx, resource, append(opts, Try())...)
}

// AcquireAll acquires every resource, all or nothing, in one canonical order
// (sorted by znode path) so that two callers asking for {A,B} and {B,A}
// cannot deadlock. On failure or cancellation everything already taken is
// released. The lease is lost as soon as any part of it is lost.
func (c *Client) AcquireAll(ctx context.Context, resources []string, opts ...AcquireOption) (*Lease, error) {
	return newAcquisition(ctx, c, resources, opts).acquire()
}

// QueuePath returns the znode that holds resource's lock queue.
func (c *Client) QueuePath(resource string, opts ...QueueOption) (string, error) {
	return c.queuePath(resource, newQueueConfig(opts).raw)
}

func (c *Client) queuePath(resource string, raw bool) (string, error) {
	if raw {
		if err := validateZnodePath(resource); err != nil {
			return "", err
		}
		if c.cfg.chroot != "" && resource != "/" {
			return c.cfg.chroot + resource, nil
		}
		return resource, nil
	}
	if err := ValidateResource(resource); err != nil {
		return "", err
	}
	return c.cfg.root + "/" + EscapeResource(resource), nil
}

func (c *Client) acquire(ctx context.Context, resources []string, cfg acquireConfig) (*Lease, error) {
	return acquireWith(ctx, c, resources, cfg)
}

// key is the Client's queue key: the queue's znode path.
func (c *Client) key(resource string, raw bool) (string, error) { return c.queuePath(resource, raw) }

// check refuses node data ZooKeeper would refuse.
func (c *Client) check(cfg acquireConfig) error {
	if n := len(c.nodeData(cfg)); n > MaxValueLen {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrValueTooLarge, n, MaxValueLen)
	}
	return nil
}

// nodeData is the data of an acquire's lock nodes: the election value, or
// the owner record (with the lease's label, if it has one).
func (c *Client) nodeData(cfg acquireConfig) []byte {
	switch {
	case cfg.data != nil:
		return cfg.data
	case cfg.label != "":
		host, _ := os.Hostname()
		data, _ := json.Marshal(Owner{Host: host, PID: os.Getpid(), Label: cfg.label})
		return data
	}
	return c.owner
}

// takeParts starts taking a's parts on ZooKeeper (see clientParts).
func (c *Client) takeParts(a *acquisition) partTaker {
	p := &clientParts{a: a, c: c}
	p.watchParts()
	return p
}

// steps returns the runners of the Client's steps.
func (c *Client) steps() *stepRunners { return &c.stepRunners }

// clientParts takes one attempt's parts, in canonical order: a part a
// lease of the context holds is re-entered (borrowed from it), the others
// are waited for, a step of their waiter at a time (waiter.step). A
// multi-resource acquire stops waiting when a part it holds is lost
// (errPartLost).
type clientParts struct {
	a      *acquisition
	c      *Client
	part   int    // the index in a.ts of the part under way
	active bool   // its waiter is w
	w      waiter // one part at a time
	park   parked // what w waits for
	lost   *partsLost
}

// partsLost ends the waits of a multi-resource acquire when a part it
// holds is lost (see watchParts).
type partsLost struct {
	ctx  context.Context // the acquire's, ended then too (errPartLost)
	stop func()          // undoes that
}

// watchParts makes the loss of a part already held end the waits of a
// multi-resource acquire (errPartLost), for a lease made now. A
// single-resource acquire makes its lease when it holds.
func (p *clientParts) watchParts() {
	a := p.a
	if len(a.ts) == 1 {
		return
	}
	ctx, cancel := context.WithCancelCause(a.ctx)
	stop := context.AfterFunc(a.lease().ctx, func() { cancel(errPartLost) })
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

func (p *clientParts) next(woke wake) (*parked, target, int64, error) {
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
			p.w = waiter{acquisition: a, c: p.c, target: &a.ts[p.part], park: &p.park}
			p.active, woke = true, wokeNone
		}
		ctx := p.waitCtx()
		wctx := ctx
		if !a.inline {
			wctx = stepContext(ctx) // requests on this goroutine (inStep)
		}
		parked, err := p.w.step(wctx, woke)
		if parked != nil {
			if !parked.covered {
				// A covered park needs no case for our node's end: the
				// cover fires then too (cover.go), and each case of a
				// parked select holds a runtime record of its own.
				parked.gone = p.w.n.entry.gone
			}
			parked.end = ctx.Done()
			return parked, target{}, 0, nil
		}
		if err != nil {
			p.done()
			return nil, *p.w.target, p.w.sid, err
		}
		p.active = false // this part is held: on to the next
		p.part++
	}
}

func (p *clientParts) waiting() (target, int64) { return *p.w.target, p.w.sid }

// quick: a single-resource acquire whose park ended with the node ahead
// gone, where that hands it the lock with no round trip (a direct
// hand-off, or a local one once the lease ahead has ended).
func (p *clientParts) quick(woke wake) bool {
	if len(p.a.ts) != 1 || woke != wokeFired || !p.active || p.w.n == nil {
		return false
	}
	wf := &p.w.n.wait
	return (wf.kind == waitPred && wf.keep || wf.kind == waitLease) && p.w.handoffSafe()
}

func (p *clientParts) abandon(err error) {
	_ = p.w.fail(err)
	p.done()
}

// annotate says so when a wait ended while ZooKeeper was out of reach.
func (c *Client) annotate(err error) error {
	if isCtxErr(err) && !errors.Is(err, ErrUnavailable) && c.unreachable() {
		return errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// acquired wakes the loss watchdog if it sleeps.
func (c *Client) acquired() { c.kick() }
