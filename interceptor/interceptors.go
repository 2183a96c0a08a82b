package interceptor

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"google.golang.org/grpc"

	"github.com/zklockkit/zklockkit/internal/adaptermetrics"
	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
)

// UnaryServerInterceptor returns a unary server interceptor that runs the
// selected methods under a lock of locker. Without WithMethod or
// WithMatcher every method is locked, each under its method name (see the
// package documentation, Resources).
//
// A locked call computes its resource, acquires the lock with the call's
// context, runs the handler with the lease's context (cancelled if the lease
// is lost), and releases the lock when the handler returns or panics. The
// status codes it sends are listed in the package documentation.
//
// UnaryServerInterceptor panics if an option is invalid (a malformed
// template, a non-positive duration): a programming error, caught at
// start-up.
func UnaryServerInterceptor(locker zklock.Locker, opts ...Option) grpc.UnaryServerInterceptor {
	in := newInterceptor(locker, opts)
	return in.unary
}

// StreamServerInterceptor returns a stream server interceptor that runs
// the selected streaming methods under a lock of locker, held for the
// whole life of the stream: acquired before the handler starts, released
// when it returns (which is also when the client cancels, if the handler
// honours its context). The resource comes from incoming metadata, or from
// the first message with FromFirstMessage. It is configured, and panics,
// like UnaryServerInterceptor.
func StreamServerInterceptor(locker zklock.Locker, opts ...Option) grpc.StreamServerInterceptor {
	in := newInterceptor(locker, opts)
	return in.stream
}

type interceptor struct {
	locker  zklock.Locker
	methods methods
	release time.Duration
	logger  *slog.Logger
	misconf *adaptermetrics.Misconfigured
}

func newInterceptor(locker zklock.Locker, opts []Option) *interceptor {
	if locker == nil {
		panic("interceptor: nil zklock.Locker")
	}
	o := newOptions(opts)
	if o.err == nil {
		o.err = o.check()
	}
	if o.err != nil {
		panic(o.err)
	}
	in := &interceptor{locker: locker, methods: methods{opts: o}, release: o.releaseTimeout, logger: o.logger,
		misconf: adaptermetrics.NewMisconfigured(o.meterProvider, ScopeName, tracing.AdapterGRPC)}
	if in.logger == nil {
		in.logger = slog.Default()
	}
	return in
}

func (in *interceptor) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	m := in.methods.get(info.FullMethod)
	if m.cfg == nil {
		return handler(ctx, req)
	}
	var one [1]string // the common case: one resource, no allocation
	resources, err := m.resources(ctx, req, one[:0])
	if err != nil {
		in.misconfigured(ctx, m, err)
		return nil, err
	}
	lease, waited, err := in.acquire(ctx, m, resources)
	_ = grpc.SetTrailer(ctx, waitTrailer(waited))
	if err != nil {
		return nil, err
	}
	defer in.releaseLease(ctx, lease)
	resp, err := handler(lease.Context(ctx), req)
	if lerr := lostStatus(lease, err); lerr != nil {
		return nil, lerr
	}
	return resp, handlerStatus(err)
}

func (in *interceptor) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	m := in.methods.get(info.FullMethod)
	if m.cfg == nil {
		return handler(srv, ss)
	}
	ctx := ss.Context()
	ls := &lockedStream{ServerStream: ss}
	var req any
	if m.cfg.firstMessage {
		first, err := recvFirst(ss, m)
		if err != nil {
			in.misconfigured(ctx, m, err)
			return err
		}
		ls.first, req = first, first
	}
	var one [1]string
	resources, err := m.resources(ctx, req, one[:0])
	if err != nil {
		in.misconfigured(ctx, m, err)
		return err
	}
	lease, waited, err := in.acquire(ctx, m, resources)
	ss.SetTrailer(waitTrailer(waited))
	if err != nil {
		return err
	}
	defer in.releaseLease(ctx, lease)
	ls.ctx = lease.Context(ctx)
	err = handler(srv, ls)
	if lerr := lostStatus(lease, err); lerr != nil {
		return lerr
	}
	return handlerStatus(err)
}

// acquire takes the lock on resources and reports how long it waited. Its
// error is a status error.
func (in *interceptor) acquire(ctx context.Context, m *method, resources []string) (*zklock.Lease, time.Duration, error) {
	cfg := m.cfg
	start := time.Now()
	var lease *zklock.Lease
	var err error
	if len(resources) == 1 {
		lease, err = in.locker.Acquire(ctx, resources[0], cfg.acquireOpts...)
	} else {
		// A copy: the caller's slice may stay on its stack.
		lease, err = in.locker.AcquireAll(ctx, slices.Clone(resources), cfg.acquireOpts...)
	}
	waited := time.Since(start)
	if err != nil {
		return nil, waited, acquireStatus(ctx, m.name, err, cfg.retryDelay)
	}
	return lease, waited, nil
}

// releaseLease releases the lease with a context that outlives the call's,
// bounded by the release timeout. A lease that was lost needs no release.
func (in *interceptor) releaseLease(ctx context.Context, lease *zklock.Lease) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.release)
	defer cancel()
	_ = lease.Release(rctx)
}
