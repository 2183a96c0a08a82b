package zklock

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock/internal/session"
)

// FencedError reports a fenced transaction (Client.Fenced) that ZooKeeper
// refused. When Part is set, the lease's node for that part was gone: the
// lease was lost (its session expired, or someone deleted the node), and
// the error matches ErrLeaseLost. Otherwise one of the caller's own
// operations failed: Op is its index, Err ZooKeeper's answer (zk.ErrNoNode,
// zk.ErrBadVersion, ...), which the error unwraps to.
type FencedError struct {
	Part *Part // the part whose node was gone, or nil
	Op   int   // the index in ops of the operation that failed, or -1
	Err  error
}

func (e *FencedError) Error() string {
	if e.Part != nil {
		return fmt.Sprintf("zklock: fenced write refused: the lease's node for %q (%s) is gone: %v", e.Part.Resource, e.Part.Path, e.Err)
	}
	return fmt.Sprintf("zklock: fenced write refused at operation %d: %v", e.Op, e.Err)
}

// Is reports whether target is ErrLeaseLost, for a refusal on the lease's
// own node.
func (e *FencedError) Is(target error) bool { return target == ErrLeaseLost && e.Part != nil }

// Unwrap returns ZooKeeper's answer.
func (e *FencedError) Unwrap() error { return e.Err }

// Fenced writes ops to ZooKeeper as one transaction that commits only
// while the lease's nodes exist: a check of each of its nodes (every part
// of a multi-resource lease, the read or write node of a read/write
// lease) goes first, then ops, go-zookeeper's *zk.CreateRequest,
// *zk.SetDataRequest, *zk.DeleteRequest and *zk.CheckVersionRequest with
// absolute znode paths, as Client.Conn sees them. ZooKeeper itself
// decides: a holder paused past its session's expiry, or whose node an
// operator deleted, has its write refused by the server even if it has
// not yet learned of the loss. This is the fencing token's guarantee for
// state kept in ZooKeeper (configuration, assignments, a leader's
// published plan), with no token to compare: the lease's nodes are the
// token. See docs/fence.md.
//
// It returns ZooKeeper's answers, one per op (the checks left out). A
// refusal is a *FencedError: matching ErrLeaseLost when a lease's node was
// gone, naming the failed op otherwise; nothing of ops was written. When
// the connection is lost before the answer, the error matches
// ErrUnavailable and the transaction may or may not have committed,
// as with any ZooKeeper write. A lease released is refused at once with
// ErrReleased.
func (c *Client) Fenced(ctx context.Context, l *Lease, ops ...any) ([]zk.MultiResponse, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: Fenced needs a lease", ErrInvalidOption)
	}
	if b, ok := l.st.owner.(*zkBackend); !ok || b.c != c {
		return nil, fmt.Errorf("%w: Fenced needs a lease of this Client", ErrInvalidOption)
	}
	if err := l.Err(); errors.Is(err, ErrReleased) {
		return nil, err
	}
	parts := l.Parts()
	all := make([]any, 0, len(parts)+len(ops))
	for _, p := range parts {
		all = append(all, &zk.CheckVersionRequest{Path: p.Path, Version: -1})
	}
	all = append(all, ops...)
	res, err := session.Call(ctx, func() ([]zk.MultiResponse, error) { return c.sess.Conn().Multi(all...) })
	if err == nil {
		return res[len(parts):], nil
	}
	for i, r := range res {
		if r.Error == nil {
			continue
		}
		if i < len(parts) {
			return nil, &FencedError{Part: &parts[i], Op: -1, Err: r.Error}
		}
		return nil, &FencedError{Op: i - len(parts), Err: r.Error}
	}
	if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists) {
		return nil, &FencedError{Op: -1, Err: err}
	}
	return nil, c.mapErr(err)
}
