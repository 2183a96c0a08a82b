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

// acquireStatus turns an error of the lock's acquire under ctx, for a
// call of method, into the status sent to the client (the table in the
// package documentation).
//
// Every such status carries an errdetails.ErrorInfo with reason
// NotAcquiredReason: the handler has not run (see NotAcquired).
func acquireStatus(ctx context.Context, method string, err error, retryDelay time.Duration) error {
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
		return notAcquired(method, codes.ResourceExhausted, msg, &errdetails.RetryInfo{RetryDelay: durationpb.New(retryDelay)})
	case errors.Is(err, context.Canceled) && !deadlinePassed(ctx):
		code = codes.Canceled
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// gRPC ends a call whose deadline passed from two timers at
		// once, one of which cancels: go by the deadline.
		code = codes.DeadlineExceeded
	case errors.Is(err, zklock.ErrUpgrade):
		code = codes.FailedPrecondition
	}
	return notAcquired(method, code, msg)
}

// Where the server interceptors say that a call was refused before its
// handler ran: an errdetails.ErrorInfo with this reason and domain, whose
// metadata names the refused call's full method under MethodMetadataKey.
const (
	NotAcquiredReason = "LOCK_NOT_ACQUIRED"
	ErrorDomain       = "zklockkit.zklock"
	MethodMetadataKey = "method"
)

// notAcquired is a status for a call of method with the not-acquired
// ErrorInfo and details.
func notAcquired(method string, code codes.Code, msg string, details ...protoadapt.MessageV1) error {
	st := status.New(code, msg)
	info := &errdetails.ErrorInfo{Reason: NotAcquiredReason, Domain: ErrorDomain, Metadata: map[string]string{MethodMetadataKey: method}}
	if ds, err := st.WithDetails(append([]protoadapt.MessageV1{info}, details...)...); err == nil {
		st = ds
	}
	return st.Err()
}

// NotAcquired reports whether err is a status that the server
// interceptors sent because the call's lock was not acquired: its handler
// has not run, so retrying the call cannot repeat its effects. A status
// with the same code sent by the handler itself (a ResourceExhausted of
// the application's own) does not carry the mark, nor does one that a
// locked handler passes on from a call it made (the server interceptors
// take the mark off: that handler ran).
//
// A handler whose method is not locked may still pass on a marked status
// from a call of its own; the mark names the method refused
// (MethodMetadataKey), and the client interceptors retry a call only when
// the mark names that call's method.
func NotAcquired(err error) bool {
	_, ok := mark(err)
	return ok
}

// mark returns the method named by err's not-acquired mark, if err has
// one ("" for a mark that names none, as servers before the method was
// named sent).
func mark(err error) (method string, ok bool) {
	st, isStatus := status.FromError(err)
	if !isStatus || st.Code() == codes.OK {
		return "", false
	}
	for _, d := range st.Details() {
		if ei, is := d.(*errdetails.ErrorInfo); is && isMark(ei) {
			return ei.GetMetadata()[MethodMetadataKey], true
		}
	}
	return "", false
}

func isMark(ei *errdetails.ErrorInfo) bool {
	return ei.GetReason() == NotAcquiredReason && ei.GetDomain() == ErrorDomain
}

// refused reports whether err is the not-acquired status of a call of
// method: marked, and the mark names method (or no method at all).
func refused(err error, method string) bool {
	m, ok := mark(err)
	return ok && (m == "" || m == method)
}

// handlerStatus is what a locked call sends for err, its handler's error.
// The handler ran: a status it passes on from a call it made, marked as
// not acquired by that call's server, goes without the mark, which would
// tell the client that this call's handler had not run.
func handlerStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := mark(err); !ok {
		return err
	}
	st, _ := status.FromError(err)
	p := st.Proto()
	kept := p.Details[:0]
	for _, a := range p.Details {
		var ei errdetails.ErrorInfo
		if a.MessageIs(&ei) && a.UnmarshalTo(&ei) == nil && isMark(&ei) {
			continue
		}
		kept = append(kept, a)
	}
	p.Details = kept
	return status.FromProto(p).Err()
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
func resourceStatus(method string, err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, errBadRequest), errors.Is(err, zklock.ErrInvalidResource):
		return notAcquired(method, codes.InvalidArgument, zkMessage(err))
	case errors.Is(err, context.Canceled):
		return notAcquired(method, codes.Canceled, zkMessage(err))
	case errors.Is(err, context.DeadlineExceeded):
		return notAcquired(method, codes.DeadlineExceeded, zkMessage(err))
	}
	return notAcquired(method, codes.Internal, zkMessage(err))
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
