package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"

	"github.com/go-zookeeper/zk"
)

// queueMeta is the data of a queue znode. A semaphore stores its limit there
// so that clients configured with different limits get errs.ErrLimitMismatch
// instead of silently admitting more holders than either intended.
type queueMeta struct {
	Limit int `json:"limit,omitempty"`
}

// checkLimit compares our semaphore limit with the one stored on the queue,
// storing ours when the queue has none yet (conditional on the data version,
// so two first users with different limits cannot both win).
func (w *Waiter) checkLimit(ctx context.Context) error {
	q := w.q
	for {
		type res struct {
			data []byte
			stat *zk.Stat
		}
		r, err := do(ctx, w, func() (res, error) {
			d, st, err := q.conn().Get(w.req.Parent)
			return res{d, st}, err
		})
		switch {
		case err == nil:
		case errs.IsConnErr(err):
			if err := w.sameSession(ctx); err != nil {
				return err
			}
			continue
		case errs.IsCtxErr(err):
			return err
		default:
			return errs.Map(err)
		}
		var meta queueMeta
		if len(r.data) > 0 {
			if json.Unmarshal(r.data, &meta) != nil || meta.Limit < 1 {
				return fmt.Errorf("%w: queue %s holds data that is not a semaphore limit", errs.ErrLimitMismatch, w.req.Parent)
			}
			if meta.Limit != w.req.Limit {
				return fmt.Errorf("%w: %q has limit %d, asked for %d", errs.ErrLimitMismatch, w.req.Resource, meta.Limit, w.req.Limit)
			}
			return nil
		}
		_, err = do(ctx, w, func() (*zk.Stat, error) { return q.conn().Set(w.req.Parent, w.queueData(), r.stat.Version) })
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrBadVersion), errs.IsConnErr(err):
			continue // someone else set it, or we do not know: read again
		case errs.IsCtxErr(err):
			return err
		default:
			return errs.Map(err)
		}
	}
}
