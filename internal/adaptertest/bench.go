package adaptertest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// BenchServer starts a ZooKeeper server for an overhead benchmark, with
// forceSync off, so that the lock's latency (dominated by fsync
// otherwise) and its jitter do not drown the adapter's overhead, and
// returns a Client of it. Both end with the benchmark.
func BenchServer(b *testing.B) *zklock.Client {
	b.Helper()
	srv, err := zktest.StartServer(zktest.WithForceSync(false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{srv.Addr()}, zklock.WithRoot(zktest.UniqueRoot(b)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

// Call is one kind of call an overhead benchmark times.
type Call struct {
	Name string // the metric is "<Name>-p50-µs"
	Do   func(b *testing.B)
}

// Overhead measures an adapter's overhead over a direct lock cycle. Each
// iteration makes, in an order that rotates so that no kind always
// follows the same one (and a drift of ZooKeeper's latency hits them
// alike):
//
//   - direct: Acquire and Release of resource on locker, with a
//     cancellable context for Acquire and a timeout context for Release,
//     as an adapter (and any handler that honours its request) must;
//   - locked: one call through the adapter, which locks resource too;
//   - plain: the same call without the adapter;
//   - each of extra.
//
// It reports the median of each ("direct-p50-µs", ...), and the
// adapter's overhead: the median of the per-iteration differences
// locked − plain − direct ("overhead-p50-µs", the figure docs/adapters.md
// quotes), and the difference of the medians ("overhead-of-medians-µs").
// For each extra it also reports the median per-iteration difference
// locked − extra ("locked-over-<Name>-p50-µs").
func Overhead(b *testing.B, locker zklock.Locker, resource string, locked, plain func(b *testing.B), extra ...Call) {
	direct := func(b *testing.B) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		l, err := locker.Acquire(ctx, resource)
		if err != nil {
			b.Fatal(err)
		}
		rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer rcancel()
		if err := l.Release(rctx); err != nil {
			b.Fatal(err)
		}
	}
	calls := append([]Call{{"direct", direct}, {"locked", locked}, {"plain", plain}}, extra...)
	for range 100 { // warm up connections, the queue's znode, the server's JIT, the caches
		for _, c := range calls {
			c.Do(b)
		}
	}
	times := make([][]time.Duration, len(calls))
	var overhead []time.Duration
	i := 0
	for b.Loop() {
		for k := range calls {
			j := (i + k) % len(calls)
			t := time.Now()
			calls[j].Do(b)
			times[j] = append(times[j], time.Since(t))
		}
		i++
		n := len(times[0]) - 1
		overhead = append(overhead, times[1][n]-times[2][n]-times[0][n])
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	for j, c := range calls {
		b.ReportMetric(us(Median(times[j])), c.Name+"-p50-µs")
	}
	b.ReportMetric(us(Median(overhead)), "overhead-p50-µs")
	b.ReportMetric(us(Median(times[1])-Median(times[2])-Median(times[0])), "overhead-of-medians-µs")
	for j := 3; j < len(calls); j++ {
		over := make([]time.Duration, len(times[j]))
		for n := range over {
			over[n] = times[1][n] - times[j][n]
		}
		b.ReportMetric(us(Median(over)), "locked-over-"+calls[j].Name+"-p50-µs")
	}
	b.ReportMetric(0, "ns/op") // an iteration is several calls: see the metrics
}

// Median returns the median of ds (0 for none).
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// Post returns a call that posts to url with client and wants 204 No
// Content.
func Post(client *http.Client, url string) func(b *testing.B) {
	return func(b *testing.B) {
		resp, err := client.Post(url, "", nil)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			b.Fatalf("%s: %d", url, resp.StatusCode)
		}
	}
}

// Reentrant returns a Locker that acquires through a lease of resource
// that it holds (released when the benchmark ends), so that every
// Acquire of resource re-enters it (counted, no ZooKeeper round trip) and
// every Release only counts down: it isolates the CPU cost of the code
// around the lock.
func Reentrant(b *testing.B, c *zklock.Client, resource string) zklock.Locker {
	b.Helper()
	outer, err := c.Acquire(context.Background(), resource)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = outer.Release(context.Background()) })
	return reentrant{c, outer.Context(context.Background())}
}

type reentrant struct {
	*zklock.Client
	held context.Context // carries the outer lease
}

func (l reentrant) Acquire(ctx context.Context, r string, opts ...zklock.AcquireOption) (*zklock.Lease, error) {
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

// DirectCPU is the direct cycle of a CPU benchmark: Acquire and Release
// of resource on locker (a Reentrant one), with the contexts an adapter
// uses, b.N times.
func DirectCPU(b *testing.B, locker zklock.Locker, resource string) {
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		l, err := locker.Acquire(ctx, resource)
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
}

// ServeCPU serves a POST to target through h, in memory, b.N times,
// wanting 204 No Content: the locked and plain requests of a CPU
// benchmark.
func ServeCPU(b *testing.B, h http.Handler, target string) {
	b.ReportAllocs()
	for b.Loop() {
		// net/http cancels each request's context once it is served.
		ctx, cancel := context.WithCancel(context.Background())
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, target, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		cancel()
		if rec.Code != http.StatusNoContent {
			b.Fatalf("%s: %d %s", target, rec.Code, rec.Body)
		}
	}
}

// ByHand is a handler that locks resource itself, as a handler written
// without the middleware would (with the request's context, released
// with a context that outlives it), and answers 204 No Content: the
// "by-hand" call of an HTTP overhead benchmark.
func ByHand(locker zklock.Locker, resource string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lease, err := locker.Acquire(r.Context(), resource)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
		defer cancel()
		defer lease.Release(ctx)
		w.WriteHeader(http.StatusNoContent)
	})
}
