package zklock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
	"github.com/zklockkit/zklockkit/zklock/internal/layout"
	"github.com/zklockkit/zklockkit/zklock/internal/session"

	"github.com/go-zookeeper/zk"
)

// Leader describes the current leader of an election.
type Leader struct {
	Value     []byte    // the value it campaigned with
	Path      string    // its candidate node
	SessionID int64     // its ZooKeeper session
	Token     int64     // its fencing token (czxid)
	Since     time.Time // when its candidate node was created (server clock)
}

// Campaign enters the election named election with value and blocks until
// this candidate leads, ctx ends, or the wait limit passes. The returned
// lease is the leadership: Done and Context end when it is lost (under the
// same rules as any lease: before another candidate can be elected), and
// Release resigns. Candidates queue in arrival order; each watches only the
// one ahead of it. Node names follow Curator's LeaderLatch
// ("_c_<uuid>-latch-<seq>"). Lead runs a function while leading, and
// campaigns again.
//
// value is stored in the candidate's node for observers (at most
// MaxValueLen bytes, else ErrValueTooLarge); Lease.Proclaim changes it.
// Options: MaxWait, Try, RawPath; a Mode, Limit or LeaseLabel is
// ErrInvalidOption.
func (c *Client) Campaign(ctx context.Context, election string, value []byte, opts ...AcquireOption) (*Lease, error) {
	cfg := newAcquireConfig(opts)
	if cfg.mode != Exclusive || cfg.limit != 0 || cfg.label != "" {
		return nil, fmt.Errorf("%w: a campaign takes MaxWait, Try and RawPath only", ErrInvalidOption)
	}
	return c.campaign(ctx, election, value, cfg)
}

func (c *Client) campaign(ctx context.Context, election string, value []byte, cfg acquireConfig) (*Lease, error) {
	if len(value) > MaxValueLen {
		return nil, fmt.Errorf("%w: election value of %d bytes, the limit is %d", ErrValueTooLarge, len(value), MaxValueLen)
	}
	cfg.mode = Election
	cfg.data = value
	if cfg.data == nil {
		cfg.data = []byte{}
	}
	return acquireWith(ctx, c.b, []string{election}, cfg)
}

// Proclaim changes the value of the election this lease leads, without a
// new election (etcd's Proclaim): observers see the new value. It fails
// with ErrInvalidOption on a lease that is not a leadership, with the
// lease's Err once it has ended, and with ErrValueTooLarge.
func (l *Lease) Proclaim(ctx context.Context, value []byte) error {
	st := l.st
	b, ok := st.owner.(*zkBackend)
	if !ok || st.mode != Election {
		return fmt.Errorf("%w: Proclaim needs a lease from Campaign or Lead", ErrInvalidOption)
	}
	if len(value) > MaxValueLen {
		return fmt.Errorf("%w: election value of %d bytes, the limit is %d", ErrValueTooLarge, len(value), MaxValueLen)
	}
	if err := l.Err(); err != nil {
		return err
	}
	if value == nil {
		value = []byte{}
	}
	_, err := session.Call(ctx, func() (*zk.Stat, error) { return b.c.Conn().Set(l.Path(), value, -1) })
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode):
		// gone: the lease is lost, or about to be told so
		if lerr := l.Err(); lerr != nil {
			return lerr
		}
		return &LostError{Resource: st.resource, Reason: LossNodeDeleted}
	}
	return errs.Map(err)
}

// Leader returns the current leader of election, or ErrNoLeader.
func (c *Client) Leader(ctx context.Context, election string, opts ...QueueOption) (Leader, error) {
	parent, err := c.queuePath(election, newQueueConfig(opts).raw)
	if err != nil {
		return Leader{}, err
	}
	l, _, err := c.leader(ctx, parent, false)
	return l, err
}

