package tracing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
)

// Every sentinel of zklock, and the context errors, has its own error.type,
// wrapped or not; the value set is the documented one.
func TestErrorType(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{zklock.ErrLeaseLost, "lease_lost"},
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
		{errors.New("boom"), tracing.ErrorTypeOther},
		{nil, tracing.ErrorTypeOther},
		// Errors that match several: the documented order decides.
		{&zklock.ResourceError{Resource: "x", Reason: "bad"}, "invalid_resource"},
		{&zklock.LostError{Resource: "x", Reason: zklock.LossSessionExpired}, "lease_lost"},
		{&zklock.LostError{Resource: "x", Reason: zklock.LossClientClosed}, "lease_lost"},
		{fmt.Errorf("%w: %w", zklock.ErrUnavailable, context.DeadlineExceeded), "unavailable"},
		{fmt.Errorf("%w: %w", zklock.ErrUnavailable, context.Canceled), "unavailable"},
	} {
		for _, err := range []error{tc.err, fmt.Errorf("zklock: acquire %q: %w", "a", tc.err)} {
			if tc.err == nil && err != nil {
				continue
			}
			if got := tracing.ErrorType(err); got != tc.want {
				t.Errorf("ErrorType(%v) = %q, want %q", err, got, tc.want)
			}
		}
	}
}
