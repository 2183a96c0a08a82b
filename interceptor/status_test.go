package interceptor_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/internal/adaptertest"
	"github.com/zklockkit/zklockkit/tracing"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func TestIntegration_StatusCodes(t *testing.T) {
	transfer := bankpb.Bank_Transfer_FullMethodName
	byAccount := interceptor.Resource("accounts/{transfer.from}")

	t.Run("ResourceExhausted/try", func(t *testing.T) {
		r := newRig(t, 1, &bank{}, interceptor.WithMethod(transfer, byAccount,
			interceptor.Try(), interceptor.RetryDelay(250*time.Millisecond)))
		r.hold(t, "accounts/a")
		var tr metadata.MD
		_, err := r.client(0).Transfer(callCtx(t), transferReq("a", "b"), grpc.Trailer(&tr))
		st := wantCode(t, err, codes.ResourceExhausted)
		wantRetryDelay(t, st, 250*time.Millisecond)
		if !interceptor.NotAcquired(err) {
			t.Errorf("busy status %v is not marked as refused before the handler", st.Details())
		}
		if _, ok := interceptor.WaitFromTrailer(tr); !ok {
			t.Errorf("no %s trailer on a busy call: %v", interceptor.WaitTrailerKey, tr)
		}
		r.servers[0].log.waitCode(t, transfer, codes.ResourceExhausted)
	})

	t.Run("ResourceExhausted/max-wait", func(t *testing.T) {
		r := newRig(t, 1, &bank{}, interceptor.WithMethod(transfer, byAccount,
			interceptor.MaxWait(300*time.Millisecond)))
		r.hold(t, "accounts/a")
		var tr metadata.MD
		_, err := r.client(0).Transfer(callCtx(t), transferReq("a", "b"), grpc.Trailer(&tr))
		st := wantCode(t, err, codes.ResourceExhausted)
		wantRetryDelay(t, st, interceptor.DefaultRetryDelay)
		if w, ok := interceptor.WaitFromTrailer(tr); !ok || w < 300*time.Millisecond {
			t.Errorf("wait trailer = %v, %v; want at least the 300ms wait limit", w, ok)
		}
	})

	t.Run("DeadlineExceeded", func(t *testing.T) {
		// When a client's deadline passes it also cancels the call, and
		// the cancellation often reaches the server before the server's
		// copy of the deadline fires. To see the server's answer to the
		// deadline itself, the call goes through a proxy that is
		// blackholed once the call waits for the lock. (gRPC's server
		// also ends such a call from a timer that cancels rather than
		// expires its context; the interceptor goes by the deadline.)
		enqueued := make(chan struct{}, 1)
		obs := zklock.ObserverFunc(func(ctx context.Context, e zklock.Event) {
			if e.Kind == zklock.EventEnqueued && e.Position > 0 {
				select {
				case enqueued <- struct{}{}:
				default:
				}
			}
		})
		r := &rig{root: rootFor(t)}
		r.admin = connect(t, r.root)
		s := startServer(t, connect(t, r.root, zklock.WithObserver(obs)), &bank{}, interceptor.WithMethod(transfer, byAccount))
		t.Cleanup(func() { checkNoLockNodes(t, r.admin.Conn(), r.root) })
		r.hold(t, "accounts/a")
		proxy, err := zktest.NewProxy(s.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = proxy.Close() })
		_, client := dial(t, proxy.Addr())

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			_, err := client.Transfer(ctx, transferReq("a", "b"))
			errc <- err
		}()
		select {
		case <-enqueued:
		case <-time.After(long):
			t.Fatal("the call never queued for the lock")
		}
		proxy.Blackhole(true)
		wantCode(t, <-errc, codes.DeadlineExceeded)
		s.log.waitCode(t, transfer, codes.DeadlineExceeded)
		proxy.Blackhole(false)
	})

	t.Run("Canceled", func(t *testing.T) {
		enqueued := make(chan struct{}, 1)
		root := ""
		obs := zklock.ObserverFunc(func(ctx context.Context, e zklock.Event) {
			if e.Kind == zklock.EventEnqueued && e.Position > 0 {
				select {
				case enqueued <- struct{}{}:
				default:
				}
			}
		})
		r := &rig{root: rootFor(t)}
		root = r.root
		r.admin = connect(t, root)
		s := startServer(t, connect(t, root, zklock.WithObserver(obs)), &bank{}, interceptor.WithMethod(transfer, byAccount))
		r.servers = []*server{s}
		t.Cleanup(func() { checkNoLockNodes(t, r.admin.Conn(), root) })
		r.hold(t, "accounts/a")

		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := s.client.Transfer(ctx, transferReq("a", "b"))
			errc <- err
		}()
		select {
		case <-enqueued:
		case <-time.After(long):
			t.Fatal("the call never queued for the lock")
		}
		cancel()
		wantCode(t, <-errc, codes.Canceled)
		s.log.waitCode(t, transfer, codes.Canceled)
	})

	t.Run("Unavailable", func(t *testing.T) {
		root := rootFor(t)
		proxy := newProxy(t)
		suspended := make(chan struct{})
		var once sync.Once
		obs := zklock.ObserverFunc(func(ctx context.Context, e zklock.Event) {
			if e.Kind == zklock.EventSuspended {
				once.Do(func() { close(suspended) })
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		locker, err := zklock.Connect(ctx, []string{proxy.Addr()}, zklock.WithRoot(root), zklock.WithObserver(obs))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = locker.Close() })
		s := startServer(t, locker, &bank{}, interceptor.WithMethod(transfer, byAccount,
			interceptor.MaxWait(500*time.Millisecond)))
		proxy.RejectNew(true)
		proxy.DropAll()
		select {
		case <-suspended:
		case <-time.After(long):
			t.Fatal("the client never noticed the lost connection")
		}
		_, err = s.client.Transfer(callCtx(t), transferReq("a", "b"))
		wantCode(t, err, codes.Unavailable)
		if !interceptor.NotAcquired(err) {
			t.Errorf("Unavailable status %v is not marked as refused before the handler", err)
		}
		s.log.waitCode(t, transfer, codes.Unavailable)
	})

	t.Run("Aborted", func(t *testing.T) {
		paths := make(chan string, 1)
		var cause atomic.Value
		b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
			paths <- zklock.LeaseFromContext(ctx).Path()
			<-ctx.Done()
			cause.Store(context.Cause(ctx))
			return &bankpb.TransferResponse{}, nil // pretend all went well
		}}
		r := newRig(t, 1, b, interceptor.WithMethod(transfer, byAccount))
		errc := make(chan error, 1)
		go func() {
			_, err := r.client(0).Transfer(callCtx(t), transferReq("a", "b"))
			errc <- err
		}()
		path := <-paths
		if err := r.admin.Conn().Delete(path, -1); err != nil {
			t.Fatalf("deleting the lease's node: %v", err)
		}
		wantCode(t, <-errc, codes.Aborted)
		if c, _ := cause.Load().(error); !errors.Is(c, zklock.ErrLeaseLost) {
			t.Errorf("handler context cause = %v; want a lost lease", c)
		}
	})

	t.Run("InvalidArgument", func(t *testing.T) {
		r := newRig(t, 1, &bank{}, interceptor.WithMethod(transfer, byAccount))
		// The message says which field or placeholder, and why, never the
		// value: the same words as the HTTP middleware's 400.
		const why = `zklock: invalid resource "accounts/{transfer.from}": `
		for _, tc := range []struct {
			req  *bankpb.TransferRequest
			want string
		}{
			{&bankpb.TransferRequest{}, "zklock: field transfer.from is not set"},
			{&bankpb.TransferRequest{Transfer: &bankpb.Transfer{}}, why + "empty value for {transfer.from}"},
			{transferReq("nul\x00byte", "b"), why + "value of {transfer.from}: contains a control character"},
			{transferReq("bell\abell", "b"), why + "value of {transfer.from}: contains a control character"},
			{transferReq(string(make10K()), "b"), why + "value of {transfer.from}: longer than 1024 bytes"},
			{transferReq("\u0085next-line", "b"), why + "value of {transfer.from}: contains a control character"},
		} {
			_, err := r.client(0).Transfer(callCtx(t), tc.req)
			st := wantCode(t, err, codes.InvalidArgument)
			if msg := st.Message(); msg != tc.want {
				t.Errorf("message %q; want %q", msg, tc.want)
			}
		}
	})

	t.Run("Internal", func(t *testing.T) {
		// A WithMatcher's methods are known only at their first call;
		// every call refused, unary or stream, counts.
		meter := adaptertest.NewMeter(t)
		r := newRig(t, 1, &bank{}, interceptor.WithMeterProvider(meter.Provider), interceptor.WithMatcher(interceptor.MatchService("bank.v1.Bank"),
			interceptor.Resource("accounts/{no_such_field}"), interceptor.FromFirstMessage()))
		for range 3 {
			_, err := r.client(0).Transfer(callCtx(t), transferReq("a", "b"))
			wantCode(t, err, codes.Internal)
			s, err := r.client(0).Watch(callCtx(t), &bankpb.WatchRequest{AccountId: "a"})
			if err == nil {
				_, err = s.Recv()
			}
			wantCode(t, err, codes.Internal)
		}
		want := map[adaptertest.Route]int64{
			{Adapter: tracing.AdapterGRPC, Route: bankpb.Bank_Transfer_FullMethodName}: 3,
			{Adapter: tracing.AdapterGRPC, Route: bankpb.Bank_Watch_FullMethodName}:    3,
		}
		if got := meter.Misconfigured(t); !maps.Equal(got, want) {
			t.Errorf("%s: %v; want %v", tracing.MetricMisconfigured, got, want)
		}
	})
}