// leader reads the first candidate of an election; with watch it also
// returns a channel that fires on the next change of the candidate list.
func (c *Client) leader(ctx context.Context, parent string, watch bool) (Leader, <-chan zk.Event, error) {
	for {
		type res struct {
			names []string
			ch    <-chan zk.Event
		}
		r, err := session.Call(ctx, func() (res, error) {
			if watch {
				n, _, ch, err := c.Conn().ChildrenW(parent)
				return res{n, ch}, err
			}
			n, _, err := c.Conn().Children(parent)
			return res{n, nil}, err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			if !watch {
				return Leader{}, nil, ErrNoLeader
			}
			// No queue yet: wait for its creation.
			type exists struct {
				ok bool
				ch <-chan zk.Event
			}
			e, err := session.Call(ctx, func() (exists, error) {
				ok, _, ch, err := c.Conn().ExistsW(parent)
				return exists{ok, ch}, err
			})
			switch {
			case errs.IsCtxErr(err):
				return Leader{}, nil, err
			case err != nil:
				return Leader{}, nil, c.mapErr(err)
			case e.ok:
				continue
			}
			return Leader{}, e.ch, ErrNoLeader
		case err != nil:
			if errs.IsCtxErr(err) {
				return Leader{}, nil, err
			}
			return Leader{}, nil, c.mapErr(err)
		}
		kids, _ := layout.Sort(r.names)
		if len(kids) == 0 {
			return Leader{}, r.ch, ErrNoLeader
		}
		path := parent + "/" + kids[0].Name
		type node struct {
			data []byte
			stat *zk.Stat
			ch   <-chan zk.Event
		}
		n, err := session.Call(ctx, func() (node, error) {
			if watch {
				// the leader's value may change too (Proclaim)
				data, stat, ch, err := c.Conn().GetW(path)
				return node{data, stat, ch}, err
			}
			data, stat, err := c.Conn().Get(path)
			return node{data, stat, nil}, err
		})
		data, stat := n.data, n.stat
		if errs.IsCtxErr(err) {
			return Leader{}, nil, err
		}
		if errors.Is(err, zk.ErrNoNode) {
			// The first candidate left between the listing and the read.
			// List again, even with a watch set: the next candidate may
			// already lead, and "no leader" would be a gap that was never
			// true. Each pass follows a node that went away, so this ends.
			continue
		}
		if err != nil {
			return Leader{}, nil, c.mapErr(err)
		}
		return Leader{Value: data, Path: path, SessionID: stat.EphemeralOwner, Token: stat.Czxid,
			Since: time.UnixMilli(stat.Ctime)}, mergeEvents(r.ch, n.ch), nil
	}
}

// Observe sends the leader of election each time it changes, or its value
// changes (Lease.Proclaim), starting with the current one (a zero Leader
// when there is none), until ctx ends; then it closes the channel. A slow
// reader sees only the latest.
func (c *Client) Observe(ctx context.Context, election string, opts ...QueueOption) (<-chan Leader, error) {
	parent, err := c.queuePath(election, newQueueConfig(opts).raw)
	if err != nil {
		return nil, err
	}
	if c.sess.Closed() {
		return nil, ErrClosed
	}
	out := make(chan Leader, 1)
	go func() {
		defer close(out)
		var last Leader
		first := true
		for {
			l, ch, err := c.leader(ctx, parent, true)
			switch {
			case err == nil, errors.Is(err, ErrNoLeader):
				if first || l.Path != last.Path || !bytes.Equal(l.Value, last.Value) {
					first = false
					last = l
					select {
					case <-out: // drop the stale one
					default:
					}
					out <- l
				}
			case errs.IsCtxErr(err) || errors.Is(err, ErrClosed):
				return
			default:
				// connection trouble: wait and look again
				if _, err := c.sess.Wait(ctx); err != nil {
					return
				}
				continue
			}
			if ch == nil {
				continue
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			case <-c.sess.Done():
				return
			}
		}
	}()
	return out, nil
}

// mergeEvents returns a channel that receives the first event of a or b
// (either may be nil), or a itself when b is nil.
func mergeEvents(a, b <-chan zk.Event) <-chan zk.Event {
	if b == nil {
		return a
	}
	out := make(chan zk.Event, 1)
	go func() {
		// Each go-zookeeper watch channel receives one event and is
		// closed (or is closed when the session ends), so this goroutine
		// ends with the first of them.
		select {
		case ev := <-a:
			out <- ev
		case ev := <-b:
			out <- ev
		}
	}()
	return out
}
