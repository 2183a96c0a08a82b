package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// Pinned sessions take the pinned servers in turn, starting over with each
// run, so both sides' runs place their sessions alike; unpinned sessions
// get the whole list.
func TestSessionPlacement(t *testing.T) {
	h := &Harness{servers: []string{"a:1", "b:1", "c:1"}, place: &placement{}}
	if got := h.sessionServers("/r1"); !slices.Equal(got, h.servers) {
		t.Fatalf("unpinned: %v", got)
	}
	h.PinSessions([]string{"b:1", "c:1"})
	var got []string
	for _, run := range []string{"/r1", "/r1", "/r1", "/r2", "/r2"} {
		got = append(got, h.sessionServers(run)...)
	}
	if want := []string{"b:1", "c:1", "b:1", "b:1", "c:1"}; !slices.Equal(got, want) {
		t.Errorf("pinned: %v, want %v", got, want)
	}
	// WithTimer's copy shares the placement.
	if got := h.WithTimer(nil).sessionServers("/r2"); !slices.Equal(got, []string{"b:1"}) {
		t.Errorf("copy: %v", got)
	}
	// A peer's sessions are placed as the Go sides' are.
	got = nil
	for _, run := range []string{"/p1", "/p1", "/p1"} {
		got = append(got, peerSessionServers(h, run))
	}
	if want := []string{"b:1", "c:1", "b:1"}; !slices.Equal(got, want) {
		t.Errorf("peers: %v, want %v", got, want)
	}
}

// A zklock or zk.Lock side's memory is compared with the other's: zklock
// passes only when its heap and stack together and its enqueue time are
// within the targets of zk.Lock's, the enqueue time judged on the rounds'
// own ratios.
func TestMemoryResults(t *testing.T) {
	run := func(total float64, enqueue time.Duration) WaiterMemory {
		return WaiterMemory{HeapPerWaiter: total / 2, StackPerWaiter: total / 2, TotalPerWaiter: total, Enqueue: Duration(enqueue)}
	}
	zk := []WaiterMemory{run(4000, 2*time.Second), run(4200, 3*time.Second), run(4100, time.Second)}
	for _, tc := range []struct {
		name string
		zl   []WaiterMemory
		pass bool
	}{
		{"lighter and faster", []WaiterMemory{run(3000, time.Second), run(3100, time.Second), run(2900, time.Second)}, true},
		{"equal", []WaiterMemory{run(4100, 2*time.Second), run(4100, 2*time.Second), run(4100, 2*time.Second)}, true},
		{"heavier", []WaiterMemory{run(4200, time.Second), run(4300, time.Second), run(4150, time.Second)}, false},
		{"slower", []WaiterMemory{run(3000, 3*time.Second), run(3000, 4*time.Second), run(3000, time.Second)}, false},
		// 1.5x, 1x and 1x zk.Lock's round by round, where the medians
		// (3 s against 2 s) would say 1.5x.
		{"slower in one round", []WaiterMemory{run(3000, 3*time.Second), run(3000, 3*time.Second), run(3000, time.Second)}, true},
		{"no runs", nil, false},
	} {
		res := memoryResults(Sides(), [][]WaiterMemory{tc.zl, zk}, [][]string{nil, nil}, 10)
		if res[0].Pass != tc.pass || !res[1].Pass {
			t.Errorf("%s: pass %v (zk.Lock %v), want %v: %+v", tc.name, res[0].Pass, res[1].Pass, tc.pass, res[0])
		}
	}
	res := memoryResults(Sides(), [][]WaiterMemory{{run(2050, time.Second)}, {run(4100, 4*time.Second)}}, [][]string{nil, nil}, 10)
	if zl := res[0]; zl.Ratio != 0.5 || zl.EnqueueRatio != 0.25 || !slices.Equal(zl.EnqueueRoundRatios, []float64{0.25}) || zl.Side != NameZKLock {
		t.Errorf("ratios: %+v", zl)
	}
	res = memoryResults(Sides(), [][]WaiterMemory{{run(2050, time.Second)}, {run(4100, 4*time.Second)}}, [][]string{{"boom"}, nil}, 10)
	if res[0].Pass {
		t.Error("a failed run passes")
	}
}

// waitNodes does not trust a znode count that stalls short of its target
// (an earlier run's nodes going away after the base was read): it lists
// the queues instead.
func TestIntegration_WaitNodesStalledCount(t *testing.T) {
	ctx, h := testHarness(t)
	side := GoZookeeper()
	root := h.newRoot("stall")
	res := resources("s", 3)
	if err := side.prepare(h, root, res); err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		for range 2 {
			if _, err := h.admin.Create(side.queuePath(root, r)+"/n-", nil, zk.FlagEphemeralSequential, openACL); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Now()
	// A base far above the count: the count can never reach it.
	if err := h.waitNodes(ctx, side, root, res, h.znodeCount()+1000, 3); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("waitNodes took %v", d)
	}
}
