package zklock

import (
	"context"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
)

// call runs fn, a go-zookeeper call (which takes no context), on its own
// goroutine so the caller never waits past ctx. If ctx ends first the call
// still completes in the background; callers whose call creates something
// must clean up after it (see createNode). In an acquire's step (inStep)
// it runs fn on the calling goroutine, once ctx is checked: the step's
// acquiring goroutine is the one that does not wait past ctx (runStep).
func call[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	if ctx.Done() == nil {
		return fn()
	}
	if ctx.Err() != nil {
		var zero T
		return zero, errs.CtxErr(ctx) // its cause, if ours (errs.PartLost, ErrWaitTimeout)
	}
	if inStep(ctx) {
		return fn()
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, errs.CtxErr(ctx)
	}
}
