package zklock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/go-zookeeper/zk"
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
		return zero, ctxErr(ctx) // its cause, if ours (errPartLost, ErrWaitTimeout)
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
		return zero, ctxErr(ctx)
	}
}

// errTryBound ends a try that could not get an answer from ZooKeeper
// within the answer bound (see Client.answerBound).
var errTryBound = fmt.Errorf("%w: no answer within the try bound", ErrUnavailable)

// ctxErr returns the context's cause when it is one of ours (ErrWaitTimeout,
// errTryBound, errPartLost) and its error otherwise.
func ctxErr(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrWaitTimeout) || cause == errTryBound || cause == errPartLost {
		return cause
	}
	return ctx.Err()
}

// isConnErr reports an error after which the outcome of the request is
// unknown and the request may be retried once reconnected.
func isConnErr(err error) bool {
	if err == nil || isCtxErr(err) {
		// context.DeadlineExceeded satisfies net.Error: rule it out first.
		return false
	}
	if errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, io.EOF) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrWaitTimeout) || errors.Is(err, errTryBound) || errors.Is(err, errPartLost)
}

// mapErr turns a go-zookeeper error into one of ours where one fits.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case isCtxErr(err):
		return err // the caller's context, MaxWait, or a try's bound
	case errors.Is(err, zk.ErrSessionExpired):
		return fmt.Errorf("%w: %w", ErrSessionExpired, err)
	case errors.Is(err, zk.ErrClosing):
		return ErrClosed
	case errors.Is(err, zk.ErrNoAuth), errors.Is(err, zk.ErrAuthFailed), errors.Is(err, zk.ErrInvalidACL):
		return fmt.Errorf("%w: %w", ErrNoAuth, err)
	case isConnErr(err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("zklock: zookeeper: %w", err)
}
