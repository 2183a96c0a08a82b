// Package errs holds the errors every layer of zklock returns: the
// sentinel values (package zklock re-exports each, with its
// documentation, as ErrLocked and the rest), the causes with which an
// acquire ends its own context, and the mapping of go-zookeeper's errors
// to ours. It imports nothing of the module, so that every internal
// package can return errors that match zklock's with errors.Is.
package errs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/go-zookeeper/zk"
)

// The sentinels; package zklock documents each.
var (
	ErrLocked           = errors.New("zklock: resource is locked")
	ErrWaitTimeout      = errors.New("zklock: wait limit exceeded")
	ErrInvalidResource  = errors.New("zklock: invalid resource")
	ErrReleased         = errors.New("zklock: lease already released")
	ErrLeaseLost        = errors.New("zklock: lease lost")
	ErrSessionExpired   = errors.New("zklock: session expired")
	ErrClosed           = errors.New("zklock: client closed")
	ErrUnavailable      = errors.New("zklock: zookeeper unavailable")
	ErrUpgrade          = errors.New("zklock: cannot upgrade a read lease to a write lease")
	ErrNoAuth           = errors.New("zklock: not authorized")
	ErrInvalidOption    = errors.New("zklock: invalid option")
	ErrLimitMismatch    = errors.New("zklock: semaphore limit differs from the resource's")
	ErrValueTooLarge    = errors.New("zklock: value too large")
	ErrDowngradeBlocked = errors.New("zklock: downgrade blocked")
	ErrUnknownNode      = errors.New("zklock: queue holds a node that cannot be ordered")
	ErrNoLeader         = errors.New("zklock: no leader")
)

// The causes with which an acquire ends its own context (see CtxErr).
// Besides ErrWaitTimeout (MaxWait):
var (
	// ErrTryBound ends a try that could not get an answer from ZooKeeper
	// within its answer bound.
	ErrTryBound = fmt.Errorf("%w: no answer within the try bound", ErrUnavailable)
	// ErrPartLost ends the waits of a multi-resource acquire one of whose
	// parts, already held, was lost: the acquire gives everything back
	// and queues again. It never reaches the caller.
	ErrPartLost = errors.New("zklock: a part already held was lost")
)

// CtxErr returns the context's cause when it is one of ours
// (ErrWaitTimeout, ErrTryBound, ErrPartLost) and its error otherwise: a cause
// the caller set on its own context does not replace context.Canceled.
func CtxErr(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrWaitTimeout) || cause == ErrTryBound || cause == ErrPartLost {
		return cause
	}
	return ctx.Err()
}

// IsCtxErr reports whether err says that a context ended: the caller's,
// MaxWait, a try's bound, or a part lost.
func IsCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrWaitTimeout) || errors.Is(err, ErrTryBound) || errors.Is(err, ErrPartLost)
}

// IsConnErr reports an error after which the outcome of a request is
// unknown and the request may be retried once reconnected.
func IsConnErr(err error) bool {
	if err == nil || IsCtxErr(err) {
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

// Map turns a go-zookeeper error into one of ours where one fits.
func Map(err error) error {
	switch {
	case err == nil:
		return nil
	case IsCtxErr(err):
		return err // the caller's context, MaxWait, or a try's bound
	case errors.Is(err, zk.ErrSessionExpired):
		return fmt.Errorf("%w: %w", ErrSessionExpired, err)
	case errors.Is(err, zk.ErrClosing):
		return ErrClosed
	case errors.Is(err, zk.ErrNoAuth), errors.Is(err, zk.ErrAuthFailed), errors.Is(err, zk.ErrInvalidACL):
		return fmt.Errorf("%w: %w", ErrNoAuth, err)
	case IsConnErr(err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("zklock: zookeeper: %w", err)
}

// Prefix starts the message of every error of zklock.
const Prefix = "zklock: "

// Errorf is fmt.Errorf for zklock's own wrapping: its message starts
// with Prefix once, however many of the errors in a say it too
// (`zklock: acquire "x": resource is locked`, not `zklock: acquire "x":
// zklock: resource is locked`). format does not start with the prefix.
// errors.Is and errors.As find what a's %w verbs wrap, as with
// fmt.Errorf.
func Errorf(format string, a ...any) error {
	bare := make([]any, len(a))
	for i, x := range a {
		if e, ok := x.(error); ok {
			x = unprefixed{e}
		}
		bare[i] = x
	}
	return &prefixed{msg: Prefix + fmt.Errorf(format, bare...).Error(), err: fmt.Errorf(format, a...)}
}

// prefixed is an error made by Errorf.
type prefixed struct {
	msg string
	err error // fmt.Errorf's, for what it wraps
}

func (e *prefixed) Error() string { return e.msg }

// Unwrap returns the errors Errorf's %w verbs wrapped.
func (e *prefixed) Unwrap() []error {
	switch u := e.err.(type) {
	case interface{ Unwrap() error }:
		return []error{u.Unwrap()}
	case interface{ Unwrap() []error }:
		return u.Unwrap()
	}
	return nil
}

// unprefixed formats an error without Prefix, for Errorf.
type unprefixed struct{ err error }

func (e unprefixed) Error() string { return strings.TrimPrefix(e.err.Error(), Prefix) }