// A template that names a field the method's message lacks, or a stream's
// field without FromFirstMessage, is refused at construction when
// WithMethod names a method of the proto registry; otherwise the call is
// refused with Internal, and the reason logged once, at Error level.
// (Before, every call was refused with Internal and nothing said why.)
func TestMisconfiguration(t *testing.T) {
	locker := zklock.NewMemoryLocker()
	for _, tc := range []struct {
		opt  interceptor.Option
		want string
	}{
		{interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName, interceptor.Resource("accounts/{no_such_field}")),
			`interceptor: WithMethod("/bank.v1.Bank/Transfer"): resource template "accounts/{no_such_field}": message bank.v1.TransferRequest has no field "no_such_field"`},
		{interceptor.WithMethod(bankpb.Bank_Watch_FullMethodName, interceptor.Resource("watch/{account_id}")),
			`interceptor: WithMethod("/bank.v1.Bank/Watch"): a template refers to request fields, but a stream's first message is read only with FromFirstMessage`},
	} {
		func() {
			defer func() {
				if err, _ := recover().(error); err == nil || err.Error() != tc.want {
					t.Errorf("construction panicked with %v; want %q", err, tc.want)
				}
			}()
			interceptor.UnaryServerInterceptor(locker, tc.opt)
		}()
	}

	// What only a call reveals is refused with Internal at every call,
	// logged once, and counted at every call; a well-configured method
	// counts nothing, nor does a call refused for its own bad value
	// (InvalidArgument).
	var log adaptertest.Log
	meter := adaptertest.NewMeter(t)
	unary := interceptor.UnaryServerInterceptor(locker, interceptor.WithLogger(log.Logger()), interceptor.WithMeterProvider(meter.Provider),
		interceptor.WithMatcher(interceptor.MatchService("bank.v1.Bank"), interceptor.Resource("accounts/{no_such_field}")))
	configured := interceptor.UnaryServerInterceptor(locker, interceptor.WithLogger(log.Logger()), interceptor.WithMeterProvider(meter.Provider),
		interceptor.WithMatcher(interceptor.MatchService("bank.v1.Bank"), interceptor.Resource("accounts/{transfer.from}")))
	info := &grpc.UnaryServerInfo{FullMethod: bankpb.Bank_Transfer_FullMethodName}
	ran := 0
	handler := func(context.Context, any) (any, error) { ran++; return nil, nil }
	for range 3 {
		_, err := unary(context.Background(), transferReq("a", "b"), info, handler)
		wantCode(t, err, codes.Internal)
		if _, err := configured(context.Background(), transferReq("a", "b"), info, handler); err != nil {
			t.Fatalf("well-configured method: %v", err)
		}
		_, err = configured(context.Background(), transferReq("", "b"), info, handler)
		wantCode(t, err, codes.InvalidArgument)
	}
	if ran != 3 {
		t.Errorf("the handler ran %d times; want 3, for the well-configured calls", ran)
	}
	adaptertest.WantMisconfigured(t, &log, meter, map[string]string{"method": bankpb.Bank_Transfer_FullMethodName},
		map[adaptertest.Route]int64{{Adapter: tracing.AdapterGRPC, Route: bankpb.Bank_Transfer_FullMethodName}: 3})
	if recs := log.Records(); len(recs) > 0 && !strings.Contains(recs[0].Attrs["error"], `has no field "no_such_field"`) {
		t.Errorf("logged %+v; want the reason", recs[0])
	}
}

