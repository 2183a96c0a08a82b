package lockertest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zklock/lockertest"
)

// mutexDriver is a third party's Driver, written against zklock's public
// API only: exclusive locks in one process, all or nothing.
type mutexDriver struct {
	mu    sync.Mutex
	held  map[string]*mutexHeld
	wake  chan struct{} // closed and replaced on every release
	token int64
}

func newMutexDriver() *mutexDriver {
	return &mutexDriver{held: map[string]*mutexHeld{}, wake: make(chan struct{})}
}

func (d *mutexDriver) Acquire(ctx context.Context, req zklock.Request) (zklock.Held, error) {
	if req.Mode != zklock.Exclusive {
		return nil, fmt.Errorf("%w: mutexDriver locks exclusively", zklock.ErrInvalidOption)
	}
	for {
		d.mu.Lock()
		free := true
		for _, r := range req.Resources {
			if d.held[r] != nil {
				free = false
			}
		}
		if free {
			h := &mutexHeld{d: d, done: make(chan struct{})}
			for _, r := range req.Resources {
				d.token++
				h.parts = append(h.parts, zklock.Part{Resource: r, Path: "mutex:" + r, Token: d.token})
				d.held[r] = h
			}
			d.mu.Unlock()
			return h, nil
		}
		wake := d.wake
		d.mu.Unlock()
		if req.Try {
			return nil, zklock.ErrLocked
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

type mutexHeld struct {
	d     *mutexDriver
	parts []zklock.Part
	done  chan struct{}
	once  sync.Once
	err   error
}

func (h *mutexHeld) Parts() []zklock.Part  { return h.parts }
func (h *mutexHeld) Done() <-chan struct{} { return h.done }
func (h *mutexHeld) Err() error {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	return h.err
}

func (h *mutexHeld) end(err error) {
	h.once.Do(func() {
		h.d.mu.Lock()
		h.err = err
		for _, p := range h.parts {
			delete(h.d.held, p.Resource)
		}
		close(h.d.wake)
		h.d.wake = make(chan struct{})
		h.d.mu.Unlock()
		close(h.done)
	})
}

func (h *mutexHeld) Release(context.Context) error { h.end(zklock.ErrReleased); return nil }

// TestMutexDriver: a Driver of a third party's passes the suite through
// zklock.NewLocker, loss included.
func TestMutexDriver(t *testing.T) {
	var cur *mutexDriver // the driver of the subtest running (they run one at a time)
	lockertest.Run(t, func(t *testing.T) (zklock.Locker, zklock.Locker) {
		cur = newMutexDriver()
		l := zklock.NewLocker(cur)
		return l, l
	}, lockertest.Lose(func(t *testing.T, l *zklock.Lease) {
		// The backend loses the lease: the driver ends it as lost.
		cur.mu.Lock()
		h := cur.held[l.Resource()]
		cur.mu.Unlock()
		h.end(&zklock.LostError{Resource: l.Resource(), Reason: zklock.LossNodeDeleted})
	}))
}

// A third party's Driver becomes a Locker with zklock.NewLocker: the HTTP
// middleware, the gRPC interceptors and generated wrappers take it as
// they take a *zklock.Client.
func ExampleRun() {
	locker := zklock.NewLocker(newMutexDriver())
	ctx := context.Background()
	l, err := locker.Acquire(ctx, "accounts/42")
	if err != nil {
		panic(err)
	}
	_, err = locker.Acquire(ctx, "accounts/42", zklock.Try())
	fmt.Println(errors.Is(err, zklock.ErrLocked))
	inner, err := locker.Acquire(l.Context(ctx), "accounts/42") // re-entry, by the Locker
	fmt.Println(err, inner.Token() == l.Token())
	inner.Release(ctx)
	l.Release(ctx)
	fmt.Println(l.Err())
	// Output:
	// true
	// <nil> true
	// zklock: lease already released
}
