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
		return OutcomeCanceled
	}
	return OutcomeError
}

// ErrorTypeOther is the value of the error.type attribute for an error
// that matches none of the errors ErrorType knows: the OpenTelemetry
// semantic conventions' fallback value.
const ErrorTypeOther = "_OTHER"

// errorTypeLeaseLost is ErrorType(zklock.ErrLeaseLost).
const errorTypeLeaseLost = "lease_lost"

// errorTypes lists the errors ErrorType knows, most specific first: a
// lost lease unwraps to ErrSessionExpired or ErrClosed, and ErrUnavailable
// is wrapped together with the context's error.
var errorTypes = []struct {
	err  error
	name string
}{
	{zklock.ErrLeaseLost, errorTypeLeaseLost},
	{zklock.ErrSessionExpired, "session_expired"},
	{zklock.ErrUnavailable, "unavailable"},
	{zklock.ErrClosed, "closed"},
	{zklock.ErrLocked, "locked"},
	{zklock.ErrWaitTimeout, "wait_timeout"},
	{zklock.ErrInvalidResource, "invalid_resource"},
	{zklock.ErrInvalidOption, "invalid_option"},
	{zklock.ErrNoAuth, "no_auth"},
	{zklock.ErrUpgrade, "upgrade"},
	{zklock.ErrLimitMismatch, "limit_mismatch"},
	{zklock.ErrValueTooLarge, "value_too_large"},
	{zklock.ErrUnknownNode, "unknown_node"},
	{zklock.ErrDowngradeBlocked, "downgrade_blocked"},
	{zklock.ErrReleased, "released"},
	{zklock.ErrNoLeader, "no_leader"},
	{context.DeadlineExceeded, "deadline_exceeded"},
	{context.Canceled, "canceled"},
}

// ErrorType returns the value of the error.type attribute for err: the
// name of the first error in this list that err matches (errors.Is), or
// ErrorTypeOther (also for nil).
//
//	error                       error.type
//	zklock.ErrLeaseLost         lease_lost
//	zklock.ErrSessionExpired    session_expired
//	zklock.ErrUnavailable       unavailable
//	zklock.ErrClosed            closed
//	zklock.ErrLocked            locked
//	zklock.ErrWaitTimeout       wait_timeout
//	zklock.ErrInvalidResource   invalid_resource
//	zklock.ErrInvalidOption     invalid_option
//	zklock.ErrNoAuth            no_auth
//	zklock.ErrUpgrade           upgrade
//	zklock.ErrLimitMismatch     limit_mismatch
//	zklock.ErrValueTooLarge     value_too_large
//	zklock.ErrUnknownNode       unknown_node
//	zklock.ErrDowngradeBlocked  downgrade_blocked
//	zklock.ErrReleased          released
//	zklock.ErrNoLeader          no_leader
//	context.DeadlineExceeded    deadline_exceeded
//	context.Canceled            canceled
//	anything else               _OTHER
//
// The value is the sentinel's name without its Err prefix, in snake
// case: a small fixed set, as the OpenTelemetry semantic conventions ask
// of error.type. The order matters where an error matches several: a
// lost lease is lease_lost whatever its cause (zklock.lost.reason says
// which), and an acquire that gave up while ZooKeeper was unreachable is
// unavailable, not the context error it also carries.
func ErrorType(err error) string {
	if err == nil {
		return ErrorTypeOther
	}
	for _, t := range errorTypes {
		if errors.Is(err, t.err) {
			return t.name
		}
	}
	return ErrorTypeOther
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
