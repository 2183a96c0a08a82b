package zklock

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
)

// Sentinel errors. Every error returned by this package that has one of these
// meanings matches it with errors.Is, whatever extra context it carries.
var (
	// ErrLocked is returned by a try-acquire when the resource is held or
	// has waiters ahead of the caller.
	ErrLocked = errs.ErrLocked

	// ErrWaitTimeout is returned when the wait limit set with MaxWait passed
	// before the lock was acquired. The caller's own context deadline is
	// reported as context.DeadlineExceeded instead.
	ErrWaitTimeout = errs.ErrWaitTimeout

	// ErrInvalidResource is matched by every *ResourceError: the resource
	// name (or raw znode path) cannot be used.
	ErrInvalidResource = errs.ErrInvalidResource

	// ErrReleased is returned by Release on a lease that was already
	// released, and by Lease.Err after a release.
	ErrReleased = errs.ErrReleased

	// ErrLeaseLost is matched by every *LostError: the lease ended without
	// Release because its session expired, could no longer be proven alive,
	// its node was deleted by someone else, or the client was closed.
	ErrLeaseLost = errs.ErrLeaseLost

	// ErrSessionExpired reports that the ZooKeeper session was expired by
	// the server. Leases lost this way unwrap to it.
	ErrSessionExpired = errs.ErrSessionExpired

	// ErrClosed is returned by calls on a closed Client.
	ErrClosed = errs.ErrClosed

	// ErrUnavailable is returned when ZooKeeper could not be reached before
	// the context ended (at Connect, or while disconnected during an
	// acquire). It is wrapped together with the context's error.
	ErrUnavailable = errs.ErrUnavailable

	// ErrUpgrade is returned when a holder of a read lease asks for the write
	// lock of the same resource under the same context: upgrading deadlocks
	// in every read/write lock recipe, so it is refused.
	ErrUpgrade = errs.ErrUpgrade

	// ErrNoAuth is returned when ZooKeeper refuses an operation for lack of
	// permission (ACL) or when authentication failed.
	ErrNoAuth = errs.ErrNoAuth

	// ErrInvalidOption is returned for a bad option value or connection
	// string.
	ErrInvalidOption = errs.ErrInvalidOption

	// ErrLimitMismatch is returned when a semaphore is acquired with a limit
	// other than the one stored with the resource by its first user.
	ErrLimitMismatch = errs.ErrLimitMismatch

	// ErrValueTooLarge is returned for node data (an election value) over
	// MaxValueLen: ZooKeeper refuses packets over 1 MB.
	ErrValueTooLarge = errs.ErrValueTooLarge

	// ErrDowngradeBlocked is returned by Lease.Downgrade when a writer is
	// queued behind the lease (downgrading would let it in first), or when
	// the lease is re-entered (an outer holder counts on the write lock).
	ErrDowngradeBlocked = errs.ErrDowngradeBlocked

	// ErrUnknownNode is returned by an acquire whose queue holds a child
	// with no sequence number: zklock cannot order it, so it cannot tell
	// whether that node holds the lock, and it never grants a lock past a
	// node it does not understand. The error names the node. (A child with
	// a sequence number and a layout zklock does not know counts as an
	// exclusive node in sequence order.)
	ErrUnknownNode = errs.ErrUnknownNode

	// ErrNoLeader is returned by Client.Leader when no candidate is in the
	// election.
	ErrNoLeader = errs.ErrNoLeader
)

// ResourceError reports a resource name or raw znode path that cannot be
// used. It matches ErrInvalidResource.
type ResourceError struct {
	Resource string // the name as given (may be truncated for display)
	Reason   string
}

func (e *ResourceError) Error() string {
	r := e.Resource
	if len(r) > 64 {
		r = r[:64] + "..."
	}
	return fmt.Sprintf("zklock: invalid resource %q: %s", r, e.Reason)
}

// Is reports whether target is ErrInvalidResource.
func (e *ResourceError) Is(target error) bool { return target == ErrInvalidResource }

// LossReason says why a lease was lost.
type LossReason int

// Loss reasons.
const (
	// LossSessionExpired: ZooKeeper expired the session; its nodes are gone.
	LossSessionExpired LossReason = iota + 1
	// LossSessionUnverified: the client has not heard from ZooKeeper for
	// long enough that the session may expire at any moment, so the lease
	// is given up before anyone else could be granted the lock.
	LossSessionUnverified
	// LossNodeDeleted: someone else deleted the lease's node.
	LossNodeDeleted
	// LossClientClosed: the Client was closed while the lease was held.
	LossClientClosed
	// LossPartner: another part of a multi-resource lease was lost.
	LossPartner
)

func (r LossReason) String() string {
	switch r {
	case LossSessionExpired:
		return "session_expired"
	case LossSessionUnverified:
		return "session_unverified"
	case LossNodeDeleted:
		return "node_deleted"
	case LossClientClosed:
		return "client_closed"
	case LossPartner:
		return "partner_lost"
	}
	return fmt.Sprintf("LossReason(%d)", int(r))
}

// LostError reports a lost lease. It matches ErrLeaseLost, and unwraps to
// ErrSessionExpired or ErrClosed when that was the cause.
type LostError struct {
	Resource string
	Reason   LossReason
}

func (e *LostError) Error() string {
	return fmt.Sprintf("zklock: lease on %q lost: %s", e.Resource, e.Reason)
}

// Is reports whether target is ErrLeaseLost.
func (e *LostError) Is(target error) bool { return target == ErrLeaseLost }

// Unwrap returns the underlying cause, if it has a sentinel of its own.
func (e *LostError) Unwrap() error {
	switch e.Reason {
	case LossSessionExpired:
		return ErrSessionExpired
	case LossClientClosed:
		return ErrClosed
	}
	return nil
}

// mapErr is errs.Map for a request of c's: one that failed because c
// was closed says ErrClosed, as an acquire does, not ErrUnavailable.
func (c *Client) mapErr(err error) error {
	if (errs.IsConnErr(err) || errors.Is(err, zk.ErrClosing)) && c.sess.Closed() {
		return ErrClosed
	}
	return errs.Map(err)
}
