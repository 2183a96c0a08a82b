package bench

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// watchCount sums the watches held by every server, data and child
// watches both (mntr's zk_watch_count; wchs counts data watches only); ok
// is false when a server does not answer it.
func (h *Harness) watchCount() (n int64, ok bool) {
	for _, s := range h.servers {
		m, err := mntr(s)
		if err != nil {
			return 0, false
		}
		k, found := m["zk_watch_count"]
		if !found {
			return 0, false
		}
		n += k
	}
	return n, true
}

// dataWatchCount sums the data watches held by every server (wchs): much
// cheaper for a server to answer than mntr, which matters to a wait that
// asks in a loop (waitWatches); ok is false when a server does not answer.
func (h *Harness) dataWatchCount() (n int64, ok bool) {
	for _, s := range h.servers {
		out, err := fourLetter(s, "wchs")
		if err != nil {
			return 0, false
		}
		_, v, found := strings.Cut(out, "Total watches:")
		if !found {
			return 0, false
		}
		k, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, false
		}
		n += k
	}
	return n, true
}

// waitWatches waits until the servers hold at least want data watches
// (dataWatchCount), asking without pause: it is on the path of every
// ping-pong hand-off, whose waiter is the one acquire in flight on its
// session and so sets data watches only (no cover, see zklock/cover.go).
// It reports false, at once, when the servers do not tell.
func (h *Harness) waitWatches(ctx context.Context, want int64) (bool, error) {
	for {
		n, ok := h.dataWatchCount()
		if !ok {
			return false, nil
		}
		if n >= want {
			return true, nil
		}
		if err := ctx.Err(); err != nil {
			return true, err
		}
	}
}

// settle waits until the servers hold at least want watches more than base
// (every waiter has set its watch), or the count has not moved for a
// second, or 30s have passed. Without mntr it waits one second.
func (h *Harness) settle(ctx context.Context, base, want int64) error {
	if base < 0 {
		return sleep(ctx, time.Second)
	}
	deadline := time.Now().Add(30 * time.Second)
	last, since := int64(-1), time.Now()
	for time.Now().Before(deadline) {
		n, ok := h.watchCount()
		if !ok {
			return sleep(ctx, time.Second)
		}
		if n-base >= want {
			return nil
		}
		if n != last {
			last, since = n, time.Now()
		} else if time.Since(since) >= time.Second {
			return nil
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// baseDataWatches returns the current data watch count, or -1 without
// wchs (see waitWatches).
func (h *Harness) baseDataWatches() int64 {
	n, ok := h.dataWatchCount()
	if !ok {
		return -1
	}
	return n
}

// baseWatches returns the current watch count, or -1 without mntr.
func (h *Harness) baseWatches() int64 {
	n, ok := h.watchCount()
	if !ok {
		return -1
	}
	return n
}

// waitQueued waits until the znode p has at least want children, polling.
func (h *Harness) waitQueued(ctx context.Context, p string, want int) error {
	for {
		kids, _, err := h.admin.Children(p)
		if err == nil && len(kids) >= want {
			return nil
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
