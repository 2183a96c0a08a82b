package zklock

import (
	"context"
	"errors"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/queue"
	"github.com/zklockkit/zklockkit/zklock/internal/session"

	"github.com/go-zookeeper/zk"
)

// RequestRelease asks the current holders of resource to release it, the
// way Curator's Revoker.attemptRevoke does: it writes "__REVOKE__" into
// their nodes. A zklock holder sees the request on Lease.RevokeRequested and
// decides; nothing is taken from it. It returns how many holders were asked.
func (c *Client) RequestRelease(ctx context.Context, resource string, opts ...QueueOption) (int, error) {
	q, err := c.Inspect(ctx, resource, opts...)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, h := range q.Holders() {
		_, err := session.Call(ctx, func() (*zk.Stat, error) { return c.Conn().Set(h.Path, queue.RevokeMessage, -1) })
		switch {
		case err == nil:
			n++
		case errors.Is(err, zk.ErrNoNode):
			// released meanwhile
		case errs.IsCtxErr(err):
			return n, err
		default:
			return n, c.mapErr(err)
		}
	}
	return n, nil
}

// RevokeRequested returns a channel that is closed when another process
// asks this lease's holder to release it (Client.RequestRelease, or
// Curator's Revoker). Releasing is up to the holder.
func (l *Lease) RevokeRequested() <-chan struct{} {
	st := l.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.revoke == nil {
		st.revoke = make(chan struct{})
	}
	return st.revoke
}

func (st *leaseState) requestRevoke() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.revoke == nil {
		st.revoke = make(chan struct{})
	}
	select {
	case <-st.revoke:
	default:
		close(st.revoke)
	}
}
