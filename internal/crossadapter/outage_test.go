package crossadapter_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	echo4 "github.com/labstack/echo/v4"
	echo5 "github.com/labstack/echo/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/internal/crossadapter"
	zkmw "github.com/zklockkit/zklockkit/middleware"
	zkecho4 "github.com/zklockkit/zklockkit/middleware/zkecho"
	zkecho5 "github.com/zklockkit/zklockkit/middleware/zkecho/v5"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// tryBound is how soon a try must answer while ZooKeeper is away: the
// core's bound, min(session timeout/3, 1 s), plus slack for a loaded
// machine.
const tryBound = 3 * time.Second

// While ZooKeeper is unreachable, a try through every front end answers
// at once that the lock service is unavailable: 503 with Retry-After over
// HTTP, Unavailable over gRPC, zklock.ErrUnavailable from generated code.
func TestIntegration_TryWhileZooKeeperAway(t *testing.T) {
	proxy, err := zktest.NewProxy(zktest.Shared().Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	suspended := make(chan struct{}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{proxy.Addr()}, zklock.WithRoot(zktest.UniqueRoot(t)),
		zklock.WithSessionTimeout(6*time.Second),
		zklock.WithObserver(zklock.ObserverFunc(func(_ context.Context, ev zklock.Event) {
			if ev.Kind == zklock.EventSuspended {
				select {
				case suspended <- struct{}{}:
				default:
				}
			}
		})))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	mux := http.NewServeMux()
	mux.Handle("POST /n/{id}", zkmw.Lock(c, zkmw.Resource(template), zkmw.Try())(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	e4 := echo4.New()
	e4.POST("/e/:id", func(echo4.Context) error { return nil }, zkecho4.Lock(c, zkecho4.Resource(template), zkecho4.Try()))
	e5 := echo5.New()
	e5.POST("/e/:id", func(*echo5.Context) error { return nil }, zkecho5.Lock(c, zkecho5.Resource(template), zkecho5.Try()))
	httpFronts := map[string]string{}
	for name, h := range map[string]http.Handler{"net/http": mux, "echo v4": e4, "echo v5": e5} {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		httpFronts[name] = srv.URL
	}
	const method = "/cross.Svc/Lock"
	unary := interceptor.UnaryServerInterceptor(c, interceptor.WithMethod(method, interceptor.Resource(template), interceptor.Try()))
	msgType := idMessage(t)

	proxy.RejectNew(true)
	proxy.DropAll()
	select {
	case <-suspended:
	case <-ctx.Done():
		t.Fatal("the client never noticed the outage")
	}

	var start time.Time
	hc := &http.Client{Timeout: 10 * time.Second}
	for name, base := range httpFronts {
		path := "/n/1"
		if name != "net/http" {
			path = "/e/1"
		}
		start = time.Now()
		resp, err := hc.Post(base+path, "", nil)
		took := time.Since(start)
		if err != nil {
			t.Errorf("%s: %v after %v", name, err, took)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || took > tryBound {
			t.Errorf("%s: %d (Retry-After %q) after %v; want 503 with Retry-After within %v", name, resp.StatusCode, resp.Header.Get("Retry-After"), took, tryBound)
		}
	}

	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	req := msgType.New()
	req.Set(req.Descriptor().Fields().ByName("id"), protoreflect.ValueOfString("1"))
	start = time.Now()
	_, err = unary(cctx, req.Interface(), &grpc.UnaryServerInfo{FullMethod: method},
		func(context.Context, any) (any, error) { return nil, nil })
	if took := time.Since(start); status.Code(err) != codes.Unavailable || took > tryBound {
		t.Errorf("grpc: %v after %v; want Unavailable within %v", err, took, tryBound)
	}

	gctx, gcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer gcancel()
	start = time.Now()
	var p string
	err = crossadapter.LockedTryTouch(gctx, c, "1", &p)
	if took := time.Since(start); !errors.Is(err, zklock.ErrUnavailable) || took > tryBound {
		t.Errorf("codegen: %v after %v; want zklock.ErrUnavailable within %v", err, took, tryBound)
	}
	proxy.RejectNew(false)
}
