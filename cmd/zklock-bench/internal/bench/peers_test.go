package bench_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-bench/internal/bench"
	"github.com/zklockkit/zklockkit/zktest"
	"go.uber.org/goleak"
)

// The suite with the peers required: they run in the same rounds as
// zklock and zk.Lock, in the documented order, and the report compares
// them with zklock round by round.
func TestIntegration_RunPeers(t *testing.T) {
	for _, p := range bench.Peers() {
		if err := p.Installed(); err != nil {
			t.Fatal(err)
		}
	}
	// The goroutine that starts peer processes stays, locked to its
	// thread, for the life of the test binary.
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		goleak.VerifyNone(t, before, goleak.IgnoreAnyFunction("github.com/zklockkit/zklockkit/internal/procspawn.Start.func1.1"))
	})
	var progress bytes.Buffer
	names := []string{"uncontended", "ping-pong", "contenders-3", "queue-12"}
	rep, err := bench.Run(testCtx(t), bench.Config{
		Servers: []string{zktest.Shared().Addr()}, Rounds: 2, Sizes: tiny(),
		Root: zktest.UniqueRoot(t), Progress: &progress, Only: names, Peers: bench.PeersRequired,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Peers) != 2 || rep.Peers[0].Name != bench.NameCurator || rep.Peers[1].Name != bench.NameKazoo {
		t.Fatalf("peers = %+v", rep.Peers)
	}
	for _, p := range rep.Peers {
		if p.Skipped != "" || p.Version == "" || p.Runtime == "" || p.Recipe == "" {
			t.Errorf("peer info %+v", p)
		}
	}
	if len(rep.Scenarios) != len(names) {
		t.Fatalf("scenarios %+v", rep.Scenarios)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	for _, s := range rep.Scenarios {
		if s.Name == "ping-pong" {
			if len(s.Peers) != 0 {
				t.Errorf("ping-pong has peer results %+v", s.Peers)
			}
			continue
		}
		if len(s.Peers) != 2 {
			t.Errorf("%s: peer results %+v", s.Name, s.Peers)
			continue
		}
		for _, pr := range s.Peers {
			r := pr.Result
			if len(r.Errors) > 0 || len(r.Rates) != 2 || r.Rate <= 0 || r.P50 <= 0 || r.P99 < r.P50 {
				t.Errorf("%s %s: implausible %+v", s.Name, pr.Peer, r)
				continue
			}
			if !near(pr.Ratio, s.ZKLock.Rate/r.Rate) {
				t.Errorf("%s %s: ratio %v, want zklock's %v / the peer's %v", s.Name, pr.Peer, pr.Ratio, s.ZKLock.Rate, r.Rate)
			}
			if len(pr.RoundRatios) != 2 {
				t.Errorf("%s %s: round ratios %v", s.Name, pr.Peer, pr.RoundRatios)
				continue
			}
			for k, rr := range pr.RoundRatios {
				if !near(rr, s.ZKLock.Rates[k]/r.Rates[k]) {
					t.Errorf("%s %s: round %d ratio %v, want %v / %v", s.Name, pr.Peer, k+1, rr, s.ZKLock.Rates[k], r.Rates[k])
				}
			}
		}
	}

	// Round 1 runs zklock, zk.Lock, Curator, kazoo; round 2 the reverse.
	for _, tc := range []struct{ round, want string }{
		{"1", "zklock zk.Lock Curator kazoo"}, {"2", "kazoo Curator zk.Lock zklock"},
	} {
		var order []string
		for _, l := range strings.Split(progress.String(), "\n") {
			if strings.HasPrefix(l, "round "+tc.round+"/2 uncontended ") {
				order = append(order, strings.TrimSuffix(strings.Fields(l)[3], ":"))
			}
		}
		if got := strings.Join(order, " "); got != tc.want {
			t.Errorf("round %s ran %q, want %q:\n%s", tc.round, got, tc.want, progress.String())
		}
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"against Apache Curator and kazoo: Curator ", "InterProcessMutex", "kazoo ",
		"zklock/Curator", "zklock/kazoo", "Curator p50/p99", "no peer side: ping-pong"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back bench.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Peers) != 2 || len(back.Scenarios[0].Peers) != 2 || back.Scenarios[0].Peers[1].Ratio != rep.Scenarios[0].Peers[1].Ratio {
		t.Errorf("JSON round trip lost the peers: %s", js.String())
	}
}
