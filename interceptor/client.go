package interceptor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/zklockkit/zklockkit/internal/ctxsleep"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Defaults for client options.
const (
	// DefaultMaxRetries is how many times a busy call is retried at most.
	DefaultMaxRetries = 10
	// DefaultMaxRetryDelay caps the delay a server asks for.
	DefaultMaxRetryDelay = 5 * time.Second
	// DefaultStreamBuffer is how many sent messages a stream keeps to
	// replay on a retry.
	DefaultStreamBuffer = 16
)

// ClientOption configures UnaryClientInterceptor and
// StreamClientInterceptor. Options are applied in order over the
// documented defaults.
type ClientOption func(*clientOptions)

type clientOptions struct {
	maxRetries int
	maxDelay   time.Duration
	buffer     int
	onRetry    func(ctx context.Context, method string, attempt int, delay time.Duration, err error)
	// outgoing decorates the context of each attempt (outgoing metadata)
	outgoing []func(ctx context.Context) context.Context
}

func newClientOptions(opts []ClientOption) *clientOptions {
	o := &clientOptions{maxRetries: DefaultMaxRetries, maxDelay: DefaultMaxRetryDelay, buffer: DefaultStreamBuffer}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o
}

// WithMaxRetries sets how many times a busy call is retried at most
// (default DefaultMaxRetries); 0 turns retries off.
func WithMaxRetries(n int) ClientOption {
	return func(o *clientOptions) {
		if n < 0 {
			panic(fmt.Sprintf("interceptor: WithMaxRetries(%d): must not be negative", n))
		}
		o.maxRetries = n
	}
}

// WithMaxRetryDelay caps the delay the server's RetryInfo asks for
// (default DefaultMaxRetryDelay).
func WithMaxRetryDelay(d time.Duration) ClientOption {
	return func(o *clientOptions) {
		if d <= 0 {
			panic(fmt.Sprintf("interceptor: WithMaxRetryDelay(%v): must be positive", d))
		}
		o.maxDelay = d
	}
}

// WithStreamBuffer sets how many sent messages a stream keeps to replay
// when it is retried (default DefaultStreamBuffer). A stream that sent
// more before it learnt that it was refused is not retried.
func WithStreamBuffer(n int) ClientOption {
	return func(o *clientOptions) {
		if n < 1 {
			panic(fmt.Sprintf("interceptor: WithStreamBuffer(%d): must be positive", n))
		}
		o.buffer = n
	}
}

// WithOnRetry sets a function called before each retry, with the attempt
// that failed (1 for the first), the delay before the next and the error.
func WithOnRetry(f func(ctx context.Context, method string, attempt int, delay time.Duration, err error)) ClientOption {
	return func(o *clientOptions) { o.onRetry = f }
}

// WithAttemptContext adds f, which derives the context of each attempt
// (the first and every retry) from the call's, typically to add outgoing
// metadata. A fencing-token carrier fits here:
//
//	interceptor.UnaryClientInterceptor(interceptor.WithAttemptContext(fencegrpc.OutgoingContext))
//
// sends the lease's token, read from the call's context, with every
// attempt. Functions run in the order given.
func WithAttemptContext(f func(ctx context.Context) context.Context) ClientOption {
	return func(o *clientOptions) {
		if f != nil {
			o.outgoing = append(o.outgoing, f)
		}
	}
}

// retryDelay returns how long to wait before retrying a call that failed
// with err, and whether it may be retried at all: only a ResourceExhausted
// status that the server interceptors sent before the handler ran, for a
// call of method (NotAcquired, and the mark names method), with the delay of its RetryInfo (capped), when the
// retry can start before ctx's deadline.
func (o *clientOptions) retryDelay(ctx context.Context, method string, attempt int, err error) (time.Duration, bool) {
	if attempt > o.maxRetries || status.Code(err) != codes.ResourceExhausted || !refused(err, method) {
		return 0, false
	}
	delay := DefaultRetryDelay
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			delay = ri.GetRetryDelay().AsDuration()
		}
	}
	delay = max(0, min(delay, o.maxDelay))
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= delay {
		return 0, false
	}
	return delay, true
}