func make10K() []byte {
	b := make([]byte, 10<<10)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

func TestIntegration_HostileValuesStayUnderRoot(t *testing.T) {
	var got sync.Map // account → lease path
	b := &bank{transfer: func(ctx context.Context, req *bankpb.TransferRequest) (*bankpb.TransferResponse, error) {
		got.Store(req.GetTransfer().GetFrom(), zklock.LeaseFromContext(ctx).Path())
		return &bankpb.TransferResponse{}, nil
	}}
	r := newRig(t, 1, b, interceptor.WithMethod(bankpb.Bank_Transfer_FullMethodName,
		interceptor.Resource("accounts/{transfer.from}/ledger")))
	before := map[string]bool{}
	for _, n := range walk(t, r.admin.Conn(), "/") {
		before[n.path] = true
	}
	hostile := []string{"../", "..", ".", "../../zookeeper", "/", "a/../../b", "%2F..%2F", "%", "{x}", " ", "\u00e9\u2603"}
	for _, v := range hostile {
		if _, err := r.client(0).Transfer(callCtx(t), transferReq(v, "b")); err != nil {
			t.Fatalf("Transfer from %q: %v", v, err)
		}
	}
	seen := map[string]string{}
	for _, v := range hostile {
		p, ok := got.Load(v)
		if !ok {
			t.Fatalf("handler did not run for %q", v)
		}
		path := p.(string)
		queue, name, _ := cutLast(path)
		qroot, qname, _ := cutLast(queue)
		if qroot != r.root {
			t.Errorf("lock node for %q is %s; want a queue directly under %s", v, path, r.root)
		}
		res, ok := zklock.UnescapeResource(qname)
		if !ok || res != "accounts/"+escapeForTest(v)+"/ledger" {
			t.Errorf("queue of %q is %q (resource %q, %v)", v, qname, res, ok)
		}
		if other, dup := seen[queue]; dup {
			t.Errorf("%q and %q share the queue %s", v, other, queue)
		}
		seen[queue] = v
		_ = name
	}
	for _, n := range walk(t, r.admin.Conn(), "/") {
		if !before[n.path] && !isUnder(n.path, r.root) {
			t.Errorf("znode %s appeared outside the root %s", n.path, r.root)
		}
	}
}

// escapeForTest is the documented escaping of placeholder values.
func escapeForTest(v string) string {
	return strings.NewReplacer("%", "%25", "/", "%2F").Replace(v)
}

func cutLast(p string) (dir, base string, ok bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i], p[i+1:], true
		}
	}
	return "", p, false
}

func isUnder(p, root string) bool {
	return p == root || len(p) > len(root) && p[:len(root)+1] == root+"/"
}

func wantRetryDelay(t *testing.T, st *status.Status, want time.Duration) {
	t.Helper()
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			if got := ri.GetRetryDelay().AsDuration(); got != want {
				t.Errorf("RetryInfo delay = %v; want %v", got, want)
			}
			return
		}
	}
	t.Errorf("no RetryInfo in %v", st.Details())
}

func rootFor(t *testing.T) string { return zktest.UniqueRoot(t) }

func newProxy(t *testing.T) *zktest.Proxy {
	t.Helper()
	p, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}
