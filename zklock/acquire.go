package zklock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
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
	return c.acquire(ctx, []string{resource}, newAcquireConfig(opts))
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
	cfg := newAcquireConfig(opts)
	if len(resources) == 0 {
		return nil, &ResourceError{Reason: "no resources given"}
	}
	return c.acquire(ctx, resources, cfg)
}

// target is one resource of an acquire, resolved to its queue's znode.
type target struct {
	resource string
	parent   string
}

func (c *Client) targets(resources []string, raw bool) ([]target, error) {
	ts := make([]target, 0, len(resources))
	for _, r := range resources {
		p, err := c.queuePath(r, raw)
		if err != nil {
			return nil, err
		}
		ts = append(ts, target{r, p})
	}
	slices.SortFunc(ts, func(a, b target) int { return strings.Compare(a.parent, b.parent) })
	for i := 1; i < len(ts); i++ {
		if ts[i].parent == ts[i-1].parent {
			return nil, &ResourceError{Resource: ts[i].resource, Reason: "listed twice"}
		}
	}
	return ts, nil
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
	if cfg.mode < Exclusive || cfg.mode > Election || cfg.mode == Election && cfg.data == nil {
		return nil, fmt.Errorf("%w: mode %v: acquire Exclusive, Read or Write, a semaphore with Limit, an election with Campaign or Lead", ErrInvalidOption, cfg.mode)
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.mode == Semaphore && cfg.limit < 1 {
		return nil, fmt.Errorf("%w: semaphore limit must be at least 1", ErrInvalidOption)
	}
	ts, err := c.targets(resources, cfg.raw)
	if err != nil {
		return nil, err
	}
	name := resources[0]
	if len(resources) > 1 {
		name = strings.Join(resources, ",")
	}
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = t.parent
	}
	whole, lenders, err := reenter(ctx, c, keys, cfg.mode)
	if whole != nil || err != nil {
		return whole, err
	}
	data := c.owner
	switch {
	case cfg.data != nil:
		data = cfg.data
	case cfg.label != "":
		host, _ := os.Hostname()
		data, _ = json.Marshal(Owner{Host: host, PID: os.Getpid(), Label: cfg.label})
	}
	if len(data) > MaxValueLen {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrValueTooLarge, len(data), MaxValueLen)
	}
	st, start, wctx, cancel := beginAcquire(ctx, c, resources, cfg)
	defer cancel()
	p := parts{c: c, ts: ts, lenders: lenders, cfg: cfg, data: data}
	if cfg.try {
		// A try never waits for the queue, nor on ZooKeeper past the
		// answer bound: while ZooKeeper is away it answers ErrUnavailable
		// (errTryBound) within the bound, and its on-the-spot delete of a
		// node that found the lock busy stops at the same deadline.
		var cancelTry context.CancelFunc
		wctx, cancelTry = context.WithTimeoutCause(wctx, c.answerBound(), errTryBound)
		defer cancelTry()
		p.deleteBy, _ = wctx.Deadline()
	}
	for {
		failed, sid, err := p.acquire(wctx, st)
		if err == nil {
			break
		}
		// give back what was taken; the lease never existed for the caller
		st.abandon()
		if errors.Is(err, errPartLost) && wctx.Err() == nil {
			// A part already held was lost while we waited for another.
			// Keeping the others while queueing again for it would wait
			// out of canonical order (a deadlock with an acquire of the
			// same set); so everything was given back: queue again for
			// every part, within the same context and MaxWait.
			c.log.Debug("zklock: a part of a multi-resource acquire was lost; enqueueing again for all", "resources", name)
			st = newLeaseState(c, st.id, resources, cfg.mode)
			if _, p.lenders, err = reenter(ctx, c, keys, cfg.mode); err == nil {
				continue
			}
		}
		if errors.Is(err, errPartLost) {
			err = ctxErr(wctx) // the caller's context ended too: that is the news
		}
		if isCtxErr(err) && !errors.Is(err, ErrUnavailable) && c.unreachable() {
			// the wait ended while ZooKeeper was out of reach: say so
			err = fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		err = fmt.Errorf("zklock: acquire %q: %w", failed.resource, err)
		c.observe(ctx, Event{Kind: EventFailed, ID: st.id, Resource: name, Resources: resources, Mode: cfg.mode, Wait: time.Since(start), Err: err, SessionID: sid})
		return nil, err
	}
	st.mu.Lock()
	st.acquired = time.Now()
	st.waited = st.acquired.Sub(start)
	st.mu.Unlock()
	c.observe(ctx, Event{Kind: EventAcquired, ID: st.id, Resource: name, Resources: resources, Mode: cfg.mode, Path: st.holds[0].path,
		Wait: st.waited, Token: st.Token(), SessionID: st.holds[0].sessionID, Time: st.acquired})
	c.kick()
	return &Lease{st: st}, nil
}

// errPartLost ends the wait of a multi-resource acquire one of whose parts,
// already held, was lost: the acquire gives everything back and queues
// again (see Client.acquire). It never reaches the caller.
var errPartLost = errors.New("zklock: a part already held was lost")

// parts is one acquire's resources and how to take them.
type parts struct {
	c        *Client
	ts       []target
	lenders  map[string]*leaseState // parts held by a lease in the context (re-entered)
	cfg      acquireConfig
	data     []byte
	deleteBy time.Time // see waiter.deleteBy
}

// acquire takes every part for st, in canonical order: a part a lease of
// the context holds is re-entered (borrowed from it), the others are
// waited for. On error it reports the part that failed and its session.
func (p *parts) acquire(ctx context.Context, st *leaseState) (failed target, sid int64, err error) {
	multi := len(p.ts) > 1
	if multi {
		// The loss of a part already held ends the wait for the others.
		pctx, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(st.ctx, func() { cancel(errPartLost) })
		defer func() {
			stop()
			cancel(nil)
		}()
		ctx = pctx
	}
	for _, t := range p.ts {
		if l := p.lenders[t.parent]; l != nil && st.borrow(l, t.parent) {
			continue
		}
		w := &waiter{c: p.c, st: st, target: t, cfg: p.cfg, data: p.data, multi: multi, deleteBy: p.deleteBy}
		if err := w.wait(ctx); err != nil {
			return t, w.sid, err
		}
	}
	return target{}, 0, nil
}
