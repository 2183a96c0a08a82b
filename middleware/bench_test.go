package middleware_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	zkmw "github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// BenchmarkOverhead measures, interleaved in one run on uncontended
// resources:
//
//	direct:     Acquire + Release on the zklock Client with a cancellable
//	            context for Acquire and a timeout context for Release, as
//	            the middleware (and any handler honouring its request)
//	            must use
//	direct-bg:  the same with context.Background (zklock's fast path: no
//	            goroutine per ZooKeeper call), for reference
//	locked:     an HTTP request through the net/http middleware (ServeMux)
//	            to a trivial handler
//	plain:      the same HTTP request without the middleware
//
// It reports the median of each, and the middleware's own overhead as the
// median of the per-iteration differences locked - plain - direct
// ("overhead-p50-µs") and as the difference of the medians
// ("overhead-of-medians-µs"); the "-bg" variants subtract direct-bg
// instead.
//
// It runs its own ZooKeeper server with forceSync off, so that the lock's
// latency (dominated by fsync otherwise) and its jitter do not drown the
// figures of interest.
//
//	go test -run '^$' -bench Overhead -benchtime 3000x ./middleware/
func BenchmarkOverhead(b *testing.B) {
	srv, err := zktest.StartServer(zktest.WithForceSync(false))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	client := newClientAt(b, srv.Addr(), zktest.UniqueRoot(b))
	bg := context.Background()
	trivial := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux := http.NewServeMux()
	mux.Handle("POST /locked/{id}", zkmw.Lock(client, zkmw.Resource("bench/http/{id}"))(trivial))
	mux.Handle("POST /plain/{id}", trivial)
	hs := httptest.NewServer(mux)
	defer hs.Close()
	url := hs.URL
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer hc.CloseIdleConnections()
	post := func(u string) {
		resp, err := hc.Post(u, "", nil)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			b.Fatalf("%s: %d", u, resp.StatusCode)
		}
	}
	direct := func(resource string, cancellable bool) {
		actx, rctx := bg, bg
		if cancellable {
			var cancel, rcancel context.CancelFunc
			actx, cancel = context.WithCancel(bg)
			defer cancel()
			rctx, rcancel = context.WithTimeout(bg, 10*time.Second)
			defer rcancel()
		}
		l, err := client.Acquire(actx, resource)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(rctx); err != nil {
			b.Fatal(err)
		}
	}
	lockedURL, plainURL := url+"/locked/1", url+"/plain/1"
	for range 100 { // warm up connections, queue nodes, the server's JIT
		direct("bench/direct", true)
		direct("bench/direct-bg", false)
		post(lockedURL)
		post(plainURL)
	}

	var ds, bs, ls, ps, diffs, diffsBg []time.Duration
	for b.Loop() {
		t0 := time.Now()
		direct("bench/direct", true)
		t1 := time.Now()
		direct("bench/direct-bg", false)
		t2 := time.Now()
		post(lockedURL)
		t3 := time.Now()
		post(plainURL)
		t4 := time.Now()
		d, g, l, p := t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3)
		ds, bs, ls, ps = append(ds, d), append(bs, g), append(ls, l), append(ps, p)
		diffs, diffsBg = append(diffs, l-p-d), append(diffsBg, l-p-g)
	}
	md, mb, ml, mp := median(ds), median(bs), median(ls), median(ps)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(md), "direct-p50-µs")
	b.ReportMetric(us(mb), "direct-bg-p50-µs")
	b.ReportMetric(us(ml), "locked-http-p50-µs")
	b.ReportMetric(us(mp), "plain-http-p50-µs")
	b.ReportMetric(us(median(diffs)), "overhead-p50-µs")
	b.ReportMetric(us(ml-mp-md), "overhead-of-medians-µs")
	b.ReportMetric(us(median(diffsBg)), "overhead-bg-p50-µs")
	b.ReportMetric(0, "ns/op") // an iteration is four operations: see the metrics
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// reentrantLocker acquires through a lease it already holds, so every
// Acquire re-enters it (counted, no ZooKeeper round trip) and every Release
// only counts down: it isolates the CPU cost of the code around the lock.
type reentrantLocker struct {
	*zklock.Client
	held context.Context // carries the outer lease
}

func (l reentrantLocker) Acquire(ctx context.Context, r string, opts ...zklock.AcquireOption) (*zklock.Lease, error) {
	return l.Client.Acquire(valuesFrom{ctx, l.held}, r, opts...)
}

// valuesFrom is ctx with the values of v looked up first.
type valuesFrom struct {
	context.Context
	v context.Context
}

func (c valuesFrom) Value(k any) any {
	if x := c.v.Value(k); x != nil {
		return x
	}
	return c.Context.Value(k)
}

// BenchmarkMiddlewareCPU measures the middleware's own CPU cost, without
// network or ZooKeeper latency: requests go through e.ServeHTTP, and the
// Locker re-enters a lease it holds, so acquire and release are in-memory.
// The overhead is locked - plain - direct.
//
//	go test -run '^$' -bench MiddlewareCPU ./middleware/
func BenchmarkMiddlewareCPU(b *testing.B) {
	client := newClient(b, zktest.UniqueRoot(b))
	outer, err := client.Acquire(context.Background(), "bench/cpu/1")
	if err != nil {
		b.Fatal(err)
	}
	defer outer.Release(context.Background())
	locker := reentrantLocker{client, outer.Context(context.Background())}

	trivial := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	e := http.NewServeMux()
	e.Handle("POST /locked/{id}", zkmw.Lock(locker, zkmw.Resource("bench/cpu/{id}"))(trivial))
	e.Handle("POST /plain/{id}", trivial)
	serve := func(b *testing.B, target string) {
		for b.Loop() {
			// net/http cancels each request's context once it is served.
			ctx, cancel := context.WithCancel(context.Background())
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, target, nil)
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			cancel()
			if rec.Code != http.StatusNoContent {
				b.Fatalf("%s: %d %s", target, rec.Code, rec.Body)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			l, err := locker.Acquire(ctx, "bench/cpu/1")
			if err != nil {
				b.Fatal(err)
			}
			rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := l.Release(rctx); err != nil {
				b.Fatal(err)
			}
			rcancel()
			cancel()
		}
	})
	b.Run("locked", func(b *testing.B) { serve(b, "/locked/1") })
	b.Run("plain", func(b *testing.B) { serve(b, "/plain/1") })
}
