package interceptor

import (
	"context"
	"errors"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/zklockkit/zklockkit/zklock"
)

// acquireStatus turns an error of the lock's acquire under ctx into the
// status sent to the client (the table in the package documentation).
func acquireStatus(ctx context.Context, err error, retryDelay time.Duration) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	msg := err.Error()
	switch {
	case errors.Is(err, zklock.ErrInvalidResource):
		return status.Error(codes.InvalidArgument, msg)
	case errors.Is(err, zklock.ErrUnavailable), errors.Is(err, zklock.ErrClosed):
		// ErrUnavailable comes wrapped with the context error that ended
		// the wait: the cause is ZooKeeper, not the caller.
		return status.Error(codes.Unavailable, msg)
	case errors.Is(err, zklock.ErrLocked), errors.Is(err, zklock.ErrWaitTimeout):
		return busyStatus(msg, retryDelay)
	case errors.Is(err, context.Canceled) && !deadlinePassed(ctx):
		return status.Error(codes.Canceled, msg)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// gRPC ends a call whose deadline passed from two timers at
		// once, one of which cancels: go by the deadline.
		return status.Error(codes.DeadlineExceeded, msg)
	case errors.Is(err, zklock.ErrUpgrade):
		return status.Error(codes.FailedPrecondition, msg)
	case errors.Is(err, zklock.ErrLeaseLost):
		return status.Error(codes.Aborted, msg)
	}
	return status.Error(codes.Internal, msg)
}

func deadlinePassed(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// busyStatus is ResourceExhausted with a RetryInfo detail.
func busyStatus(msg string, retryDelay time.Duration) error {
	st := status.New(codes.ResourceExhausted, msg)
	if ds, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(retryDelay)}); err == nil {
		st = ds
	}
	return st.Err()
}

// resourceStatus turns an error computing the resource into a status: the
// request's fault is InvalidArgument, a misconfiguration is Internal.
func resourceStatus(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, errBadRequest), errors.Is(err, zklock.ErrInvalidResource):
		return status.Error(codes.InvalidArgument, "zklock: "+err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	return status.Error(codes.Internal, "zklock: "+err.Error())
}

// lostStatus returns Aborted if the lease was lost before the handler
// returned, and nil otherwise.
func lostStatus(lease *zklock.Lease, handlerErr error) error {
	select {
	case <-lease.Done():
	default:
		return nil
	}
	lerr := lease.Err()
	if !errors.Is(lerr, zklock.ErrLeaseLost) {
		return nil
	}
	msg := lerr.Error()
	if handlerErr != nil {
		msg += " (handler returned: " + handlerErr.Error() + ")"
	}
	return status.Error(codes.Aborted, msg)
}
