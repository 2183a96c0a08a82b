package tracing

import (
	"context"
	"errors"

	"github.com/zklockkit/zklockkit/zklock"
)

// outcome classifies the error of a failed acquire.
func outcome(err error) string {
	switch {
	case errors.Is(err, zklock.ErrLocked):
		return OutcomeBusy
	case errors.Is(err, zklock.ErrWaitTimeout), errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case errors.Is(err, context.Canceled):
		return OutcomeCancelled
	}
	return OutcomeError
}

// lockKind names the kind of lock of an acquire: multi when it names more
// than one resource (a single resource's name may contain a comma),
// otherwise its mode.
func lockKind(e zklock.Event) string {
	if len(e.Resources) > 1 {
		return KindMulti
	}
	switch e.Mode {
	case zklock.Exclusive:
		return KindExclusive
	case zklock.Read:
		return KindRead
	case zklock.Write:
		return KindWrite
	case zklock.Semaphore:
		return KindSemaphore
	case zklock.Election:
		return KindElection
	}
	return e.Mode.String()
}

// lostReason returns the reason of a lost lease's error.
func lostReason(err error) string {
	if le, ok := errors.AsType[*zklock.LostError](err); ok {
		return le.Reason.String()
	}
	return "unknown"
}