func (o *clientOptions) attemptContext(ctx context.Context) context.Context {
	for _, f := range o.outgoing {
		ctx = f(ctx)
	}
	return ctx
}

// UnaryClientInterceptor returns a unary client interceptor that retries a
// call its server refused because the call's lock was busy: a
// ResourceExhausted status sent by this package's server interceptors
// before the handler ran (see NotAcquired), after the delay of the
// status's RetryInfo, while the call's deadline allows it, at most
// WithMaxRetries times. Any other error, a ResourceExhausted sent by a
// handler included, is returned at once: a call whose handler may have run
// is never retried.
func UnaryClientInterceptor(opts ...ClientOption) grpc.UnaryClientInterceptor {
	o := newClientOptions(opts)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		for attempt := 1; ; attempt++ {
			err := invoker(o.attemptContext(ctx), method, req, reply, cc, callOpts...)
			delay, ok := o.retryDelay(ctx, method, attempt, err)
			if !ok {
				return err
			}
			if o.onRetry != nil {
				o.onRetry(ctx, method, attempt, delay, err)
			}
			if werr := ctxsleep.Sleep(ctx, delay); werr != nil {
				return err
			}
		}
	}
}

// StreamClientInterceptor returns a stream client interceptor that
// retries a stream its server refused because the stream's lock was busy,
// as UnaryClientInterceptor does for unary calls. A stream learns of the
// refusal when it receives: the interceptor keeps the messages sent until
// then (up to WithStreamBuffer), and on a refusal opens a new stream,
// sends them again (and closes the send side again if it was), and
// receives from it. A stream that has received a message, or sent more
// than the buffer holds, is never retried.
func StreamClientInterceptor(opts ...ClientOption) grpc.StreamClientInterceptor {
	o := newClientOptions(opts)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		open := func() (grpc.ClientStream, error) {
			return streamer(o.attemptContext(ctx), desc, cc, method, callOpts...)
		}
		cs, err := open()
		if err != nil {
			return nil, err
		}
		return &retryStream{ClientStream: cs, ctx: ctx, o: o, method: method, open: open}, nil
	}
}

// retryStream is a client stream that can be opened again until it has
// received a message.
type retryStream struct {
	grpc.ClientStream
	ctx      context.Context
	o        *clientOptions
	method   string
	open     func() (grpc.ClientStream, error)
	sent     []any // replayed on a retry; nil once received or overflowed
	overflow bool
	closed   bool // CloseSend was called
	received bool
	attempt  int
}

func (s *retryStream) SendMsg(m any) error {
	if !s.received && !s.overflow {
		if len(s.sent) < s.o.buffer {
			s.sent = append(s.sent, m)
		} else {
			s.sent, s.overflow = nil, true
		}
	}
	return s.ClientStream.SendMsg(m)
}

func (s *retryStream) CloseSend() error {
	s.closed = true
	return s.ClientStream.CloseSend()
}

func (s *retryStream) RecvMsg(m any) error {
	for {
		err := s.ClientStream.RecvMsg(m)
		if err == nil || s.received || s.overflow || errors.Is(err, io.EOF) {
			if err == nil {
				s.received, s.sent = true, nil
			}
			return err
		}
		s.attempt++
		delay, ok := s.o.retryDelay(s.ctx, s.method, s.attempt, err)
		if !ok {
			return err
		}
		if s.o.onRetry != nil {
			s.o.onRetry(s.ctx, s.method, s.attempt, delay, err)
		}
		if werr := ctxsleep.Sleep(s.ctx, delay); werr != nil {
			return err
		}
		if rerr := s.reopen(); rerr != nil {
			return rerr
		}
	}
}

// reopen opens a new stream and sends it what the refused one was sent.
func (s *retryStream) reopen() error {
	cs, err := s.open()
	if err != nil {
		return err
	}
	s.ClientStream = cs
	for _, m := range s.sent {
		if err := cs.SendMsg(m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil // the stream ended: RecvMsg gives its status
			}
			return err
		}
	}
	if s.closed {
		return cs.CloseSend()
	}
	return nil
}
