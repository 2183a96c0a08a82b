package interceptor

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/zklockkit/zklockkit/zklock"
)

// acquireStatus turns an error of the lock's acquire under ctx into the
// status sent to the client (the table in the package documentation).
//
// Every such status carries an errdetails.ErrorInfo with reason
// NotAcquiredReason: the handler has not run (see NotAcquired).
func acquireStatus(ctx context.Context, err error, retryDelay time.Duration) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	msg := zkMessage(err)
	code := codes.Internal
	switch {
	case errors.Is(err, zklock.ErrInvalidResource):
		code = codes.InvalidArgument
	case errors.Is(err, zklock.ErrUnavailable), errors.Is(err, zklock.ErrClosed):
		// ErrUnavailable comes wrapped with the context error that ended
		// the wait: the cause is ZooKeeper, not the caller.
		code = codes.Unavailable
	case errors.Is(err, zklock.ErrLocked), errors.Is(err, zklock.ErrWaitTimeout):
		return notAcquired(codes.ResourceExhausted, msg, &errdetails.RetryInfo{RetryDelay: durationpb.New(retryDelay)})
	case errors.Is(err, context.Canceled) && !deadlinePassed(ctx):
		code = codes.Canceled
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// gRPC ends a call whose deadline passed from two timers at
		// once, one of which cancels: go by the deadline.
		code = codes.DeadlineExceeded
	case errors.Is(err, zklock.ErrUpgrade):
		code = codes.FailedPrecondition
	}
	return notAcquired(code, msg)
}

// Where the server interceptors say that a call was refused before its
// handler ran: an errdetails.ErrorInfo with this reason and domain.
const (
	NotAcquiredReason = "LOCK_NOT_ACQUIRED"
	ErrorDomain       = "zklockkit.zklock"
)

var notAcquiredInfo = &errdetails.ErrorInfo{Reason: NotAcquiredReason, Domain: ErrorDomain}

// notAcquired is a status with the not-acquired ErrorInfo and details.
func notAcquired(code codes.Code, msg string, details ...protoadapt.MessageV1) error {
	st := status.New(code, msg)
	if ds, err := st.WithDetails(append([]protoadapt.MessageV1{notAcquiredInfo}, details...)...); err == nil {
		st = ds
	}
	return st.Err()
}

// NotAcquired reports whether err is a status that the server
// interceptors sent because the call's lock was not acquired: its handler
// has not run, so retrying the call cannot repeat its effects. A status
// with the same code sent by the handler itself (a ResourceExhausted of
// the application's own) does not carry the mark.
func NotAcquired(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok && ei.GetReason() == NotAcquiredReason && ei.GetDomain() == ErrorDomain {
			return true
		}
	}
	return false
}

func deadlinePassed(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// resourceStatus turns an error computing the resource into a status: the
// request's fault is InvalidArgument, a misconfiguration is Internal. The
// handler has not run: the status is marked NotAcquired, as every refusal
// before the handler is (a status of the application's own ResourceFrom
// function goes as it is).
func resourceStatus(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, errBadRequest), errors.Is(err, zklock.ErrInvalidResource):
		return notAcquired(codes.InvalidArgument, zkMessage(err))
	case errors.Is(err, context.Canceled):
		return notAcquired(codes.Canceled, zkMessage(err))
	case errors.Is(err, context.DeadlineExceeded):
		return notAcquired(codes.DeadlineExceeded, zkMessage(err))
	}
	return notAcquired(codes.Internal, zkMessage(err))
}

// zkPrefix starts every status message the interceptors write.
const zkPrefix = "zklock: "

// zkMessage is err's message with "zklock: " said once, at its start.
// zklock's errors wrap one another and each may say it ("zklock: acquire
// \"a\": zklock: resource is locked"): the prefix is dropped where it
// starts the message or a part of it (after ": "), so that a resource
// name that contains it, quoted, is kept as it is.
func zkMessage(err error) string {
	msg := err.Error()
	var b strings.Builder
	b.Grow(len(msg) + len(zkPrefix))
	b.WriteString(zkPrefix)
	for {
		msg = strings.TrimPrefix(msg, zkPrefix)
		i := strings.Index(msg, ": "+zkPrefix)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i+2])
		msg = msg[i+2:]
	}
}

// lostStatus returns Aborted if the lease was lost before the handler
// returned, and nil otherwise. It reads the lease's Err, not Done: a lease
// ends by setting its Err, then cancelling its contexts, then closing
// Done, so a handler that returned on its context's end may ask before
// Done is closed (a stream then ended OK instead of Aborted, 1 run in
// many).
func lostStatus(lease *zklock.Lease, handlerErr error) error {
	lerr := lease.Err()
	if !errors.Is(lerr, zklock.ErrLeaseLost) {
		return nil
	}
	msg := zkMessage(lerr)
	if handlerErr != nil {
		msg += " (handler returned: " + handlerErr.Error() + ")"
	}
	return status.Error(codes.Aborted, msg)
}
