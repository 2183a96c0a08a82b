package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zklockkit/zklockkit/internal/adaptertest"
	zkmw "github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/zktest"
)

// BenchmarkOverhead measures the net/http middleware's overhead over a
// direct lock cycle, with its own ZooKeeper server (see
// adaptertest.Overhead for what it times and reports): a POST through a
// ServeMux route locked by the middleware, against the same request to
// an unlocked route and a direct Acquire and Release; and, for reference,
// "by-hand": a route whose handler locks the resource itself
// ("locked-over-by-hand-p50-µs" is what the middleware costs over writing
// the lock into the handler).
//
//	go test -run '^$' -bench Overhead -benchtime 2000x -count 5 ./middleware/
func BenchmarkOverhead(b *testing.B) {
	client := adaptertest.BenchServer(b)
	trivial := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux := http.NewServeMux()
	mux.Handle("POST /locked/{id}", zkmw.Lock(client, zkmw.Resource("bench/{id}"))(trivial))
	mux.Handle("POST /plain/{id}", trivial)
	mux.Handle("POST /by-hand/{id}", adaptertest.ByHand(client, "bench/1"))
	hs := httptest.NewServer(mux)
	defer hs.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer hc.CloseIdleConnections()
	adaptertest.Overhead(b, client, "bench/1", adaptertest.Post(hc, hs.URL+"/locked/1"), adaptertest.Post(hc, hs.URL+"/plain/1"),
		adaptertest.Call{Name: "by-hand", Do: adaptertest.Post(hc, hs.URL+"/by-hand/1")})
}

// BenchmarkMiddlewareCPU measures the middleware's own CPU cost, without
// network or ZooKeeper latency: requests go through the mux's ServeHTTP,
// and the Locker re-enters a lease it holds, so acquire and release are
// in-memory. The overhead is locked - plain - direct.
//
//	go test -run '^$' -bench MiddlewareCPU -benchmem ./middleware/
func BenchmarkMiddlewareCPU(b *testing.B) {
	locker := adaptertest.Reentrant(b, newClient(b, zktest.UniqueRoot(b)), "bench/cpu/1")
	trivial := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux := http.NewServeMux()
	mux.Handle("POST /locked/{id}", zkmw.Lock(locker, zkmw.Resource("bench/cpu/{id}"))(trivial))
	mux.Handle("POST /plain/{id}", trivial)
	b.Run("direct", func(b *testing.B) { adaptertest.DirectCPU(b, locker, "bench/cpu/1") })
	b.Run("locked", func(b *testing.B) { adaptertest.ServeCPU(b, mux, "/locked/1") })
	b.Run("plain", func(b *testing.B) { adaptertest.ServeCPU(b, mux, "/plain/1") })
}
