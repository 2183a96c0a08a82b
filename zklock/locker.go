package zklock

import "context"

// Locker is what adapters (HTTP middleware, gRPC interceptors, generated
// wrappers) depend on: acquire one resource, or several all or nothing, and
// get a Lease. *Client implements it over ZooKeeper; NewMemoryLocker gives
// an in-process implementation with the same semantics for unit tests of
// code that uses locks.
type Locker interface {
	// Acquire blocks until resource is locked (see Client.Acquire).
	Acquire(ctx context.Context, resource string, opts ...AcquireOption) (*Lease, error)
	// AcquireAll locks every resource, all or nothing, in canonical order.
	AcquireAll(ctx context.Context, resources []string, opts ...AcquireOption) (*Lease, error)
}

var _ Locker = (*Client)(nil)
