package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/cmd/zklock-bench/internal/bench"
	"github.com/zklockkit/zklockkit/zktest"
	"go.uber.org/goleak"
)

// tiny are sizes small enough for a test; every scenario still exercises
// its whole protocol.
func tiny() bench.Sizes {
	return bench.Sizes{Uncontended: 10, PingPong: 6, Contenders: []int{3}, ContenderOps: 12,
		QueueDepth: 12, DistinctLocks: 20, RawPairs: 10, RawParallel: 4, Floor: 5, LoneRequests: 10, Waiters: 300}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newHarness(t *testing.T) *bench.Harness {
	t.Helper()
	h, err := bench.NewHarness(testCtx(t), []string{zktest.Shared().Addr()}, zktest.UniqueRoot(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

// noLeaks checks, after every other cleanup of t, that t left no goroutine
// running.
func noLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

func TestIntegration_Run(t *testing.T) {
	noLeaks(t)
	var progress bytes.Buffer
	rep, err := bench.Run(testCtx(t), bench.Config{
		Servers: []string{zktest.Shared().Addr()}, Rounds: 2, Sizes: tiny(),
		Root: zktest.UniqueRoot(t), Progress: &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"uncontended", "ping-pong", "contenders-3", "queue-12", "distinct-20", "fresh-20", "acquire-all-20", "release-all-20", "lone-request"}
	if len(rep.Scenarios) != len(names) {
		t.Fatalf("got %d scenarios, want %v", len(rep.Scenarios), names)
	}
	for i, s := range rep.Scenarios {
		if s.Name != names[i] {
			t.Errorf("scenario %d = %q, want %q", i, s.Name, names[i])
		}
		for side, r := range map[string]bench.SideResult{"zklock": s.ZKLock, "zk.Lock": s.ZKLib} {
			if len(r.Errors) > 0 {
				t.Errorf("%s %s: errors %v", s.Name, side, r.Errors)
			}
			if len(r.Rates) != 2 || r.Rate <= 0 || r.P50 <= 0 || r.P99 < r.P50 {
				t.Errorf("%s %s: implausible result %+v", s.Name, side, r)
			}
			// The client's CPU is measured everywhere; its writes and the
			// servers' requests wherever the harness does not talk to
			// the servers during the clocked part (all but ping-pong).
			if len(r.RoundCPUPerOp) != 2 || r.CPUPerOp <= 0 {
				t.Errorf("%s %s: CPU per operation %v (rounds %v)", s.Name, side, r.CPUPerOp, r.RoundCPUPerOp)
			}
			if counted := s.Name != "ping-pong"; counted != (r.RequestsPerOp > 0 && r.WritesPerRequest > 0) {
				t.Errorf("%s %s: %.2f requests/op, %.2f writes/request", s.Name, side, r.RequestsPerOp, r.WritesPerRequest)
			}
		}
		if len(s.RoundRatios) != 2 || s.Ratio <= 0 || len(s.CPURoundRatios) != 2 || s.CPURatio <= 0 {
			t.Errorf("%s: ratios missing: %+v", s.Name, s)
		}
		if s.Wire != (s.Name == "lone-request") || (s.RawRatio > 0) == s.Wire || (s.ZKLibRawRatio > 0) == s.Wire {
			t.Errorf("%s: raw ratios %v, %v with wire %v", s.Name, s.RawRatio, s.ZKLibRawRatio, s.Wire)
		}
		if (s.CPUTarget > 0) != (s.Name == "uncontended" || s.Name == "ping-pong" || strings.HasPrefix(s.Name, "contenders-")) {
			t.Errorf("%s: CPU target %v", s.Name, s.CPUTarget)
		}
		if (s.ZKLock.WallRate > 0) != (s.Name == "ping-pong") {
			t.Errorf("%s: wall rate %v", s.Name, s.ZKLock.WallRate)
		}
	}
	if len(rep.Raw) != 2 || rep.Raw[0].Width != 1 || rep.Raw[1].Width != 4 || rep.Raw[0].Side.Rate <= 0 || rep.Raw[1].Side.Rate <= 0 {
		t.Errorf("raw = %+v", rep.Raw)
	}
	// go-zookeeper writes each request with a write of its own.
	for _, raw := range rep.Raw {
		if raw.Side.WritesPerRequest < 1 || raw.Side.CPUPerOp <= 0 {
			t.Errorf("raw %s: %.2f writes/request, CPU %v per pair", raw.Name, raw.Side.WritesPerRequest, raw.Side.CPUPerOp)
		}
	}
	if f := rep.Floor; f == nil || f.Listed.Rate <= 0 || f.Notified.P50 <= 0 || f.Listed.P50 < f.Notified.P50 ||
		f.Listed.CPUPerOp <= 0 || len(f.ZKLock.RoundRatios) != 2 || len(f.ZKLib.RoundRatios) != 2 || f.ZKLock.Ratio <= 0 {
		t.Errorf("floor = %+v", f)
	}
	if m := rep.Machine; m.Cores != runtime.NumCPU() || (runtime.GOOS == "linux" && (m.CPU == "" || m.MemoryGiB <= 0 || m.LoadMin < 0 || m.LoadMax < m.LoadMin || len(m.LoadStart) != 3 || len(m.LoadEnd) != 3)) {
		t.Errorf("machine = %+v", m)
	}
	if len(rep.Memory) != 2 || rep.Memory[0].Side != bench.NameZKLock || rep.Memory[1].Side != bench.NameZKLib {
		t.Fatalf("memory = %+v", rep.Memory)
	}
	for _, m := range rep.Memory {
		if m.Error != "" || m.Waiters != 300 || m.HeapPerWaiter <= 0 || m.GoroutinesPerWaiter < 0.9 {
			t.Errorf("memory %s = %+v", m.Side, m)
		}
	}
	zl, zk := rep.Memory[0], rep.Memory[1]
	if zl.Target != bench.MemoryTarget || zl.EnqueueTarget != bench.EnqueueTarget || zk.Target != 0 {
		t.Errorf("memory targets = %+v, %+v", zl, zk)
	}
	if want := zl.TotalPerWaiter / zk.TotalPerWaiter; zl.Ratio != want || zl.EnqueueRatio <= 0 || len(zl.EnqueueRoundRatios) != 2 {
		t.Errorf("memory ratios = %v (want %v), %v, %v", zl.Ratio, want, zl.EnqueueRatio, zl.EnqueueRoundRatios)
	}
	if rep.ZooKeeper == "" || rep.Rounds != 2 {
		t.Errorf("header = %q, %d rounds", rep.ZooKeeper, rep.Rounds)
	}

	// Every run is logged, sides alternating who goes first.
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if want := 2 * (2 + 1 + 2*len(names) + 2); len(lines) != want {
		t.Errorf("%d progress lines, want %d:\n%s", len(lines), want, progress.String())
	}
	first := func(round, scenario string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, "round "+round+"/2 "+scenario+" ") {
				return strings.Fields(l)[3]
			}
		}
		return ""
	}
	if a, b := first("1", "uncontended"), first("2", "uncontended"); a != "zklock:" || b != "zk.Lock:" {
		t.Errorf("first runs of the rounds: %q, %q; want zklock then zk.Lock", a, b)
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range append(names, "zklock ops/s", "zk.Lock ops/s", "ratio", "zklock p50/p99",
		"zk.Lock p50/p99", "target", "result", "raw Create", "memory per waiting lock", "client CPU time per operation",
		"write system calls", "against its floor") {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}

	if runtime.GOOS == "linux" {
		// The server runs on this machine: its CPU time is read from /proc.
		if !strings.Contains(table.String(), "servers' CPU") {
			t.Errorf("table lacks the servers' CPU:\n%s", table.String())
		}
		for _, s := range rep.Scenarios {
			if s.Name == "uncontended" && (s.ZKLock.ServerCPUPerOp <= 0 || s.ZKLib.ServerCPUPerOp <= 0 || s.TotalCPURatio <= 0) {
				t.Errorf("uncontended: servers' CPU per op %v and %v, client+servers ratio %v; want all > 0",
					s.ZKLock.ServerCPUPerOp, s.ZKLib.ServerCPUPerOp, s.TotalCPURatio)
			}
		}
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back bench.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not read back: %v\n%s", err, js.String())
	}
	if len(back.Scenarios) != len(rep.Scenarios) || back.Scenarios[0].ZKLock.P50 == 0 ||
		back.Scenarios[0].ZKLock.Rate != rep.Scenarios[0].ZKLock.Rate {
		t.Errorf("JSON round trip lost data: %+v", back.Scenarios[0])
	}
}

func TestIntegration_RunOnly(t *testing.T) {
	rep, err := bench.Run(testCtx(t), bench.Config{
		Servers: []string{zktest.Shared().Addr()}, Rounds: 1, Sizes: tiny(),
		Root: zktest.UniqueRoot(t), Only: []string{"uncontended"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) != 1 || rep.Scenarios[0].Name != "uncontended" || len(rep.Raw) != 0 || len(rep.Memory) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	// Without raw rates the uncontended target against them cannot pass.
	if rep.Scenarios[0].RawRatio != 0 || rep.Scenarios[0].Pass {
		t.Errorf("uncontended without raw rates: %+v", rep.Scenarios[0])
	}
}

func TestIntegration_RunNoServers(t *testing.T) {
	if _, err := bench.Run(testCtx(t), bench.Config{}); err == nil {
		t.Fatal("Run without servers succeeded")
	}
}

func TestIntegration_Scenarios(t *testing.T) {
	noLeaks(t)
	ctx := testCtx(t)
	h := newHarness(t)
	for _, side := range bench.Sides() {
		t.Run(side.Name(), func(t *testing.T) {
			check := func(name string, s bench.Sample, err error, ops int) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if s.Ops != ops || len(s.Latencies) != ops || s.Elapsed <= 0 {
					t.Errorf("%s: %d ops, %d latencies, elapsed %v; want %d ops", name, s.Ops, len(s.Latencies), s.Elapsed, ops)
				}
				for _, d := range s.Latencies {
					if d <= 0 {
						t.Errorf("%s: latency %v", name, d)
						break
					}
				}
			}
			s, err := bench.Uncontended(ctx, h, side, 5)
			check("uncontended", s, err, 5)
			s, err = bench.PingPong(ctx, h, side, 4)
			check("ping-pong", s, err, 4)
			if s.Wall < s.Elapsed {
				t.Errorf("ping-pong: wall %v shorter than the hand-offs %v", s.Wall, s.Elapsed)
			}
			s, err = bench.Contenders(ctx, h, side, 3, 10) // 4 each, rounded up
			check("contenders", s, err, 12)
			s, err = bench.Queue(ctx, h, side, 8)
			check("queue", s, err, 8)
			s, err = bench.Distinct(ctx, h, side, 9, 2)
			check("distinct", s, err, 18) // two batches of 9
			s, err = bench.Fresh(ctx, h, side, 9, 2)
			check("fresh", s, err, 18)
			for _, phase := range []bench.Phase{bench.PhaseAcquire, bench.PhaseRelease} {
				s, err = bench.HoldAll(ctx, h, side, 9, 2, phase)
				check(fmt.Sprintf("hold-all, phase %d", phase), s, err, 18)
			}
			s, err = bench.LoneRequest(ctx, h, side, 10)
			check("lone-request", s, err, 10)
			if s.CPU <= 0 || s.Requests < 10 || s.Writes < s.Requests {
				t.Errorf("lone-request: CPU %v, %d requests, %d writes", s.CPU, s.Requests, s.Writes)
			}
		})
	}
	s, err := bench.RawCreateDelete(ctx, h, 20, 4)
	if err != nil || s.Ops != 20 || len(s.Latencies) != 20 {
		t.Errorf("raw: %+v, %v", s, err)
	}
}

// A span counts exactly the requests the servers received during it: ten
// lone requests are ten requests, the four-letter words that count them
// left out. A ping of an idle session may fall in a span (one every third
// of its session timeout), so one try in three must be exact.
func TestIntegration_RequestsCounted(t *testing.T) {
	ctx := testCtx(t)
	h := newHarness(t)
	var got []int64
	for range 3 {
		s, err := bench.LoneRequest(ctx, h, bench.GoZookeeper(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if s.Requests == 10 && s.RequestsPerOp() == 1 {
			return
		}
		got = append(got, s.Requests)
	}
	t.Errorf("10 requests counted as %v", got)
}

// The floor: every hand-off is timed from the delete call until the
// notification arrived, and until the listing returned, later.
func TestIntegration_HandOffFloor(t *testing.T) {
	noLeaks(t)
	ctx := testCtx(t)
	h := newHarness(t)
	listed, notified, err := bench.HandOffFloor(ctx, h, 6)
	if err != nil {
		t.Fatal(err)
	}
	if listed.Ops != 6 || notified.Ops != 6 || len(listed.Latencies) != 6 || len(notified.Latencies) != 6 {
		t.Fatalf("listed %+v, notified %+v", listed, notified)
	}
	for i := range 6 {
		if n, l := notified.Latencies[i], listed.Latencies[i]; n <= 0 || l <= n {
			t.Errorf("hand-off %d: notified after %v, listed after %v", i, n, l)
		}
	}
	if listed.CPU <= 0 || notified.CPU != 0 || listed.Elapsed < notified.Elapsed {
		t.Errorf("listed CPU %v, elapsed %v; notified CPU %v, elapsed %v", listed.CPU, listed.Elapsed, notified.CPU, notified.Elapsed)
	}
}

func TestIntegration_MeasureWaiters(t *testing.T) {
	noLeaks(t)
	ctx := testCtx(t)
	h := newHarness(t)
	for _, side := range bench.Sides() {
		m, err := bench.MeasureWaiters(ctx, h, side, 500)
		if err != nil {
			t.Fatalf("%s: %v", side.Name(), err)
		}
		// Stacks are not checked: at this size the runtime's freeing of
		// other goroutines' stacks can outweigh the waiters' own.
		if m.Side != side.Name() || m.Waiters != 500 || m.HeapPerWaiter <= 0 || m.Enqueue <= 0 ||
			m.TotalPerWaiter != m.HeapPerWaiter+m.StackPerWaiter {
			t.Errorf("%s: %+v", side.Name(), m)
		}
		// About one goroutine per waiter. The baseline may include
		// goroutines of earlier work that end meanwhile (a client's
		// background clean-ups), so only the order of magnitude is checked.
		if m.GoroutinesPerWaiter < 0.5 || m.GoroutinesPerWaiter > 3 {
			t.Errorf("%s: %.2f goroutines per waiter", side.Name(), m.GoroutinesPerWaiter)
		}
	}
}

// A harness cleans up everything it made.
func TestIntegration_HarnessCleanup(t *testing.T) {
	ctx := testCtx(t)
	root := zktest.UniqueRoot(t)
	h, err := bench.NewHarness(ctx, []string{zktest.Shared().Addr()}, root, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bench.Distinct(ctx, h, bench.GoZookeeper(), 5, 1); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if n := countNodes(t, root); n != 0 {
		t.Errorf("%d znodes left under %s", n, root)
	}
}

// countNodes returns how many znodes lie below p.
func countNodes(t *testing.T, p string) int {
	t.Helper()
	conn, _, err := zk.Connect([]string{zktest.Shared().Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var count func(p string) int
	count = func(p string) int {
		kids, _, err := conn.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		n := len(kids)
		for _, k := range kids {
			n += count(p + "/" + k)
		}
		return n
	}
	return count(p)
}
