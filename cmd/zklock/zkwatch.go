package main

import (
	"context"
	"errors"
	"sync"

	"github.com/go-zookeeper/zk"
)

// watches keeps at most one ZooKeeper watch per znode, and says on
// changed when any of them fires (one pending signal for any number of
// firings). A watch fires once: the next read of its node sets it again.
// watch uses it for the queue it follows; top for the root and the
// hottest queues.
type watches struct {
	life    context.Context // the watches are waited for until it ends
	conn    *zk.Conn
	changed chan struct{}
	limit   int // the most watches outstanding at once; 0: no limit

	mu    sync.Mutex
	armed map[string]bool
}

// newWatches returns the watches of a command that runs until life ends.
func newWatches(life context.Context, conn *zk.Conn) *watches {
	return &watches{life: life, conn: conn, changed: make(chan struct{}, 1), armed: map[string]bool{}}
}

// claim marks path as watched and reports whether it was not already
// and the limit allows one more.
func (w *watches) claim(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.armed[path] || (w.limit > 0 && len(w.armed) >= w.limit) {
		return false
	}
	w.armed[path] = true
	return true
}

func (w *watches) release(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.armed, path)
}

// arm sets a watch on path in the background unless one is outstanding:
// a children watch, or an exists watch while path does not exist. It
// costs a read only when it sets one.
func (w *watches) arm(path string) {
	if !w.claim(path) {
		return
	}
	go func() {
		_, _, ch, err := w.conn.ChildrenW(path)
		if errors.Is(err, zk.ErrNoNode) {
			_, _, ch, err = w.conn.ExistsW(path)
		}
		if err != nil {
			w.release(path) // the caller's next read reports it; its next round arms again
			return
		}
		w.await(path, ch)
	}()
}

// children lists path's children, setting a children watch on it when
// none is outstanding and the limit allows: one read either way. It gives up when ctx ends
// (go-zookeeper's calls take no context).
func (w *watches) children(ctx context.Context, path string) ([]string, error) {
	if !w.claim(path) {
		return zkDo(ctx, func() ([]string, error) {
			names, _, err := w.conn.Children(path)
			return names, err
		})
	}
	return zkDo(ctx, func() ([]string, error) {
		names, _, ch, err := w.conn.ChildrenW(path)
		if err != nil {
			w.release(path)
			return nil, err
		}
		go w.await(path, ch)
		return names, nil
	})
}

// await waits for the watch on path to fire, then lets path be watched
// again and signals changed.
func (w *watches) await(path string, ch <-chan zk.Event) {
	select {
	case <-ch:
		w.release(path)
		select {
		case w.changed <- struct{}{}:
		default:
		}
	case <-w.life.Done():
	}
}

// zkDo runs f, a go-zookeeper call, and returns its result, or ctx's
// error when ctx ends first: go-zookeeper's calls take no context and
// wait for a reconnection. A call abandoned so finishes in the
// background.
func zkDo[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
