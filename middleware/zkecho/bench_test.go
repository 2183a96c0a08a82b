package zkecho_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/zklockkit/zklockkit/internal/adaptertest"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
)

// BenchmarkOverhead measures the Echo v4 adapter's overhead over a direct
// lock cycle, with its own ZooKeeper server (see adaptertest.Overhead
// for what it times and reports): a POST to an Echo route locked by the
// middleware, against the same request to an unlocked route and a
// direct Acquire and Release; and, for reference, "by-hand": a route
// whose handler locks the resource itself.
//
//	go test -run '^$' -bench Overhead -benchtime 2000x -count 5 ./middleware/zkecho/
func BenchmarkOverhead(b *testing.B) {
	client := adaptertest.BenchServer(b)
	e, url := newEcho(b)
	trivial := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	e.POST("/locked/:id", trivial, zkmw.Lock(client, zkmw.Resource("bench/{id}")))
	e.POST("/plain/:id", trivial)
	e.POST("/by-hand/:id", echo.WrapHandler(adaptertest.ByHand(client, "bench/1")))
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer hc.CloseIdleConnections()
	adaptertest.Overhead(b, client, "bench/1", adaptertest.Post(hc, url+"/locked/1"), adaptertest.Post(hc, url+"/plain/1"),
		adaptertest.Call{Name: "by-hand", Do: adaptertest.Post(hc, url+"/by-hand/1")})
}

// BenchmarkMiddlewareCPU measures the middleware's own CPU cost, without
// network or ZooKeeper latency: requests go through e.ServeHTTP, and the
// Locker re-enters a lease it holds, so acquire and release are
// in-memory. The overhead is locked - plain - direct.
//
//	go test -run '^$' -bench MiddlewareCPU -benchmem ./middleware/zkecho/
func BenchmarkMiddlewareCPU(b *testing.B) {
	locker := adaptertest.Reentrant(b, newClient(b, newRoot(b)), "bench/cpu/1")
	e := echo.New()
	trivial := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	e.POST("/locked/:id", trivial, zkmw.Lock(locker, zkmw.Resource("bench/cpu/{id}")))
	e.POST("/plain/:id", trivial)
	b.Run("direct", func(b *testing.B) { adaptertest.DirectCPU(b, locker, "bench/cpu/1") })
	b.Run("locked", func(b *testing.B) { adaptertest.ServeCPU(b, e, "/locked/1") })
	b.Run("plain", func(b *testing.B) { adaptertest.ServeCPU(b, e, "/plain/1") })
}
