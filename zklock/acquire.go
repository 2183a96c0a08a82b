package zklock

import (
	"context"
)

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
	return newAcquisition(ctx, c.b, []string{resource}, opts).acquire()
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
	return newAcquisition(ctx, c.b, resources, opts).acquire()
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
