package zklock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
)

// Driver is the contract of a lock backend, as database/sql/driver is of a
// database: implement it (over etcd, a database, or a fake of your own),
// and NewLocker makes a Locker of it that the HTTP middleware, the gRPC
// interceptors and generated wrappers take like any other. The Locker
// does what every Locker shares: it parses and checks the options,
// validates resource names and puts them in canonical order, re-enters
// leases through the context, applies MaxWait, reports events to
// observers, and gives each lease its Context. The Driver queues and
// holds.
//
// The zklock package tests its Client and MemoryLocker with the same
// conformance suite a Driver should pass: package lockertest.
type Driver interface {
	// Acquire holds every resource of req, all or nothing, and returns
	// the lease, or an error:
	//   - ErrLocked when req.Try and a resource is held or has waiters
	//     ahead (and nothing was left held);
	//   - the context's error (or its cause, context.Cause) when ctx
	//     ends first: MaxWait reaches the driver as ctx's deadline;
	//   - ErrUnavailable, ErrNoAuth, ErrLimitMismatch, ... as they apply.
	// It must honour ctx, and leave nothing held when it fails.
	Acquire(ctx context.Context, req Request) (Held, error)
}

// Request is an acquire as a Driver sees it.
type Request struct {
	// Resources are the resources to hold: valid names (or absolute
	// znode-style paths with RawPath), each once, in canonical order.
	// Parts of the acquire that a lease in the context already holds
	// are re-entered by the Locker and not requested.
	Resources []string
	// Mode is Exclusive, Read, Write, or Semaphore with Limit holders.
	// A Driver that cannot honour a mode returns ErrInvalidOption.
	Mode  Mode
	Limit int
	// Try: never wait for other holders (ErrLocked instead).
	Try bool
	// RawPath: Resources are paths, not names.
	RawPath bool
	// Label is the owner label to record with the lease, if any.
	Label string
}

// Held is a Driver's lease.
type Held interface {
	// Parts returns, for each requested resource, an identifier of what
	// holds it (Path: a node, a key) and its fencing token: a number
	// that grows with every lease of that resource the backend grants.
	Parts() []Part
	// Done is closed when the lease ends: released, or lost.
	Done() <-chan struct{}
	// Err is nil while the lease is held; once it is lost, a *LostError
	// saying why (another error counts as LossNodeDeleted). After
	// Release it is not read.
	Err() error
	// Release gives the lease back and returns once the backend has
	// confirmed; if ctx ends first it may return an error and go on in
	// the background. It is called once.
	Release(ctx context.Context) error
}

// NewLocker returns a Locker over d, reporting to observers.
func NewLocker(d Driver, observers ...Observer) Locker {
	return &driverLocker{d: d, observers: observers}
}

// driverLocker is NewLocker's Locker: the acquire shell over a Driver.
type driverLocker struct {
	d         Driver
	observers []Observer
}

var _ backend = (*driverLocker)(nil)

func (l *driverLocker) Acquire(ctx context.Context, resource string, opts ...AcquireOption) (*Lease, error) {
	return acquireWith(ctx, l, []string{resource}, newAcquireConfig(opts))
}

func (l *driverLocker) AcquireAll(ctx context.Context, resources []string, opts ...AcquireOption) (*Lease, error) {
	return acquireWith(ctx, l, resources, newAcquireConfig(opts))
}

func (l *driverLocker) key(resource string, raw bool) (string, error) {
	if raw {
		return resource, validateZnodePath(resource)
	}
	return resource, ValidateResource(resource)
}

func (l *driverLocker) check(cfg acquireConfig) error {
	if cfg.mode == Election {
		return fmt.Errorf("%w: elections are the ZooKeeper Client's", ErrInvalidOption)
	}
	return nil
}

func (l *driverLocker) answerBound() time.Duration { return 0 } // the Driver's own
func (l *driverLocker) annotate(err error) error   { return err }
func (l *driverLocker) acquired()                  {}

func (l *driverLocker) observe(ctx context.Context, e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	for _, o := range l.observers {
		o.Observe(ctx, e)
	}
}

// acquireParts borrows the parts a lease of the context holds and asks
// the Driver for the rest, in one request.
func (l *driverLocker) acquireParts(ctx context.Context, st *leaseState, p acquireParts) (target, int64, error) {
	req := Request{Mode: p.cfg.mode, Limit: p.cfg.limit, Try: p.cfg.try, RawPath: p.cfg.raw, Label: p.cfg.label}
	byKey := make(map[string]target, len(p.ts))
	for _, t := range p.ts {
		if lender := p.lenders[t.parent]; lender != nil && st.borrow(lender, t.parent) {
			continue
		}
		req.Resources = append(req.Resources, t.parent)
		byKey[t.parent] = t
	}
	if len(req.Resources) == 0 {
		return target{}, 0, nil
	}
	h, err := l.d.Acquire(ctx, req)
	if err != nil {
		return byKey[req.Resources[0]], 0, err
	}
	if h == nil {
		return byKey[req.Resources[0]], 0, fmt.Errorf("zklock: the Driver returned no lease and no error")
	}
	parts := h.Parts()
	if len(parts) != len(req.Resources) {
		go h.Release(context.Background())
		return byKey[req.Resources[0]], 0, fmt.Errorf("zklock: the Driver returned %d parts for %d resources", len(parts), len(req.Resources))
	}
	st.mu.Lock()
	st.driverHeld = h
	st.mu.Unlock()
	for i, part := range parts {
		t := byKey[req.Resources[i]]
		if !st.addHold(&heldNode{resource: t.resource, parent: t.parent, path: part.Path, token: part.Token}) {
			return t, 0, errs.ErrPartLost // a borrowed part was lost meanwhile: dropHolds releases h
		}
	}
	go func() {
		// The Driver's loss becomes the lease's (releasing, lose does nothing).
		select {
		case <-h.Done():
			var le *LostError
			reason := LossNodeDeleted
			if err := h.Err(); errors.As(err, &le) {
				reason = le.Reason
			}
			st.lose(reason)
		case <-st.done:
		}
	}()
	return target{}, 0, nil
}

func (l *driverLocker) releaseHolds(ctx context.Context, st *leaseState) error {
	h := st.takeDriverHeld()
	if h == nil {
		return nil
	}
	if err := h.Release(ctx); err != nil {
		// The Driver goes on in the background: the lease ends when it
		// says the lease has.
		go func() {
			<-h.Done()
			st.finishRelease(context.Background())
		}()
		return err
	}
	return nil
}

func (l *driverLocker) dropHolds(st *leaseState) {
	if h := st.takeDriverHeld(); h != nil {
		go h.Release(context.Background())
	}
}

// abandonHolds releases a failed acquire's Driver lease, waiting a moment
// for the Driver to confirm.
func (l *driverLocker) abandonHolds(st *leaseState) {
	if h := st.takeDriverHeld(); h != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = h.Release(ctx)
	}
}
