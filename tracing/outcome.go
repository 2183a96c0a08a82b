package tracing

import (
	"context"
	"errors"
	"strings"

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

// lockKind names the kind of lock of an acquire. AcquireAll reports its
// resources joined with ",", so a name with a comma is a multi-resource
// lock.
func lockKind(e zklock.Event) string {
	if strings.Contains(e.Resource, ",") {
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
