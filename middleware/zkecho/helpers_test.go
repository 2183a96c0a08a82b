package zkecho_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/labstack/echo/v4"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
	"go.uber.org/goleak"
)

// newClient connects a zklock Client (one "replica") to the shared server
// under root.
func newClient(t testing.TB, root string, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	return newClientAt(t, zktest.Shared().Addr(), root, opts...)
}

func newClientAt(t testing.TB, addr, root string, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{addr}, append([]zklock.Option{zklock.WithRoot(root)}, opts...)...)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newEcho returns an Echo instance served by a real HTTP server on
// 127.0.0.1, closed at the end of the test, and the server's URL.
func newEcho(t testing.TB) (*echo.Echo, string) {
	t.Helper()
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return e, srv.URL
}

// recoverMW turns a handler panic into an error for Echo's error handler,
// like Echo's own middleware.Recover (which this module cannot import until
// golang.org/x/time is in go.mod).
func recoverMW(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				err = fmt.Errorf("[PANIC RECOVER] %v", r)
			}
		}()
		return next(c)
	}
}

var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200, MaxConnsPerHost: 0}}

// response is what a test looks at in an answer.
type response struct {
	code    int
	header  http.Header
	body    string
	message string // the JSON "message" of an error body
}

func do(t testing.TB, ctx context.Context, method, url string, header map[string]string) response {
	t.Helper()
	r, err := doErr(ctx, method, url, header)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

func doErr(ctx context.Context, method, url string, header map[string]string) (response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return response{}, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	r := response{code: resp.StatusCode, header: resp.Header, body: string(b)}
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &m) == nil {
		r.message = m.Message
	}
	return r, nil
}

// waitFor polls cond until it holds or a generous timeout passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// queueLen returns the number of nodes in resource's queue, read from
// ZooKeeper.
func queueLen(t testing.TB, c *zklock.Client, resource string) int {
	t.Helper()
	q, err := c.Inspect(context.Background(), resource)
	if err != nil {
		t.Fatalf("inspect %q: %v", resource, err)
	}
	return len(q.Nodes)
}

// assertNoLock checks that neither the client's local state nor ZooKeeper
// holds any node for resource.
func assertNoLock(t testing.TB, c *zklock.Client, resource string) {
	t.Helper()
	if ls := c.Locks(); len(ls) != 0 {
		t.Fatalf("client still has lock nodes: %+v", ls)
	}
	if n := queueLen(t, c, resource); n != 0 {
		t.Fatalf("queue of %q still has %d nodes", resource, n)
	}
}

// tree lists every znode under path (inclusive), sorted.
func tree(t testing.TB, conn *zk.Conn, path string) []string {
	t.Helper()
	nodes, err := zktest.Tree(conn, path)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// gauge tracks how many goroutines are inside a section, and the most seen.
type gauge struct{ cur, peak atomic.Int32 }

func (g *gauge) enter() int32 {
	n := g.cur.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return n
		}
	}
}

func (g *gauge) leave() { g.cur.Add(-1) }

// newRoot returns a fresh zklock root for the test.
func newRoot(t testing.TB) string { return zktest.UniqueRoot(t) }

// checkLeaks fails the test if goroutines it started outlive it (servers,
// clients and lock machinery included). Call it first: its check runs after
// every other cleanup.
func checkLeaks(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		httpClient.CloseIdleConnections()
		goleak.VerifyNone(t, opt)
	})
}
