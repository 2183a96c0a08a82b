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
	return c.acquire(ctx, resources, newAcquireConfig(opts))
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

// acquireParts takes every part for st, in canonical order: a part a lease
// of the context holds is re-entered (borrowed from it), the others are
// waited for. A multi-resource acquire stops waiting when a part it holds
// is lost (errPartLost).
func (c *Client) acquireParts(ctx context.Context, st *leaseState, p acquireParts) (failed target, sid int64, err error) {
	multi := len(p.ts) > 1
	if multi {
		pctx, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(st.ctx, func() { cancel(errPartLost) })
		defer func() {
			stop()
			cancel(nil)
		}()
		ctx = pctx
	}
	data := c.nodeData(p.cfg)
	for _, t := range p.ts {
		if l := p.lenders[t.parent]; l != nil && st.borrow(l, t.parent) {
			continue
		}
		w := &waiter{c: c, st: st, target: t, cfg: p.cfg, data: data, multi: multi, deleteBy: p.deleteBy}
		if err := w.wait(ctx); err != nil {
			return t, w.sid, err
		}
	}
	return target{}, 0, nil
}

// annotate says so when a wait ended while ZooKeeper was out of reach.
func (c *Client) annotate(err error) error {
	if isCtxErr(err) && !errors.Is(err, ErrUnavailable) && c.unreachable() {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// acquired wakes the loss watchdog if it sleeps.
func (c *Client) acquired() { c.kick() }
