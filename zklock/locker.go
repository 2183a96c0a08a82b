package zklock

import "context"

// Locker is what the adapters (HTTP middleware, gRPC interceptors,
// generated wrappers) and your own code depend on: acquire one resource,
// or several all or nothing, and get a Lease. Three implementations ship:
// *Client over ZooKeeper, NewMemoryLocker for unit tests, and NewLocker
// over any Driver (etcd, a database, a fake of your own).
//
// Every Locker keeps one contract (checked by package lockertest against
// all three):
//
//   - Acquire waits until the resource is held, ctx ends (the context's
//     error), or MaxWait passes (ErrWaitTimeout). With Try it never waits
//     for other holders: ErrLocked. Try with MaxWait is ErrInvalidOption;
//     a bad name, a name listed twice, or no name is ErrInvalidResource.
//   - AcquireAll holds every resource or none, in a canonical order.
//   - A Lease's Err is nil while it is held, ErrReleased once released,
//     and a *LostError (matching ErrLeaseLost) once lost; Done closes and
//     Lease.Context is cancelled (its cause is Err) when it ends, lost
//     before anyone else can hold what it held. Release ends it once; a
//     second Release is ErrReleased.
//   - Token is a fencing token: it grows with every lease of a resource
//     (Parts gives each resource's own).
//   - An acquire under a lease's Context re-enters that lease (counted)
//     for the resources it holds; a read lease is not upgraded
//     (ErrUpgrade).
type Locker interface {
	// Acquire blocks until resource is locked (see Client.Acquire).
	Acquire(ctx context.Context, resource string, opts ...AcquireOption) (*Lease, error)
	// AcquireAll locks every resource, all or nothing, in canonical order.
	AcquireAll(ctx context.Context, resources []string, opts ...AcquireOption) (*Lease, error)
}

var (
	_ Locker = (*Client)(nil)
	_ Locker = (*MemoryLocker)(nil)
)
